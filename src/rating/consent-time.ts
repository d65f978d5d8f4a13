// The time promised at consent (issue 14): Prolific asks for an accurate time and fair pay per hour, so the promise
// must not be pulled down by fast test clicks or gold answers. Until enough raters have finished, the researcher's
// own estimate stands; after that, the median of finished raters' total active time on regular comparisons, and
// never less than the time needed just to read what this rater will be shown.

/** Finished raters needed before measured times replace the researcher's estimate. */
export const MIN_COMPLETED_RATERS = 10;
/** Reading speed assumed for the floor (words per minute). */
export const READING_WORDS_PER_MINUTE = 250;

export type ConsentTimeInput = {
  /** The batch's `estimatedMinutes`. */
  estimatedMinutes: number;
  /** Completed, not excluded raters with a timed regular answer (screened-out raters left out). */
  completedRaters: number;
  /** The median of those raters' total active time (ms) on regular comparisons; null when there are none. */
  medianTotalMs: number | null;
  /** Mean words a rater reads in one regular comparison (both conversations and the context shown). */
  wordsPerComparison: number;
  /** Comparisons this rater is promised. */
  comparisons: number;
};

export type ConsentTime = {
  minutes: number;
  /** Where the figure comes from: the researcher's estimate, the measured median, or the reading-time floor. */
  source: 'estimate' | 'measured' | 'reading';
  /** Completed raters whose times were used (or available, while the estimate stands). */
  completedRaters: number;
  /** Minutes needed just to read what the rater will be shown. */
  readingMinutes: number;
};

/** Minutes to promise at consent, rounded up to whole minutes. */
export function estimateConsentTime(input: ConsentTimeInput): ConsentTime {
  const readingMinutes = Math.ceil((Math.max(0, input.wordsPerComparison) * Math.max(0, input.comparisons)) / READING_WORDS_PER_MINUTE);
  const completedRaters = input.completedRaters;
  if (completedRaters < MIN_COMPLETED_RATERS) return { minutes: input.estimatedMinutes, source: 'estimate', completedRaters, readingMinutes };
  const measured = Math.max(1, Math.ceil((input.medianTotalMs ?? 0) / 60_000));
  if (readingMinutes > measured) return { minutes: readingMinutes, source: 'reading', completedRaters, readingMinutes };
  return { minutes: measured, source: 'measured', completedRaters, readingMinutes };
}
