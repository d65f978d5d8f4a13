// The write gate's protocol (src/db/connection.ts, useWriteGate): one 32-bit cell of a SharedArrayBuffer shared by
// the threads whose connections it orders, 0 free and 1 taken. Plain JavaScript, so that the checkpoint thread
// (checkpoint-thread.mjs), which runs under any loader, takes it the same way as the TypeScript side.

/** Takes the gate, waiting at most `timeoutMs` for its holder to free it; false when it was not taken in time. */
export function takeGate(cell, timeoutMs) {
  const until = performance.now() + timeoutMs;
  for (;;) {
    if (Atomics.compareExchange(cell, 0, 0, 1) === 0) return true;
    const left = until - performance.now();
    if (left <= 0 || Atomics.wait(cell, 0, 1, left) === 'timed-out') return false;
  }
}

/** Frees the gate and wakes one thread waiting for it. */
export function freeGate(cell) {
  Atomics.store(cell, 0, 0);
  Atomics.notify(cell, 0, 1);
}
