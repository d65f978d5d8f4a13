// The median wall time of a synchronous call over a few runs, for benchmarks that time one read against its baseline.

/** Milliseconds, the median of `times` runs; `warm`: one run first that is not counted (statements prepared, pages read). */
export function medianMs(what: () => unknown, times: number, options: { warm?: boolean } = {}): number {
  if (options.warm) what();
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    what();
    ms.push(performance.now() - started);
  }
  return [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] as number;
}
