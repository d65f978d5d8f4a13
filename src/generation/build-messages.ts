import { agentViewer, renderMarkup } from '../scenarios/goal-markup.js';
import type { Relationship } from '../scenarios/scenario.schema.js';
import type { CharacterRow, ScenarioRow } from '../scenarios/scenario.queries.js';
import type { ChatMessage } from './llm-client.js';
import type { Action } from './mode.js';
import { type PromptSet, fillTemplate } from './prompts.js';
import { parseJsonColumn } from '../db/json-column.js';
import { characterValuesSchema } from './run-columns.schema.js';

// What each call sees. This is the heart of the study (Zhou et al. 2024, §3): SCRIPT is omniscient,
// AGENTS is information-asymmetric, MINDREADERS sees the partner's private information too.

export type SpokenTurn = { speaker: 1 | 2; action: Action; text: string };

/** How much of a character a call may see. */
export type Visibility = 'full' | 'all_but_secret' | 'public' | 'name' | 'nothing';

/**
 * What the relationship lets a character know of the partner, as in Sotopia's code
 * (sotopia/envs/parallel.py, _map_gender_to_adj / get_bio with relationship-based hiding).
 */
export function partnerVisibility(relationship: Relationship): Visibility {
  switch (relationship) {
    case 'stranger':
      return 'nothing';
    case 'know_by_name':
      return 'name';
    case 'acquaintance':
      return 'public';
    default:
      return 'all_but_secret';
  }
}

export function fullName(c: Pick<CharacterRow, 'first_name' | 'last_name'>): string {
  return `${c.first_name} ${c.last_name}`.trim();
}

/** Ends a piece of profile text with one full stop, whatever punctuation it came with. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** Sotopia's _map_gender_to_adj: "a 71-year-old female retired librarian", not "a ... woman retired librarian". */
function genderAdjective(gender: string): string {
  const g = gender.trim().toLowerCase();
  return g === 'man' ? 'male' : g === 'woman' ? 'female' : g;
}

/** A background in prose, holding only what the visibility allows. */
export function describeBackground(c: CharacterRow, visibility: Visibility): string {
  if (visibility === 'nothing' || visibility === 'name') return 'Unknown';
  const name = fullName(c);
  const parts: string[] = [];
  const who = [c.age === null ? '' : `${c.age}-year-old`, genderAdjective(c.gender), c.occupation.toLowerCase()].filter(Boolean).join(' ');
  parts.push(who ? `${name} is a ${who}.` : `${name}.`);
  if (c.pronouns) parts.push(sentence(`Pronouns: ${c.pronouns}`));
  if (c.public_info) parts.push(sentence(`Public info: ${c.public_info}`));
  if (visibility === 'public') return parts.join(' ');
  if (c.personality_and_values) parts.push(sentence(`Personality and values: ${c.personality_and_values}`));
  if (c.big_five) parts.push(sentence(`Big Five: ${c.big_five}`));
  const moral = parseJsonColumn(characterValuesSchema, c.moral_values, 'characters.moral_values');
  if (moral.length > 0) parts.push(sentence(`Moral values: ${moral.join(', ')}`));
  const schwartz = parseJsonColumn(characterValuesSchema, c.schwartz_values, 'characters.schwartz_values');
  if (schwartz.length > 0) parts.push(sentence(`Personal values: ${schwartz.join(', ')}`));
  if (c.decision_making_style) parts.push(sentence(`Decision-making style: ${c.decision_making_style}`));
  if (visibility === 'full' && c.secret) parts.push(sentence(`Secret: ${c.secret}`));
  return parts.join(' ');
}

/** One line of the conversation so far, in Sotopia's wording. */
export function describeTurn(idx: number, name: string, turn: SpokenTurn): string {
  const what =
    turn.action === 'speak'
      ? `said: "${turn.text}"`
      : turn.action === 'non-verbal'
        ? `[non-verbal communication] ${turn.text}`
        : turn.action === 'action'
          ? `[action] ${turn.text}`
          : turn.action === 'none'
            ? 'did nothing'
            : 'left the conversation';
  return `Turn #${idx}: ${name} ${what}`;
}

export type Cast = { scenario: ScenarioRow; characters: [CharacterRow, CharacterRow] };

export function scriptMessages(prompts: PromptSet, cast: Cast, maxTurns: number): ChatMessage[] {
  const [c1, c2] = cast.characters;
  // The omniscient writer sees every viewer's part of Sotopia's goal markup, without the tags.
  const content = fillTemplate(prompts.templates.script, {
    max_turns: maxTurns,
    scenario: renderMarkup(cast.scenario.context, 'environment'),
    name_1: fullName(c1),
    name_2: fullName(c2),
    background_1: describeBackground(c1, 'full'),
    background_2: describeBackground(c2, 'full'),
    goal_1: renderMarkup(cast.scenario.goal_1, 'environment'),
    goal_2: renderMarkup(cast.scenario.goal_2, 'environment'),
  });
  return [{ role: 'user', content }];
}

/** The messages of one AGENTS or MINDREADERS turn for character `self` (1 or 2). */
export function agentMessages(
  prompts: PromptSet,
  cast: Cast,
  mode: 'AGENTS' | 'MINDREADERS',
  self: 1 | 2,
  history: SpokenTurn[],
): ChatMessage[] {
  const me = cast.characters[self - 1] as CharacterRow;
  const partner = cast.characters[2 - self] as CharacterRow;
  const visibility: Visibility = mode === 'MINDREADERS' ? 'full' : partnerVisibility(cast.scenario.relationship);
  const selfName = fullName(me);
  // A stranger's name is not known; the partner is then "the other person" everywhere in the call.
  const partnerLabel = visibility === 'nothing' ? 'The other person' : fullName(partner);
  // Goal markup is rendered for this character as Sotopia renders it (render_text_for_agent): the partner's goal,
  // where MINDREADERS shows it, too is what this viewer may see of it.
  const viewer = agentViewer(self);
  const selfGoal = renderMarkup(self === 1 ? cast.scenario.goal_1 : cast.scenario.goal_2, viewer);
  const partnerGoal = renderMarkup(self === 1 ? cast.scenario.goal_2 : cast.scenario.goal_1, viewer);
  const lines = history.map((turn, idx) => describeTurn(idx, turn.speaker === self ? selfName : partnerLabel, turn));
  const content = fillTemplate(prompts.templates.agent, {
    self_name: selfName,
    partner_label: partnerLabel,
    partner_in_text: visibility === 'nothing' ? 'the other person' : partnerLabel,
    scenario: renderMarkup(cast.scenario.context, viewer),
    self_background: describeBackground(me, 'full'),
    partner_background: describeBackground(partner, visibility),
    self_goal: selfGoal,
    // Sotopia shows "Unknown" for the partner's goal in AGENTS mode.
    partner_goal: mode === 'MINDREADERS' ? partnerGoal : 'Unknown',
    history: lines.length > 0 ? lines.join('\n') : '(nothing yet: you start the conversation)',
    turn: history.length,
  });
  return [{ role: 'user', content }];
}
