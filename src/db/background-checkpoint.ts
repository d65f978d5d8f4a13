import { Worker } from 'node:worker_threads';
import type { Db } from './connection.js';
import { logSizeFollower } from './log-size.js';

/** SQLite's own default: the connection checkpoints when a commit leaves the log longer than this many pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

export type BackgroundCheckpoints = {
  /** How many of the thread's checkpoints in a row have failed until now; 0 while they succeed. */
  failedAttempts: () => number;
  /** How often the thread has taken the write lock to let the log start over (a RESTART that was not busy). */
  restarts: () => number;
  /** Ends the thread; the handle goes back to checkpointing on its own commits. */
  stop: () => Promise<void>;
};

export type BackgroundCheckpointOptions = {
  /** How often the thread copies the log into the file (200 ms). */
  intervalMs?: number;
  /** How often at most it lets the log start over, holding the write lock for a moment (1 s; checkpoint-thread.mjs). */
  restartIntervalMs?: number;
  /**
   * The thread could not start (the promise rejects with the same reason), its checkpoints began to fail, or it ended:
   * the handle checkpoints on its own commits meanwhile. Called once per run of failures, with the first one's reason.
   */
  onError?: (problem: string) => void;
  /** The thread's checkpoints succeed again after `failedAttempts` failures in a row; the handle stops checkpointing. */
  onRecovered?: (failedAttempts: number) => void;
  /** The log's size it is cut back to once copied (64 MB), and how much one commit may cut off (32 MB): for tests. */
  logSizeLimitBytes?: number;
  logCutStepBytes?: number;
  /** The write gate of the connections that write side by side (src/db/connection.ts): the thread's RESTARTs take it. */
  writeGate?: SharedArrayBuffer | null;
};

type ThreadMessage = { kind: 'ready' | 'recovered' | 'restarted' } | { kind: 'error' | 'failed'; message: string };

/**
 * Moves the write-ahead log's checkpoints off the request thread. With SQLite's default, the commit that crosses 1,000
 * pages of log copies them into the database file and syncs it, on whichever request made that commit; after a long
 * reader (an analysis of a million judgments) that is a log of hundreds of megabytes, copied on a rater's request
 * (issue 12). Here a thread with its own connection checkpoints every `intervalMs` instead, and the server's handle
 * stops checkpointing. While the thread's checkpoints fail (a locked or damaged file) or after it ended, the handle
 * checkpoints on its own commits again, so the log never grows unbounded; once they succeed again, the thread takes
 * them back.
 */
export function startBackgroundCheckpoints(db: Db, options: BackgroundCheckpointOptions = {}): Promise<BackgroundCheckpoints> {
  const worker = new Worker(new URL('./checkpoint-thread.mjs', import.meta.url), {
    workerData: { path: db.name, intervalMs: options.intervalMs ?? 200, restartIntervalMs: options.restartIntervalMs ?? 1000, gate: options.writeGate ?? null },
  });
  worker.unref();
  let state: 'starting' | 'running' | 'not-started' = 'starting';
  let stopped = false;
  let exited = false;
  let failedAttempts = 0;
  let restarts = 0;
  let threadError: string | undefined;
  const checkpointOnCommits = (on: boolean) => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${on ? SQLITE_AUTOCHECKPOINT_PAGES : 0}`);
  };
  // A long reader (an analysis of a million judgments reads one snapshot for 15 s) keeps the log from starting over, so it
  // grows, to a gigabyte under full rater load. Once it starts over, SQLite cuts the file back to journal_size_limit on
  // the next commit, a rater's: cutting 2 GB took that commit 510–590 ms (about 0.25 ms a megabyte, measured with
  // SQLite alone; issue 12). So the limit follows the log's size down a step at a time, and each commit after a restart
  // cuts at most one step.
  const followLogDown = logSizeFollower(db, options.logSizeLimitBytes, options.logCutStepBytes);
  let cutBack: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= new Promise<void>((resolve) => {
      stopped = true;
      clearInterval(cutBack);
      checkpointOnCommits(true);
      // A thread that already ended sends no 'exit' again.
      if (exited) return resolve();
      // Held until it has ended: a shutdown waiting only for this must not see an empty event loop and exit early.
      worker.ref();
      worker.once('exit', () => resolve());
      worker.postMessage('stop');
    }));
  const checkpoints: BackgroundCheckpoints = { failedAttempts: () => failedAttempts, restarts: () => restarts, stop };
  return new Promise((resolve, reject) => {
    const failToStart = (problem: string) => {
      if (state !== 'starting') return;
      state = 'not-started';
      checkpointOnCommits(true);
      options.onError?.(problem);
      reject(new Error(problem));
    };
    worker.on('message', (message: ThreadMessage) => {
      if (message.kind === 'restarted') {
        restarts += 1;
        return;
      }
      // Once stopped, the handle checkpoints on its own for good: a 'recovered' still on its way must not undo that.
      if (stopped) return;
      if (message.kind === 'ready') {
        state = 'running';
        checkpointOnCommits(false);
        followLogDown();
        cutBack = setInterval(followLogDown, options.intervalMs ?? 200);
        cutBack.unref();
        resolve(checkpoints);
      } else if (message.kind === 'failed') failToStart(message.message);
      else if (message.kind === 'error') {
        // The thread retries every interval; one report per run of failures, not one per attempt.
        failedAttempts += 1;
        if (failedAttempts > 1) return;
        checkpointOnCommits(true);
        options.onError?.(message.message);
      } else {
        const attempts = failedAttempts;
        failedAttempts = 0;
        checkpointOnCommits(false);
        options.onRecovered?.(attempts);
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const problem = error.message || String(error.code);
      if (state === 'starting') failToStart(problem);
      else threadError = problem;
    });
    worker.on('exit', (code) => {
      exited = true;
      clearInterval(cutBack);
      if (stopped || state === 'not-started') return;
      if (state === 'starting') return failToStart(threadError ?? `the checkpoint thread ended before it started (exit code ${code})`);
      checkpointOnCommits(true);
      options.onError?.(`the checkpoint thread ended: ${threadError ?? `exit code ${code}`}`);
    });
  });
}

