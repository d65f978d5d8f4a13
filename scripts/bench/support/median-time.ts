// The median wall time of a synchronous call over a few runs, for benchmarks that time one read against its baseline.

/** The median of measured values: of an even count, the mean of the middle two; NaN of none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Milliseconds, the median of `times` runs; `warm`: one run first that is not counted (statements prepared, pages read). */
export function medianMs(what: () => unknown, times: number, options: { warm?: boolean } = {}): number {
  if (options.warm) what();
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    what();
    ms.push(performance.now() - started);
  }
  return median(ms);
}
