import { statSync } from 'node:fs';
import type { Db } from './connection.js';

/** The log's size it is cut back to once copied (64 MB). */
const LOG_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** How much of an overgrown log one commit may cut off (about 8 ms of a commit's time; background-checkpoint.ts). */
const LOG_CUT_STEP_BYTES = 32 * 1024 * 1024;

/**
 * What keeps a connection's commits from cutting a grown log back at once: a function that sets the handle's
 * journal_size_limit to the log's size less one step (never under the limit), for the next restart of the log to cut.
 * Every connection that commits needs it, since whichever commits first after a restart does the cutting: the
 * server's (src/db/background-checkpoint.ts, every interval) and its answer thread's (src/rating/answer-thread-worker.ts).
 */
export function logSizeFollower(db: Db, limitBytes = LOG_SIZE_LIMIT_BYTES, stepBytes = LOG_CUT_STEP_BYTES): () => void {
  let limitSet = -1;
  return () => {
    if (!db.open) return;
    let size: number;
    try {
      size = statSync(`${db.name}-wal`).size;
    } catch {
      return;
    }
    const next = Math.max(limitBytes, size - stepBytes);
    if (next === limitSet) return;
    db.pragma(`journal_size_limit = ${next}`);
    limitSet = next;
  };
}
