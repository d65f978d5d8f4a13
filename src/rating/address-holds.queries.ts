import type { Db } from '../db/connection.js';

// Places of a client address held while a person reads the consent page (migration 045; issue 49): the per-address
// limits count them with the raters, so a person behind a full address is told so before consenting, and one who
// was shown the consent form with a place keeps it when they agree. Every function runs inside the entry's or the
// consent's IMMEDIATE transaction (src/rating/rater-pool.ts).

/** How long a place is held for a consent page: long enough to read it, short enough that a closed tab frees it soon. */
export const ADDRESS_HOLD_MINUTES = 5;

/** Holds (or renews) a place of `addressHash` for `holder`, whose consent form carries `raterPublicId`. */
export function holdAddressPlace(db: Db, hold: { batchId: number; holder: string; raterPublicId: string; addressHash: string }, now: Date, minutes: number): void {
  db.prepare('DELETE FROM address_holds WHERE batch_id = :batchId AND address_hash = :addressHash AND expires_at <= :now').run({ batchId: hold.batchId, addressHash: hold.addressHash, now: now.toISOString() });
  db.prepare(
    `INSERT INTO address_holds (batch_id, holder, rater_public_id, address_hash, created_at, expires_at)
     VALUES (:batchId, :holder, :raterPublicId, :addressHash, :now, :expires)
     ON CONFLICT (batch_id, holder) DO UPDATE SET rater_public_id = excluded.rater_public_id, address_hash = excluded.address_hash, expires_at = excluded.expires_at`,
  ).run({ ...hold, now: now.toISOString(), expires: new Date(now.getTime() + minutes * 60_000).toISOString() });
}

/** Places of an address held now by consent pages. */
export function countAddressHolds(db: Db, batchId: number, addressHash: string, now: Date): number {
  return (
    db
      .prepare<{ batchId: number; addressHash: string; now: string }, number>(
        'SELECT count(*) FROM address_holds WHERE batch_id = :batchId AND address_hash = :addressHash AND expires_at > :now',
      )
      .pluck()
      .get({ batchId, addressHash, now: now.toISOString() }) ?? 0
  );
}

/**
 * Ends the hold of the consent form with `raterPublicId` (agreed or declined): true when it was still held, for the
 * same address (a form carried to another network holds nothing there).
 */
export function releaseAddressHold(db: Db, batchId: number, raterPublicId: string, addressHash: string, now: Date): boolean {
  const row = db
    .prepare<{ batchId: number; raterPublicId: string }, { expires_at: string; address_hash: string }>(
      'DELETE FROM address_holds WHERE batch_id = :batchId AND rater_public_id = :raterPublicId RETURNING expires_at, address_hash',
    )
    .get({ batchId, raterPublicId });
  return row !== undefined && row.address_hash === addressHash && row.expires_at > now.toISOString();
}

/** Ends the hold of `holder` (a participant opening the link again: their new consent page holds afresh). */
export function releaseHolder(db: Db, batchId: number, holder: string): void {
  db.prepare('DELETE FROM address_holds WHERE batch_id = :batchId AND holder = :holder').run({ batchId, holder });
}
