/**
 * Exponential backoff with jitter ("full jitter" halved: between half and all of the exponential step),
 * honouring a server's Retry-After when it gives one.
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | null,
  random: () => number,
  backoff: { baseMs: number; maxMs: number },
): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, backoff.maxMs * 4);
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(step * (0.5 + random() / 2));
}

/** Waits, or stops early when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
