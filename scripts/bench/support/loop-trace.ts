// Preloaded into both servers of the live-relay benchmark by `--loop-trace` (node --import): what held each server's
// own event loop during a window, the part of a delivery tail that no client-side figure shows. On SIGUSR2 it
// appends one JSON line to $BENCH_LOOP_TRACE (the loop's delay p99 and longest, and the garbage collector's pauses
// since the last signal) and starts counting afresh; the benchmark signals at the start and the end of each window.
// Sampling the loop every millisecond costs both servers the same little.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_TRACE;
if (file) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  let pauses: number[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push(entry.duration);
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    const over5 = pauses.filter((d) => d > 5);
    appendFileSync(
      file,
      `${JSON.stringify({
        loopP99Ms: loop.percentile(99) / 1e6,
        loopMaxMs: loop.max / 1e6,
        gcPauses: pauses.length,
        gcMs: pauses.reduce((s, d) => s + d, 0),
        gcPausesOver5Ms: over5.length,
        gcMaxMs: Math.max(0, ...pauses),
      })}\n`,
    );
    loop.reset();
    pauses = [];
  });
}
