import type { BatchSettings } from '../batches/batch.schema.js';
import type { CharacterRow } from '../scenarios/scenario.queries.js';
import { characterFacts } from '../scenarios/character-facts.js';
import { type ChatMessage, characterName } from './dialogue-text.js';
import type { DialogueCast } from './export.queries.js';

/** Which prompt the preferences export writes: what raters saw (default), or the SCRIPT generation prompt. */
export const PREFERENCE_PROMPTS = ['rater', 'script'] as const;
export type PreferencePrompt = (typeof PREFERENCE_PROMPTS)[number];

export const PREFERENCE_PROMPT_DESCRIPTIONS: Record<PreferencePrompt, string> = {
  rater:
    'what the raters saw: the situation (system) and the characters as the batch showed them (user): profiles without secrets, goals only when the batch showed goals',
  script: "the omniscient SCRIPT generation prompt: the scenario (system) and both characters' profiles, secrets and goals (user)",
};

function shownProfile(c: CharacterRow, goal: string | null): string {
  // The fields and their order of the rater page's context (views/rater/partials/context.ejs), without the secret.
  const facts = characterFacts(c);
  const lines = [characterName(c)];
  if (facts) lines.push(facts);
  if (c.public_info) lines.push(c.public_info);
  if (c.personality_and_values) lines.push(`Personality and values: ${c.personality_and_values}`);
  if (c.decision_making_style) lines.push(`Decision-making style: ${c.decision_making_style}`);
  if (goal) lines.push(`Goal: ${goal}`);
  return lines.join('\n');
}

/**
 * The context a rater saw beside a pair, as chat messages: the situation as the system message, the characters as the
 * user message. Secrets never enter it (a DPO prompt that leaks both secrets teaches the omniscient setting even when
 * the chosen dialogue was played by agents who did not know them); goals only when the batch's context showed them.
 */
export function raterPrompt(cast: DialogueCast, context: BatchSettings['context']): ChatMessage[] {
  const [first, second] = cast.characters;
  const withGoals = context === 'scenario+profiles+goals';
  const user =
    context === 'scenario'
      ? `The conversation between ${characterName(first)} and ${characterName(second)}.`
      : [shownProfile(first, withGoals ? cast.scenario.goal_1 : null), shownProfile(second, withGoals ? cast.scenario.goal_2 : null)].join('\n\n');
  return [
    { role: 'system', content: `The situation: ${cast.scenario.context}` },
    { role: 'user', content: user },
  ];
}
