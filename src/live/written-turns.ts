import type { WritingSettings } from '../batches/batch.schema.js';
import { findContactDetails } from './contact-details.js';
import type { DraftTurnInput } from './write.schema.js';

// A writer's draft (issue 53): what is kept of each save, and whether the conversation can be handed in. Pure.

/** A turn as stored in write_drafts.draft: the page's turn, its text tidied, with when the server first and last saw it. */
export type DraftTurn = Omit<DraftTurnInput, 'text'> & { text: string; started_at: string; edited_at: string };

const tidy = (text: string) => text.trim().replace(/\s+/g, ' ');

/**
 * The draft after a save: each turn's text tidied, and its times kept from the turn at the same place in the stored
 * draft while its text is unchanged (started_at: the first save that held it; edited_at: the last that changed it).
 */
export function mergeDraft(stored: readonly DraftTurn[], incoming: readonly DraftTurnInput[], now: Date): DraftTurn[] {
  const at = now.toISOString();
  return incoming.map((turn, i) => {
    const before = stored[i];
    const text = tidy(turn.text);
    const same = before !== undefined && before.text === text && before.speaker === turn.speaker && before.action === turn.action;
    return { ...turn, text, started_at: before?.started_at ?? at, edited_at: same ? before.edited_at : at };
  });
}

/** Turns that count toward the minimum: what a character says or does (a "leave" only ends the conversation). */
export function spokenTurns(turns: readonly Pick<DraftTurn, 'action'>[]): number {
  return turns.filter((t) => t.action !== 'leave').length;
}

/**
 * Why this draft cannot be handed in, in words for the writer, or null when it can: the batch's minimum and maximum
 * of turns, character 1 first (as in every mode: src/README.md, Cast), every turn but a leave written, a leave last,
 * no contact details.
 */
export function draftProblem(turns: readonly DraftTurn[], writing: WritingSettings, names: readonly [string, string]): string | null {
  if (turns.length > writing.maxTurns) return `The conversation has ${turns.length} turns; it may have at most ${writing.maxTurns}. Remove ${turns.length - writing.maxTurns}.`;
  const spoken = spokenTurns(turns);
  if (spoken < writing.minTurns) return `The conversation needs at least ${writing.minTurns} turns in which someone says or does something; it has ${spoken}.`;
  if (turns[0]?.speaker !== 1) return `${names[0]} begins the conversation: make the first turn theirs.`;
  const empty = turns.findIndex((t) => t.action !== 'leave' && t.text === '');
  if (empty >= 0) return `Turn ${empty + 1} is empty: write what ${names[(turns[empty]?.speaker ?? 1) - 1]} says or does, or remove the turn.`;
  const leave = turns.findIndex((t) => t.action === 'leave');
  if (leave >= 0 && leave !== turns.length - 1) return `Turn ${leave + 1} leaves the conversation, so it must be the last turn.`;
  // What is handed in is shown to raters and shared: no ways to reach a person (the role-play chat's rule).
  const contact = turns.findIndex((t) => findContactDetails(t.text) !== null);
  if (contact >= 0) return `Turn ${contact + 1} holds a web link, an e-mail address or a phone number: please leave contact details out of the conversation.`;
  return null;
}
