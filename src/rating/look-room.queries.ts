import type { Db } from '../db/connection.js';

/**
 * An open comparison of a batch as serving sees it: its regular pairs (its maximum), those complete (K accepted
 * judgments), those started (any accepted judgment, live lease or reservation: handed out), and the completed pairs
 * its last look was taken at (null before any look).
 */
export type ComparisonServing = { id: number; pairs: number; completed: number; started: number; last_look_at: number | null };

/** The batch's comparisons still open under their sequential rule, each read from its pairs (pairs_by_comparison). */
export function listOpenComparisonServing(db: Db, batchId: number, k: number): ComparisonServing[] {
  return db
    .prepare<{ batchId: number; k: number }, ComparisonServing>(
      `SELECT c.id, count(p.id) AS pairs,
         count(p.id) FILTER (WHERE p.accepted >= :k) AS completed,
         count(p.id) FILTER (WHERE p.accepted + p.leased + p.reserved > 0) AS started,
         (SELECT l.completed_pairs FROM sequential_looks l WHERE l.comparison_id = c.id ORDER BY l.look DESC LIMIT 1) AS last_look_at
       FROM comparisons c
         LEFT JOIN pairs p INDEXED BY pairs_by_comparison ON p.comparison_id = c.id AND p.kind = 'regular' AND p.removed_at IS NULL
       WHERE c.batch_id = :batchId AND c.stopped_at IS NULL
       GROUP BY c.id
       ORDER BY c.position`,
    )
    .all({ batchId, k });
}

/** Whether the batch has comparisons and every one of them stopped under its sequential rule. */
export function everyComparisonStopped(db: Db, batchId: number): boolean {
  const row = db
    .prepare<{ batchId: number }, { comparisons: number; open: number }>(
      'SELECT count(*) AS comparisons, count(*) FILTER (WHERE stopped_at IS NULL) AS open FROM comparisons WHERE batch_id = :batchId',
    )
    .get({ batchId });
  return row !== undefined && row.comparisons > 0 && row.open === 0;
}

/** Whether the rater answered every regular comparison they were given (none lapsed or left open). */
export function answeredAllGiven(db: Db, raterId: number): boolean {
  return (
    db
      .prepare<{ raterId: number }, number>(
        `SELECT count(*) FROM assignments a JOIN pairs p ON p.id = a.pair_id
         WHERE a.rater_id = :raterId AND p.kind = 'regular' AND a.state <> 'answered'`,
      )
      .pluck()
      .get({ raterId }) === 0
  );
}
