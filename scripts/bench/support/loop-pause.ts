// The longest the event loop was held while an operation ran, for benchmarks of work the server does on its request
// thread or hands to libuv's thread pool.

/**
 * Runs `what` with a 1 ms timer watching the event loop: its value, and the longest gap between two ticks (the last
 * one until `what` settled included), in milliseconds.
 */
export async function withLongestPause<T>(what: () => Promise<T>): Promise<{ value: T; longestPause: number }> {
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    const value = await what();
    return { value, longestPause: Math.max(longest, performance.now() - last) };
  } finally {
    clearInterval(ticker);
  }
}
