import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/connection.js';
import { processAlive } from '../db/process-alive.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { Platform } from './platform-operations.queries.js';

// One command at a time sends a batch's operations to a platform. Two at once could each find the other's operation
// unconfirmed, read the platform before the other's answer arrived, and send it again: a bonus set up and paid twice.
//
// The holder refreshes its lock (heartbeat_at, migration 049) while it works, however long that takes: a settle of a
// large batch can run for hours. Another command takes the lock over only from a holder that is gone: a process of
// this host that is not alive, or (any host) one whose heartbeat stopped, which is hung or whose pid now belongs to
// another process. A holder whose lock was taken over sends nothing more (HeldLock.assertHeld, before each request).
// Heartbeats are written and read with the wall clock, not the command's clock: they compare processes.

/** How often the holder refreshes its lock. */
export const LOCK_HEARTBEAT_MS = 10_000;
/** A heartbeat older than this means the holder is gone: six beats missed. */
export const LOCK_STALE_MS = 6 * LOCK_HEARTBEAT_MS;

type LockRow = { holder: string; host: string; pid: number; what: string; acquired_at: string; heartbeat_at: string | null };

/** The lock a command holds while it works. */
export type HeldLock = {
  /** Throws (409) when another command has taken the lock over since: called before each request leaves. */
  assertHeld: () => void;
};

/** Holders of this process right now: another command of this process (two console settles) is refused like any. */
const heldHere = new Set<string>();

const platformLabel = (platform: Platform) => (platform === 'prolific' ? 'Prolific' : 'MTurk');

/** Whether the lock's holder is gone, so the lock may be taken over. */
function holderGone(lock: LockRow, wallNow: number): boolean {
  if (lock.host === hostname()) {
    // This very pid: a lock left by an earlier process that had it (a restarted container), unless held here now.
    if (lock.pid === process.pid) return !heldHere.has(lock.holder);
    if (!processAlive(lock.pid)) return true;
  }
  return wallNow - Date.parse(lock.heartbeat_at ?? lock.acquired_at) > LOCK_STALE_MS;
}

function readLock(db: Db, platform: Platform, batchId: number): LockRow | undefined {
  return db
    .prepare<{ batchId: number; platform: Platform }, LockRow>('SELECT holder, host, pid, what, acquired_at, heartbeat_at FROM platform_locks WHERE batch_id = :batchId AND platform = :platform')
    .get({ batchId, platform });
}

function takeLock(db: Db, platform: Platform, batchId: number, what: string, holder: string, now: Date): void {
  db.transaction(() => {
    const lock = readLock(db, platform, batchId);
    if (lock && !holderGone(lock, Date.now())) {
      throw new UserFacingError(`Another ${lock.what} of batch ${batchId} is sending to ${platformLabel(platform)} (since ${lock.acquired_at}): wait for it to finish, then run this again.`, 409, 'platform_busy');
    }
    db.prepare(
      `INSERT INTO platform_locks (batch_id, platform, holder, host, pid, what, acquired_at, heartbeat_at) VALUES (:batchId, :platform, :holder, :host, :pid, :what, :now, :beat)
       ON CONFLICT (batch_id, platform) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, what = excluded.what,
         acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at`,
    ).run({ batchId, platform, holder, host: hostname(), pid: process.pid, what, now: now.toISOString(), beat: new Date().toISOString() });
  }).immediate();
}

/** Refreshes the holder's heartbeat; false when the lock is no longer its own. A busy database waits for the next beat. */
function beat(db: Db, platform: Platform, batchId: number, holder: string): boolean {
  if (!db.open) return false;
  try {
    const changed = db
      .prepare('UPDATE platform_locks SET heartbeat_at = :beat WHERE batch_id = :batchId AND platform = :platform AND holder = :holder')
      .run({ batchId, platform, holder, beat: new Date().toISOString() }).changes;
    return changed > 0;
  } catch {
    return true;
  }
}

/**
 * Runs `work` holding the batch's lock for the platform, its heartbeat refreshed every `heartbeatMs`; refuses with a
 * 409 naming the running command when a live holder has it. `work` gets the lock, to check before each request that
 * it still holds it.
 */
export async function withPlatformLock<T>(
  db: Db,
  platform: Platform,
  batchId: number,
  what: string,
  now: () => Date,
  work: (lock: HeldLock) => Promise<T>,
  options: { heartbeatMs?: number } = {},
): Promise<T> {
  const holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  takeLock(db, platform, batchId, what, holder, now());
  heldHere.add(holder);
  const timer = setInterval(() => beat(db, platform, batchId, holder), options.heartbeatMs ?? LOCK_HEARTBEAT_MS);
  timer.unref();
  const lock: HeldLock = {
    assertHeld: () => {
      if (db.open && readLock(db, platform, batchId)?.holder === holder) return;
      throw new UserFacingError(
        `This ${what} of batch ${batchId} stopped before sending anything more: another command took its lock for ${platformLabel(platform)} over while it was not answering. Check that command's result; nothing is sent twice.`,
        409,
        'platform_lock_lost',
      );
    },
  };
  try {
    return await work(lock);
  } finally {
    clearInterval(timer);
    heldHere.delete(holder);
    if (db.open) db.prepare('DELETE FROM platform_locks WHERE batch_id = :batchId AND platform = :platform AND holder = :holder').run({ batchId, platform, holder });
  }
}
