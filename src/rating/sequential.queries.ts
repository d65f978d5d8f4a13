import type { Db } from '../db/connection.js';

// The tables of group-sequential stopping (migration 036): comparisons' stop marks, pairs taken out of the pool, and
// the looks taken.

export type StopReason = 'efficacy' | 'futility' | 'final';

export type ComparisonStopRow = { id: number; batch_id: number; position: number; condition_a: string; condition_b: string; stopped_at: string | null; stop_reason: StopReason | null };

export function getComparisonStop(db: Db, comparisonId: number): ComparisonStopRow | undefined {
  return db
    .prepare<{ id: number }, ComparisonStopRow>('SELECT id, batch_id, position, condition_a, condition_b, stopped_at, stop_reason FROM comparisons WHERE id = :id')
    .get({ id: comparisonId });
}

export function listComparisonStops(db: Db, batchId: number): ComparisonStopRow[] {
  return db
    .prepare<{ batchId: number }, ComparisonStopRow>(
      'SELECT id, batch_id, position, condition_a, condition_b, stopped_at, stop_reason FROM comparisons WHERE batch_id = :batchId ORDER BY position',
    )
    .all({ batchId });
}

/** The comparison's regular pairs (its maximum information) and those with their K judgments. */
export function countComparisonPairs(db: Db, comparisonId: number, k: number): { pairs: number; completed: number } {
  return (
    db
      .prepare<{ id: number; k: number }, { pairs: number; completed: number }>(
        `SELECT count(*) AS pairs, count(*) FILTER (WHERE accepted >= :k) AS completed FROM pairs INDEXED BY pairs_by_comparison
         WHERE comparison_id = :id AND kind = 'regular' AND removed_at IS NULL`,
      )
      .get({ id: comparisonId, k }) ?? { pairs: 0, completed: 0 }
  );
}

/**
 * Each completed pair's valid votes on the first question (excluded and screened-out raters' answers left out). From
 * the comparison's pairs to their judgments, in that order (CROSS JOIN): left to itself, SQLite scanned every
 * judgment of the database through the question-0 partial index, inside the answer's transaction.
 */
export const COMPLETED_PAIR_VOTES_SQL = `SELECT count(*) FILTER (WHERE j.winner = 'a') AS a, count(*) FILTER (WHERE j.winner = 'b') AS b
  FROM pairs p INDEXED BY pairs_by_comparison
  CROSS JOIN judgments j INDEXED BY judgments_by_batch ON j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0
  CROSS JOIN raters r ON r.id = j.rater_id AND r.excluded = 0 AND r.status <> 'screened_out'
  WHERE p.comparison_id = :id AND p.kind = 'regular' AND p.removed_at IS NULL AND p.accepted >= :k
  GROUP BY p.id`;

export function completedPairVotes(db: Db, comparisonId: number, k: number): { a: number; b: number }[] {
  return db.prepare<{ id: number; k: number }, { a: number; b: number }>(COMPLETED_PAIR_VOTES_SQL).all({ id: comparisonId, k });
}

export type SequentialLookRow = {
  id: number;
  batch_id: number;
  comparison_id: number;
  look: number;
  planned_looks: number;
  max_pairs: number;
  completed_pairs: number;
  ties: number;
  wins_a: number;
  wins_b: number;
  information_fraction: number;
  alpha: number;
  critical_z: number | null;
  nominal_alpha: number;
  /** |z| below it stopped the comparison for futility; null where the look had no futility bound. */
  futility_z: number | null;
  p_value: number;
  z: number;
  decision: 'continue' | StopReason;
  taken_at: string;
};

export function listLooks(db: Db, comparisonId: number): SequentialLookRow[] {
  return db.prepare<{ id: number }, SequentialLookRow>('SELECT * FROM sequential_looks WHERE comparison_id = :id ORDER BY look').all({ id: comparisonId });
}

export function listBatchLooks(db: Db, batchId: number): SequentialLookRow[] {
  return db.prepare<{ id: number }, SequentialLookRow>('SELECT * FROM sequential_looks WHERE batch_id = :id ORDER BY comparison_id, look').all({ id: batchId });
}

export function insertLook(db: Db, row: Omit<SequentialLookRow, 'id'>): void {
  db.prepare(
    `INSERT INTO sequential_looks (batch_id, comparison_id, look, planned_looks, max_pairs, completed_pairs, ties, wins_a, wins_b,
       information_fraction, alpha, critical_z, nominal_alpha, futility_z, p_value, z, decision, taken_at)
     VALUES (:batch_id, :comparison_id, :look, :planned_looks, :max_pairs, :completed_pairs, :ties, :wins_a, :wins_b,
       :information_fraction, :alpha, :critical_z, :nominal_alpha, :futility_z, :p_value, :z, :decision, :taken_at)`,
  ).run(row);
}

/**
 * Stops a comparison: its pairs below K leave the pool new leases and promises are drawn from (the pairs a rater
 * holds by lease or reservation are still served to them: src/rating/rating.queries.ts).
 */
export function stopComparison(db: Db, comparisonId: number, reason: StopReason, now: Date, k: number): number {
  const at = now.toISOString();
  db.prepare('UPDATE comparisons SET stopped_at = :at, stop_reason = :reason WHERE id = :id AND stopped_at IS NULL').run({ id: comparisonId, at, reason });
  return db
    .prepare(
      `UPDATE pairs SET stopped_at = :at
       WHERE comparison_id = :id AND kind = 'regular' AND removed_at IS NULL AND stopped_at IS NULL AND accepted < :k`,
    )
    .run({ id: comparisonId, at, k }).changes;
}

/** Live leases and reservations on a batch's regular pairs: work promised to someone and not yet done. */
export function countOutstandingHolds(db: Db, batchId: number, now: Date): number {
  const leases =
    db
      .prepare<{ batchId: number; now: string }, number>(
        `SELECT count(*) FROM assignments a JOIN pairs p ON p.id = a.pair_id
         WHERE a.batch_id = :batchId AND a.state = 'leased' AND a.expires_at > :now AND p.kind = 'regular'`,
      )
      .pluck()
      .get({ batchId, now: now.toISOString() }) ?? 0;
  const reservations =
    db
      .prepare<{ batchId: number; now: string }, number>('SELECT count(*) FROM pair_reservations WHERE batch_id = :batchId AND expires_at > :now')
      .pluck()
      .get({ batchId, now: now.toISOString() }) ?? 0;
  return leases + reservations;
}

/** Open batches with comparisons, every one of them stopped: those that may close themselves once no hold is left. */
export function listOpenBatchesAllStopped(db: Db): number[] {
  return db
    .prepare<[], number>(
      `SELECT b.id FROM batches b
       WHERE b.state = 'open' AND EXISTS (SELECT 1 FROM comparisons c WHERE c.batch_id = b.id)
         AND NOT EXISTS (SELECT 1 FROM comparisons c WHERE c.batch_id = b.id AND c.stopped_at IS NULL)
       ORDER BY b.id`,
    )
    .pluck()
    .all();
}
