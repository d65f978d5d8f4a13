import { minimumMinutes } from '../numbers/reading-time.js';
import { type BatchSettings, batchQuestions } from './batch.schema.js';

// The least time a batch can honestly promise (issue 49): a rater shown N comparisons reads their words at the
// batch's stated rate (`quality.readingWordsPerMinute`, the quality signals' reading floor: 500 words a minute, a fast
// skim, by default) and answers each. The README's study promised 5 minutes for 10 comparisons that raters skimming at
// 500 words a minute took 8.5-9.5 minutes to do; the consent page, the batch page and the launch checklist said
// nothing. No promise is ever below this minimum, and the launch checklist judges a platform's pay floor at it.

/** Seconds an answer to one question takes beyond reading: choosing a side, a click (a tap), the page moving on. */
export const SECONDS_PER_ANSWER = 10;
/** Seconds a required reason adds to an answer (a sentence of about fifteen words typed at 40-50 words a minute). */
export const SECONDS_PER_REQUIRED_REASON = 20;

/** Seconds a comparison's answers take beyond reading: each question, and each required reason. */
export function answerSeconds(settings: BatchSettings): number {
  return batchQuestions(settings).reduce((sum, q) => sum + SECONDS_PER_ANSWER + (q.reason === 'required' ? SECONDS_PER_REQUIRED_REASON : 0), 0);
}

export type SessionMinimum = {
  /** Whole minutes, rounded up: what a promise may never go below. */
  minutes: number;
  comparisons: number;
  wordsPerComparison: number;
  wordsPerMinute: number;
  answerSeconds: number;
};

/** The least time `comparisons` comparisons of `wordsPerComparison` words take under the batch's settings. */
export function sessionMinimum(settings: BatchSettings, wordsPerComparison: number, comparisons: number): SessionMinimum {
  const input = { wordsPerComparison, comparisons, wordsPerMinute: settings.quality.readingWordsPerMinute, answerSeconds: answerSeconds(settings) };
  // A hair under a whole minute (floating point) is that minute, not the next.
  return { ...input, minutes: Math.ceil(minimumMinutes(input) - 1e-9) };
}

/** The minimum in words, for the checklist, the batch page and `batches show`. */
export function describeMinimum(m: SessionMinimum): string {
  const words = Math.round(m.wordsPerComparison * m.comparisons).toLocaleString('en-GB');
  return `${m.comparisons} comparisons: ${words} words read at ${m.wordsPerMinute} words a minute, plus ${m.answerSeconds} s to answer each`;
}
