import type { ShownTurn } from './player-view.js';
import type { PlayerOutcome } from './live.queries.js';

// What a player's page is sent on its event stream. Every event has the same shape whoever the partner is: a turn of
// the agent is a turn like a person's, and no event says who or what plays the other side.

export type LiveEvent =
  /** Go to the page of this step (matched, ended for good, nothing more to do). */
  | { type: 'go'; to: 'play' | 'done' }
  /** A turn of either character. */
  | ({ type: 'turn' } & ShownTurn)
  /** Whose turn it is now, and how long it has left. */
  | { type: 'state'; next: 1 | 2; secondsLeft: number; taken: number; max: number }
  /** A character let their turn pass without taking it. */
  | { type: 'missed'; speaker: 1 | 2; name: string }
  /** The dialogue ended; `message` says why, in words that do not tell a person from an agent. */
  | { type: 'ended'; message: string }
  /** The page was opened again elsewhere; this one stops. */
  | { type: 'elsewhere' };

/** What a player is told when their dialogue ends, by their outcome. */
export function endMessage(outcome: PlayerOutcome): string {
  switch (outcome) {
    case 'finished':
      return 'The conversation is over. Please answer two short questions to finish.';
    case 'partner_left':
      return 'The conversation has ended early: your partner is no longer in it. This is not your fault, and you will be paid in full. Please answer two short questions to finish.';
    case 'timed_out':
      return 'The conversation has ended because you let two turns in a row pass without answering. Please answer two short questions to finish.';
    case 'left_early':
      return 'You left the conversation before it had its minimum number of turns, so it has ended. Please answer two short questions to finish.';
    case 'reported':
      return 'Thank you for your report: the conversation has ended and the researchers will look at it. Please answer two short questions to finish.';
    case 'was_reported':
      return 'The conversation has ended. Please answer two short questions to finish.';
    default:
      return 'The conversation has ended.';
  }
}
