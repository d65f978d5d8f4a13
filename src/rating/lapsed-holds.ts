import type { Db } from '../db/connection.js';
import { expireLeases, purgeExpiredReservations } from './rating.queries.js';
import { closeIfAllStopped } from './sequential-stopping.js';

/**
 * How often, per batch and database handle, leases and reservations past their time are released: every assignment
 * and entry did it (two statements, an UPDATE and a DELETE over the batch's expiry indexes, about a twentieth of an
 * answer's SQL; issue 12). A hold then goes back to the pool at most this much after it ended; holds last minutes.
 */
const RELEASE_EVERY_MS = 1_000;

const lastRelease = new WeakMap<Db, Map<number, number>>();

/**
 * Releases the batch's leases and reservations past their time, unless this handle did so within the last second.
 * A sequential batch whose comparisons have all stopped closes itself here when the hold that kept it open lapsed
 * without an answer (issue 44): the answer path, which closes it otherwise, never runs for a rater who walked away.
 */
export function releaseLapsedHolds(db: Db, batchId: number, now: Date): void {
  let byBatch = lastRelease.get(db);
  if (!byBatch) {
    byBatch = new Map();
    lastRelease.set(db, byBatch);
  }
  const last = byBatch.get(batchId);
  const at = now.getTime();
  // A clock that went back (tests, a corrected system clock) releases at once.
  if (last !== undefined && at >= last && at - last < RELEASE_EVERY_MS) return;
  const released = expireLeases(db, batchId, now) + purgeExpiredReservations(db, batchId, now);
  byBatch.set(batchId, at);
  if (released > 0) closeIfAllStopped(db, batchId, now);
}
