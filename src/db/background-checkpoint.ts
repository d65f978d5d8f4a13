import { Worker } from 'node:worker_threads';
import type { Db } from './connection.js';

/** SQLite's own default: the connection checkpoints when a commit leaves the log longer than this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
const LOG_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export type BackgroundCheckpoints = {
  /** Ends the thread; the handle goes back to checkpointing on its own commits. */
  stop: () => Promise<void>;
};

/**
 * Moves the write-ahead log's checkpoints off the request thread. With SQLite's default, the commit that crosses 1,000
 * pages of log copies them into the database file and syncs it, on whichever request made that commit; after a long
 * reader (an analysis of a million judgments) that is a log of hundreds of megabytes, copied on a rater's request
 * (issue 12). Here a thread with its own connection checkpoints every `intervalMs` instead, and the server's handle
 * stops checkpointing. If the thread fails, the handle checkpoints on its own again, so the log never grows unbounded.
 */
export function startBackgroundCheckpoints(db: Db, options: { intervalMs?: number; onError?: (message: string) => void } = {}): Promise<BackgroundCheckpoints> {
  const worker = new Worker(new URL('./checkpoint-thread.mjs', import.meta.url), { workerData: { path: db.name, intervalMs: options.intervalMs ?? 200 } });
  worker.unref();
  let stopped = false;
  const takeBack = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      stopped = true;
      takeBack();
      // Held until it has ended: a shutdown waiting only for this must not see an empty event loop and exit early.
      worker.ref();
      worker.once('exit', () => resolve());
      worker.postMessage('stop');
    });
  return new Promise((resolve, reject) => {
    const fail = (message: string) => {
      takeBack();
      options.onError?.(message);
      reject(new Error(message));
    };
    worker.on('message', (message: { kind: 'ready' } | { kind: 'error' | 'failed'; message: string }) => {
      if (message.kind === 'ready') {
        db.pragma('wal_autocheckpoint = 0');
        // A long reader (an analysis) can let the log grow large; once copied and started over, it is cut back.
        db.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT_BYTES}`);
        resolve({ stop });
      } else if (message.kind === 'failed') fail(message.message);
      else options.onError?.(message.message);
    });
    worker.on('error', (error: Error & { code?: string }) => fail(error.message || String(error.code)));
    worker.on('exit', () => {
      if (!stopped) takeBack();
    });
  });
}
