import { characterName } from './dialogue-text.js';
import { type DialogueParts, iterateDialogueParts } from './dialogues-export.js';
import type { ExportContext } from './export-context.js';
import type { TurnRow } from '../generation/dialogue.queries.js';
import { writeChunk } from './stream-write.js';

import { agentViewer, renderMarkup } from '../scenarios/goal-markup.js';
import type { CharacterRow } from '../scenarios/scenario.queries.js';
import type { Relationship } from '../scenarios/scenario.schema.js';
import { type Mode, singleWriter, writerKnowledge } from '../generation/mode.js';

// Dialogues as Sotopia EpisodeLog records (sotopia/database/logs.py): environment and agents are the scenario and
// character slugs, or the Sotopia pks an imported episode named; messages are arranged by turn as (sender, receiver,
// text) with the environment's opening observation to each agent first, and action texts use Sotopia's own wording
// (`said: "..."`, `[non-verbal communication] ...`, `did nothing`, `left the conversation`).
// Each observation says what that mode's calls really saw, in the words of Sotopia's ScriptBackground: SCRIPT (one
// omniscient writer) and MINDREADERS saw both full backgrounds and both goals; AGENTS saw its own full background and
// goal, of the partner what the relationship allows (Sotopia's get_bio) and the goal "Unknown". The human modes are
// shown what their people saw: HUMAN_SCRIPT's writer what SCRIPT's call sees, HUMANS and HUMAN_AGENT each side what an
// AGENTS call sees. Goal markup is
// rendered for each agent as Sotopia's render_text_for_agent does.
// simarena measures human preference, not Sotopia's per-agent rewards: an imported episode's rewards, reasoning,
// models and tag are given back; otherwise `rewards` holds 0.0 placeholders (EpisodeLog requires one per agent) and
// `rewards_known` says so.

function actionText(turn: TurnRow): string {
  switch (turn.action) {
    case 'speak':
      return `said: "${turn.text}"`;
    case 'non-verbal':
      return `[non-verbal communication] ${turn.text}`;
    case 'action':
      return `[action] ${turn.text}`;
    case 'none':
      return 'did nothing';
    case 'leave':
      return 'left the conversation';
  }
}

type Meta = { rewards?: unknown; reasoning?: unknown; models?: unknown; tag?: unknown; rewards_prompt?: unknown; environment_pk?: unknown; agent_pks?: unknown };

function readMeta(text: string): Meta {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Meta) : {};
  } catch {
    return {};
  }
}

const isStrings = (value: unknown, length: number): value is string[] =>
  Array.isArray(value) && value.length === length && value.every((v) => typeof v === 'string');

function genderAdjective(gender: string): string {
  const g = gender.trim().toLowerCase();
  return g === 'man' ? 'male' : g === 'woman' ? 'female' : g;
}

type Seen = 'full' | 'all_but_secret' | 'public' | 'name' | 'nothing';

/** A background in the words of Sotopia's get_bio, cut where the viewer's knowledge ends. */
function sotopiaBackground(c: CharacterRow, seen: Seen): string {
  if (seen === 'nothing') return '';
  const name = characterName(c);
  if (seen === 'name') return name;
  const who = [c.age === null ? '' : `${c.age}-year-old`, genderAdjective(c.gender), c.occupation.toLowerCase()].filter(Boolean).join(' ');
  const parts = [who ? `${name} is a ${who}.` : `${name}.`];
  if (c.pronouns) parts.push(`${c.pronouns} pronouns.`);
  if (c.public_info) parts.push(c.public_info);
  if (seen === 'public') return parts.join(' ');
  parts.push(`Personality and values description: ${c.personality_and_values}`);
  if (seen === 'full') parts.push(`${c.first_name}'s secrets: ${c.secret}`);
  return parts.join(' ');
}

function partnerSeen(mode: Mode, relationship: Relationship): Seen {
  if (writerKnowledge(mode) === 'omniscient') return 'full';
  if (relationship === 'stranger') return 'nothing';
  if (relationship === 'know_by_name') return 'name';
  if (relationship === 'acquaintance') return 'public';
  return 'all_but_secret';
}

/** What character `self` (1 or 2) was shown at the start, in Sotopia's ScriptBackground wording. */
export function openingObservation(cast: DialogueParts['cast'], mode: Mode, self: 1 | 2): string {
  const names = cast.characters.map(characterName) as [string, string];
  const viewer = singleWriter(mode) ? 'environment' : agentViewer(self);
  const goals = [cast.scenario.goal_1, cast.scenario.goal_2];
  const seenOf = (i: 1 | 2): Seen => (i === self ? 'full' : partnerSeen(mode, cast.scenario.relationship));
  const goalOf = (i: 1 | 2): string => (i === self || writerKnowledge(mode) === 'omniscient' ? renderMarkup(goals[i - 1] ?? '', viewer) : 'Unknown');
  return [
    'Here is the context of this interaction:',
    `Scenario: ${renderMarkup(cast.scenario.context, viewer)}`,
    `Participants: ${names[0]} and ${names[1]}`,
    `${names[0]}'s background: ${sotopiaBackground(cast.characters[0], seenOf(1))}`,
    `${names[1]}'s background: ${sotopiaBackground(cast.characters[1], seenOf(2))}`,
    `${names[0]}'s goal: ${goalOf(1)}`,
    `${names[1]}'s goal: ${goalOf(2)}`,
  ].join('\n');
}

export function episodeRecord(ctx: ExportContext, { row, cast, turns }: DialogueParts) {
  const names = cast.characters.map(characterName) as [string, string];
  const opening = names.map((name, i) => ['Environment', name, openingObservation(cast, row.mode, (i + 1) as 1 | 2)]);
  const meta = readMeta(row.meta);
  const rewards = Array.isArray(meta.rewards) && meta.rewards.length === 2 ? (meta.rewards as unknown[]) : null;
  return {
    pk: `simarena-${ctx.batch.id}-${row.id}`,
    environment: typeof meta.environment_pk === 'string' ? meta.environment_pk : cast.scenario.id,
    agents: isStrings(meta.agent_pks, 2) ? meta.agent_pks : cast.characters.map((c) => c.id),
    // Sotopia marks script-mode episodes with "script" among the tag's underscore-separated words.
    tag: typeof meta.tag === 'string' ? meta.tag : `simarena_${row.mode.toLowerCase()}`,
    models: isStrings(meta.models, 3) ? meta.models : ['', row.model, row.model],
    messages: [opening, ...turns.map((t) => [[names[t.speaker - 1] ?? `Character ${t.speaker}`, 'Environment', actionText(t)]])],
    reasoning: typeof meta.reasoning === 'string' ? meta.reasoning : '',
    rewards: rewards ?? [0.0, 0.0],
    rewards_prompt: typeof meta.rewards_prompt === 'string' ? meta.rewards_prompt : '',
    simarena: {
      dialogue_id: row.id,
      run_id: row.run_id,
      run_name: row.run_name,
      mode: row.mode,
      model: row.model,
      condition: `${row.mode}:${row.model}`,
      rewards_known: rewards !== null,
    },
  };
}

/** One JSON object: `simarena` (the export's provenance) and `episodes`, written one episode at a time. */
export async function writeSotopia(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  await writeChunk(out, `{"simarena":${JSON.stringify(ctx.meta)},\n"episodes":[`);
  let rows = 0;
  for (const parts of iterateDialogueParts(ctx)) {
    await writeChunk(out, `${rows === 0 ? '\n' : ',\n'}${JSON.stringify(episodeRecord(ctx, parts))}`);
    rows++;
  }
  await writeChunk(out, rows === 0 ? ']}\n' : '\n]}\n');
  return rows;
}
