// The median wall time of a synchronous call over a few runs, for benchmarks that time one read against its baseline.

/** The median of measured values (the upper one of the middle two for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
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
