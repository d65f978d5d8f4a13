import type { Db } from '../db/connection.js';
import { fullName, partnerVisibility, type Visibility } from '../generation/build-messages.js';
import { type RaterTurn, renderTurnsForRater } from '../generation/render-turns.js';
import { agentViewer, renderMarkup } from '../scenarios/goal-markup.js';
import { characterFacts } from '../scenarios/character-facts.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import type { LiveTurn } from './live.queries.js';

// What one player of a live dialogue sees: what an AGENTS-mode call sees for its character (src/generation/
// build-messages.ts, agentMessages), as a page. The scenario and their own goal rendered for their viewer, their own
// profile with its secret, and of the partner only what the relationship lets them know (Sotopia: a stranger nothing,
// know by name the name, an acquaintance the public part, a friend or closer all but the secret); the partner's goal
// never (Sotopia's "Unknown"). Nothing here says whether the partner is a person or an agent.

export type ProfileView = {
  name: string;
  facts: string;
  publicInfo: string;
  personality: string;
  decisionStyle: string;
  /** Only on the player's own profile. */
  secret: string;
};

export type PlayerView = {
  scenario: { title: string; context: string };
  character: 1 | 2;
  self: ProfileView & { goal: string };
  /** The partner as the relationship shows them; `known` false: nothing but how they are called. */
  partner: { label: string; known: boolean; profile: ProfileView | null };
  /** How each character is named in the transcript, character 1 first (the partner under their label). */
  names: [string, string];
};

function profileOf(c: CharacterRow, visibility: Visibility): ProfileView {
  const facts = characterFacts(c);
  const publicPart = visibility === 'full' || visibility === 'all_but_secret' || visibility === 'public';
  const privatePart = visibility === 'full' || visibility === 'all_but_secret';
  return {
    name: fullName(c),
    facts: publicPart ? facts : '',
    publicInfo: publicPart ? c.public_info : '',
    personality: privatePart ? c.personality_and_values : '',
    decisionStyle: privatePart ? c.decision_making_style : '',
    secret: visibility === 'full' ? c.secret : '',
  };
}

/** The page of character `character` of a dialogue's scenario and cast; null when they are no longer in the library. */
export function buildPlayerView(db: Db, dialogue: { scenario_id: string; cast_id: number }, character: 1 | 2): PlayerView | null {
  const scenario = getScenario(db, dialogue.scenario_id);
  const cast = getCast(db, dialogue.cast_id);
  const c1 = cast ? getCharacter(db, cast.character_1_id) : undefined;
  const c2 = cast ? getCharacter(db, cast.character_2_id) : undefined;
  if (!scenario || !c1 || !c2) return null;
  const me = character === 1 ? c1 : c2;
  const other = character === 1 ? c2 : c1;
  const viewer = agentViewer(character);
  const visibility = partnerVisibility(scenario.relationship);
  const known = visibility !== 'nothing';
  const label = known ? fullName(other) : 'The other person';
  const selfName = fullName(me);
  return {
    scenario: { title: scenario.title, context: renderMarkup(scenario.context, viewer) },
    character,
    self: { ...profileOf(me, 'full'), goal: renderMarkup(character === 1 ? scenario.goal_1 : scenario.goal_2, viewer) },
    partner: { label, known, profile: visibility === 'nothing' || visibility === 'name' ? null : profileOf(other, visibility) },
    names: character === 1 ? [selfName, label] : [label, selfName],
  };
}

/** A turn as the player's page shows it, with its index (the event id a reconnecting page resumes after). */
export type ShownTurn = RaterTurn & { idx: number };

/** Turns as the player reads them: the raters' rendering (no turn differs in form by who wrote it), under the player's names. */
export function turnsForPlayer(turns: readonly LiveTurn[], names: [string, string]): ShownTurn[] {
  const shown: ShownTurn[] = [];
  for (const turn of turns) {
    const [rendered] = renderTurnsForRater([turn], names);
    if (rendered) shown.push({ ...rendered, idx: turn.idx });
  }
  return shown;
}

/** What a writer of a writing batch sees (issue 53): what SCRIPT's model is given (scriptMessages), as a page. */
export type WriterView = {
  scenario: { title: string; context: string };
  /** Character 1 then character 2: each one's whole profile, goal and secret. */
  characters: [ProfileView & { goal: string }, ProfileView & { goal: string }];
  names: [string, string];
};

/**
 * The omniscient writer's page of a scenario cast: the scenario and both goals rendered for the viewer "environment"
 * (every part of Sotopia's goal markup, tags removed, as scriptMessages renders them) and both full profiles with
 * their secrets. Null when the cast is no longer in the library.
 */
export function buildWriterView(db: Db, draft: { scenario_id: string; cast_id: number }): WriterView | null {
  const scenario = getScenario(db, draft.scenario_id);
  const cast = getCast(db, draft.cast_id);
  const c1 = cast ? getCharacter(db, cast.character_1_id) : undefined;
  const c2 = cast ? getCharacter(db, cast.character_2_id) : undefined;
  if (!scenario || !c1 || !c2) return null;
  return {
    scenario: { title: scenario.title, context: renderMarkup(scenario.context, 'environment') },
    characters: [
      { ...profileOf(c1, 'full'), goal: renderMarkup(scenario.goal_1, 'environment') },
      { ...profileOf(c2, 'full'), goal: renderMarkup(scenario.goal_2, 'environment') },
    ],
    names: [fullName(c1), fullName(c2)],
  };
}
