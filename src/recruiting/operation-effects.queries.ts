import type { Db } from '../db/connection.js';

// When a platform's own state was seen to show what an accepted operation asked for (migration 047): an accepted
// bulk bonus pay is in flight until then.

/** Writes that the operation's effect was seen on the platform (once; a later sighting changes nothing). */
export function recordOperationEffect(db: Db, operationId: number, now: Date): void {
  db.prepare('INSERT INTO platform_operation_effects (operation_id, seen_at) VALUES (:operationId, :now) ON CONFLICT (operation_id) DO NOTHING').run({ operationId, now: now.toISOString() });
}

/** The operations of a batch whose effect was seen on the platform. */
export function listSeenEffects(db: Db, batchId: number): Set<number> {
  return new Set(
    db
      .prepare<{ batchId: number }, number>('SELECT e.operation_id FROM platform_operation_effects e JOIN platform_operations o ON o.id = e.operation_id WHERE o.batch_id = :batchId')
      .pluck()
      .all({ batchId }),
  );
}
