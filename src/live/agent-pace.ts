import { countWords } from '../generation/dialogue-words.js';

// When the agent's turn is shown to its partner (issue 52: the partner must not tell an agent by its timing). A person
// reads the turn before, thinks, and types; an agent's answer arriving the moment the call returns would give it away.
// The delay follows Deliberate Lab's agents (PAIR-code/deliberate-lab, utils/src/shared.ts,
// getTypingDelayInMilliseconds: words typed at a words-per-minute pace, times a random factor of 0.75 to 1.25), with
// the reading of the partner's last turn and a moment of thought before it. Counted from the start of the turn, so
// the model call's own time is part of it, never added to it.

/** Reading pace of the partner's last turn (a usual silent reading speed; Brysbaert 2019 puts it near 240 wpm). */
const READ_WORDS_PER_MINUTE = 240;
const THINK_MS = 1_500;
/** A turn is never shown sooner than this after it began. */
const MIN_MS = 2_500;

export type PaceInput = {
  /** The agent's own turn, as it will be shown. */
  text: string;
  /** The partner's turn just before (what the agent "reads" first); empty when the agent starts. */
  partnerText: string;
  wordsPerMinute: number;
  random: () => number;
  /** The longest the delay may be: the turn's time minus a margin, so the agent never misses its turn by pacing. */
  capMs: number;
};

/** Milliseconds from the start of the agent's turn to the moment its partner sees it. */
export function agentTurnDelayMs(input: PaceInput): number {
  const typing = (countWords(input.text) / input.wordsPerMinute) * 60_000;
  const reading = (countWords(input.partnerText) / READ_WORDS_PER_MINUTE) * 60_000;
  const factor = 0.75 + input.random() * 0.5;
  const delay = Math.max(MIN_MS, (THINK_MS + reading + typing) * factor);
  return Math.round(Math.min(delay, Math.max(MIN_MS, input.capMs)));
}
