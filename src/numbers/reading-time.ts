// The time reading takes, written once below every feature folder (issue 49): the quality signals flag a judgment
// given faster than its words can be read (analysis/quality-signals.ts), and the time a batch promises is never less
// than reading what a rater will be shown plus a fixed time per answer (batches/minimum-time.ts).

/** The reading floor of `words` words at `wordsPerMinute`, in ms; null when the words are not known. */
export function readingFloorMs(words: number | null, wordsPerMinute: number): number | null {
  return words === null ? null : (words / wordsPerMinute) * 60_000;
}

export type MinimumTimeInput = {
  /** Mean words a rater reads in one comparison (both conversations and the context shown). */
  wordsPerComparison: number;
  comparisons: number;
  wordsPerMinute: number;
  /** Seconds an answer takes beyond reading (choosing, a required reason), per comparison. */
  answerSeconds: number;
};

/** The least time `comparisons` comparisons take, in minutes (not rounded): their words at the rate, and each answer. */
export function minimumMinutes(input: MinimumTimeInput): number {
  const comparisons = Math.max(0, input.comparisons);
  const reading = (readingFloorMs(Math.max(0, input.wordsPerComparison) * comparisons, input.wordsPerMinute) ?? 0) / 60_000;
  return reading + (comparisons * Math.max(0, input.answerSeconds)) / 60;
}
