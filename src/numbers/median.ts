// The median, written once, below every feature folder: the analysis report, the console's rater table and the consent time all use it.

/** The median of numbers already sorted ascending; null for none. An even count gives the mean of the middle two. */
export function medianOfSorted(sorted: ArrayLike<number>): number | null {
  const k = sorted.length;
  if (k === 0) return null;
  return k % 2 === 1 ? (sorted[(k - 1) / 2] as number) : ((sorted[k / 2 - 1] as number) + (sorted[k / 2] as number)) / 2;
}

/** The median of `values` (left unchanged), or null when there are none. */
export function median(values: readonly number[]): number | null {
  return medianOfSorted([...values].sort((a, b) => a - b));
}

/**
 * The median of `count` values kept in order elsewhere (an index), read as the one or two middle values from an offset
 * (`LIMIT 2 OFFSET :offset`): the middle of a million values without reading them all. Null for none.
 */
export function medianOfOrdered(count: number, middleFrom: (offset: number) => number[]): number | null {
  if (count === 0) return null;
  const [lower = 0, upper = lower] = middleFrom(Math.floor((count - 1) / 2));
  return count % 2 === 1 ? lower : (lower + upper) / 2;
}
