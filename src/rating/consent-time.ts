// The time promised at consent (issue 14): Prolific asks for an accurate time and fair pay per hour, so the promise
// must not be pulled down by fast test clicks or gold answers. Until enough raters have finished, the researcher's
// own estimate stands; after that, the median of finished raters' total active time on regular comparisons. Neither
// is ever less than the least time the comparisons take: their words at the batch's stated reading rate plus a fixed
// time per answer (issue 49; batches/minimum-time.ts).

/** Finished raters needed before measured times replace the researcher's estimate. */
export const MIN_COMPLETED_RATERS = 10;

export type ConsentTimeInput = {
  /** The batch's `estimatedMinutes`. */
  estimatedMinutes: number;
  /** Completed, not excluded raters with a timed regular answer (screened-out raters left out). */
  completedRaters: number;
  /** The median of those raters' total active time (ms) on regular comparisons; null when there are none. */
  medianTotalMs: number | null;
  /** The least time the rater's comparisons take, in whole minutes (batches/minimum-time.ts). */
  minimumMinutes: number;
};

export type ConsentTime = {
  minutes: number;
  /** Where the figure comes from: the researcher's estimate, the measured median, or the least time the comparisons take. */
  source: 'estimate' | 'measured' | 'minimum';
  /** Completed raters whose times were used (or available, while the estimate stands). */
  completedRaters: number;
  /** The least time the comparisons take, in whole minutes. */
  minimumMinutes: number;
};

/** Minutes to promise at consent, in whole minutes. */
export function estimateConsentTime(input: ConsentTimeInput): ConsentTime {
  const minimumMinutes = Math.max(0, input.minimumMinutes);
  const completedRaters = input.completedRaters;
  const stated =
    completedRaters < MIN_COMPLETED_RATERS
      ? { minutes: input.estimatedMinutes, source: 'estimate' as const }
      : { minutes: Math.max(1, Math.ceil((input.medianTotalMs ?? 0) / 60_000)), source: 'measured' as const };
  if (minimumMinutes > stated.minutes) return { minutes: minimumMinutes, source: 'minimum', completedRaters, minimumMinutes };
  return { ...stated, completedRaters, minimumMinutes };
}
