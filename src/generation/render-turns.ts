import type { Action } from './mode.js';

// One rendering for raters, whatever the mode: nothing in the formatting may reveal how a dialogue was made.
// Turns in which a character does nothing are dropped in every mode; leaving, non-verbal communication and
// physical actions read the same everywhere.

export type RaterTurn = { speaker: 1 | 2; name: string; kind: Exclude<Action, 'none'>; text: string; display: string };

export function renderTurnForRater(turn: { speaker: 1 | 2; action: Action; text: string }, name: string): RaterTurn | null {
  const text = turn.text.trim().replace(/\s+/g, ' ');
  switch (turn.action) {
    case 'none':
      return null;
    case 'speak':
      return { speaker: turn.speaker, name, kind: 'speak', text, display: text };
    case 'non-verbal':
      return { speaker: turn.speaker, name, kind: 'non-verbal', text, display: `[non-verbal] ${text}` };
    case 'action':
      return { speaker: turn.speaker, name, kind: 'action', text, display: `[action] ${text}` };
    case 'leave':
      return { speaker: turn.speaker, name, kind: 'leave', text: '', display: '[leaves the conversation]' };
  }
}

/** The turns a rater sees, in order; `names` are the two characters' display names (character 1 first). */
export function renderTurnsForRater(turns: readonly { speaker: 1 | 2; action: Action; text: string }[], names: [string, string]): RaterTurn[] {
  const out: RaterTurn[] = [];
  for (const turn of turns) {
    const rendered = renderTurnForRater(turn, names[turn.speaker - 1] ?? '');
    // A speak/non-verbal/action turn with no text shows nothing either.
    if (rendered && (rendered.kind === 'leave' || rendered.text !== '')) out.push(rendered);
  }
  return out;
}
