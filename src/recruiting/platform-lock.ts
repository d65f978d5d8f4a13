import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/connection.js';
import { processAlive } from '../db/process-alive.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { Platform } from './platform-operations.queries.js';

// One command at a time sends a batch's operations to a platform. Two at once could each find the other's operation
// unconfirmed, read the platform before the other's answer arrived, and send it again: a bonus set up and paid twice.

/** A lock older than this is taken over whoever holds it (a command hung for an hour has lost its connection anyway). */
export const LOCK_MAX_MINUTES = 60;

type LockRow = { holder: string; host: string; pid: number; what: string; acquired_at: string };

function stale(lock: LockRow, now: Date): boolean {
  if (now.getTime() - Date.parse(lock.acquired_at) > LOCK_MAX_MINUTES * 60_000) return true;
  return lock.host === hostname() && !processAlive(lock.pid);
}

/**
 * Runs `work` holding the batch's lock for the platform; refuses with a 409 naming the running command when another
 * holds it.
 */
export async function withPlatformLock<T>(db: Db, platform: Platform, batchId: number, what: string, now: () => Date, work: () => Promise<T>): Promise<T> {
  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  db.transaction(() => {
    const lock = db
      .prepare<{ batchId: number; platform: Platform }, LockRow>('SELECT holder, host, pid, what, acquired_at FROM platform_locks WHERE batch_id = :batchId AND platform = :platform')
      .get({ batchId, platform });
    if (lock && !stale(lock, now())) {
      throw new UserFacingError(`Another ${lock.what} of batch ${batchId} is sending to ${platform === 'prolific' ? 'Prolific' : 'MTurk'} (since ${lock.acquired_at}): wait for it to finish, then run this again.`, 409, 'platform_busy');
    }
    db.prepare(
      `INSERT INTO platform_locks (batch_id, platform, holder, host, pid, what, acquired_at) VALUES (:batchId, :platform, :holder, :host, :pid, :what, :now)
       ON CONFLICT (batch_id, platform) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, what = excluded.what, acquired_at = excluded.acquired_at`,
    ).run({ batchId, platform, holder, host: hostname(), pid: process.pid, what, now: now().toISOString() });
  }).immediate();
  try {
    return await work();
  } finally {
    if (db.open) db.prepare('DELETE FROM platform_locks WHERE batch_id = :batchId AND platform = :platform AND holder = :holder').run({ batchId, platform, holder });
  }
}
