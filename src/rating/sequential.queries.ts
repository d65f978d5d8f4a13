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

/** The batch's regular pairs, those of stopped comparisons included (what it was designed to have judged). */
export function countBatchRegularPairs(db: Db, batchId: number): number {
  return (
    db
      .prepare<{ batchId: number }, number>("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL")
      .pluck()
      .get({ batchId }) ?? 0
  );
}

/**
 * Each completed pair's valid judgments on the first question (excluded and screened-out raters' answers left out),
 * one row each, with the rater and the look the pair first entered (issue 51: the look statistic clusters by rater).
 * From the comparison's pairs to their judgments, in that order (CROSS JOIN): left to itself, SQLite scanned every
 * judgment of the database through the question-0 partial index, inside the answer's transaction.
 */
export const COMPLETED_PAIR_JUDGMENTS_SQL = `SELECT p.id AS pair_id, p.sequential_look AS entered, j.rater_id AS rater, j.winner AS winner
  FROM pairs p INDEXED BY pairs_by_comparison
  CROSS JOIN judgments j INDEXED BY judgments_by_batch ON j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0
  CROSS JOIN raters r ON r.id = j.rater_id AND r.excluded = 0 AND r.status <> 'screened_out'
  WHERE p.comparison_id = :id AND p.kind = 'regular' AND p.removed_at IS NULL AND p.accepted >= :k`;

export type CompletedPairJudgment = { pair_id: number; entered: number | null; rater: number; winner: 'a' | 'b' | 'tie' };

export function completedPairJudgments(db: Db, comparisonId: number, k: number): CompletedPairJudgment[] {
  return db.prepare<{ id: number; k: number }, CompletedPairJudgment>(COMPLETED_PAIR_JUDGMENTS_SQL).all({ id: comparisonId, k });
}

/**
 * Each completed pair's valid votes for a and for b on the first question, one row a pair (the counts a look before
 * issue 51 read; kept for callers that need only the majorities, e.g. serving that waits on the next look).
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

/** Marks the pairs a look counted for the first time with that look (their stage, should the maximum rise later). */
export function markPairsEntered(db: Db, comparisonId: number, k: number, look: number): void {
  db.prepare(
    `UPDATE pairs INDEXED BY pairs_by_comparison SET sequential_look = :look
     WHERE comparison_id = :id AND kind = 'regular' AND removed_at IS NULL AND accepted >= :k AND sequential_look IS NULL`,
  ).run({ id: comparisonId, k, look });
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
  /** Which statistic the look used and why (migration 051; older looks: pair majorities, no reason). */
  statistic: 'rater-clustered' | 'pair-majorities';
  statistic_reason: string | null;
  raters: number | null;
  df: number | null;
  estimate: number | null;
  standard_error: number | null;
  design_effect: number | null;
  /** The information reached, on the scale where the design's maximum is 1 (null only for a look of no decisive pair). */
  information: number | null;
  /** The look statistic's observed information, 1 / the variance of the mean pair score (null before migration 051). */
  observed_information: number | null;
  cumulative_alpha: number | null;
  ends_design: number;
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
       information_fraction, alpha, critical_z, nominal_alpha, futility_z, p_value, z, decision, taken_at,
       statistic, statistic_reason, raters, df, estimate, standard_error, design_effect, information, observed_information, cumulative_alpha, ends_design)
     VALUES (:batch_id, :comparison_id, :look, :planned_looks, :max_pairs, :completed_pairs, :ties, :wins_a, :wins_b,
       :information_fraction, :alpha, :critical_z, :nominal_alpha, :futility_z, :p_value, :z, :decision, :taken_at,
       :statistic, :statistic_reason, :raters, :df, :estimate, :standard_error, :design_effect, :information, :observed_information, :cumulative_alpha, :ends_design)`,
  ).run(row);
}

export type SequentialExclusionRow = {
  comparison: string;
  judge: string | null;
  action: 'exclude' | 'include';
  reason: string;
  after_look: number;
  judgments_in_looks: number;
  taken_at: string;
};

/**
 * Records that a rater's judgments leave (or re-enter) a sequential batch's data after looks were taken (issue 51):
 * one row per comparison whose looks counted some of them. The looks stay as taken; the next look counts the
 * judgments as they then are. Nothing is written for a rater none of whose judgments entered a look.
 */
export function recordExclusionAfterLooks(db: Db, raterId: number, action: 'exclude' | 'include', reason: string, now: Date): number {
  return db
    .prepare(
      `INSERT INTO sequential_exclusions (batch_id, comparison_id, rater_id, judge, action, reason, after_look, judgments_in_looks, taken_at)
       SELECT p.batch_id, p.comparison_id, r.id, r.judge, :action, :reason,
         (SELECT max(l.look) FROM sequential_looks l WHERE l.comparison_id = p.comparison_id), count(*), :at
       FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN raters r ON r.id = j.rater_id
       WHERE j.rater_id = :raterId AND j.question_index = 0 AND p.kind = 'regular' AND p.sequential_look IS NOT NULL
       GROUP BY p.comparison_id`,
    )
    .run({ raterId, action, reason, at: now.toISOString() }).changes;
}

export function listSequentialExclusions(db: Db, batchId: number): SequentialExclusionRow[] {
  return db
    .prepare<{ batchId: number }, SequentialExclusionRow>(
      `SELECT c.condition_a || ' vs ' || c.condition_b AS comparison, e.judge, e.action, e.reason, e.after_look, e.judgments_in_looks, e.taken_at
       FROM sequential_exclusions e JOIN comparisons c ON c.id = e.comparison_id WHERE e.batch_id = :batchId ORDER BY e.id`,
    )
    .all({ batchId });
}

/**
 * Stops a comparison: its pairs below K leave the pool new leases and promises are drawn from (the pairs a rater
 * holds by lease or reservation are still served to them: src/rating/rating.queries.ts).
 */
export function stopComparison(db: Db, comparisonId: number, reason: StopReason, now: Date, k: number): number {
  const at = now.toISOString();
  // The judgment being stored is the newest row of the table (this runs in its transaction): max(id) reads one rowid.
  db.prepare(
    'UPDATE comparisons SET stopped_at = :at, stop_reason = :reason, stopped_after_judgment = (SELECT max(id) FROM judgments) WHERE id = :id AND stopped_at IS NULL',
  ).run({ id: comparisonId, at, reason });
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

export type AfterStopCounts = { judgments: number; pairs: number; a: number; b: number; ties: number };

const afterStopSql = (after: string) => `SELECT count(*) AS judgments, count(DISTINCT j.pair_id) AS pairs, count(*) FILTER (WHERE j.winner = 'a') AS a,
     count(*) FILTER (WHERE j.winner = 'b') AS b, count(*) FILTER (WHERE j.winner = 'tie') AS ties
   FROM comparisons c
   JOIN pairs p INDEXED BY pairs_by_comparison ON p.comparison_id = c.id AND p.kind = 'regular' AND p.removed_at IS NULL
   JOIN judgments j INDEXED BY judgments_by_batch ON j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0 AND ${after}
   JOIN raters r ON r.id = j.rater_id AND r.excluded = 0 AND r.status <> 'screened_out'
   WHERE c.id = :id AND c.stopped_at IS NOT NULL`;
// A stop records the last judgment before it (migration 051): each pair's judgments after it are then a range of the
// index's ids, so only those are read (every judgment of the comparison was read for each batch-page view before:
// 320–326 ms against 11 ms at a million judgments, scripts/bench/console-pages.ts). A stop recorded before 051 has only
// its time.
const AFTER_STOP_BY_ID = afterStopSql('j.id > c.stopped_after_judgment');
const AFTER_STOP_BY_TIME = afterStopSql('j.submitted_at > c.stopped_at');

/**
 * The valid judgments a stopped comparison received after its stop (overrunning: leases and promises given before
 * it), which the sequential inference does not use (issue 51). Read per comparison for its report (the batch page's
 * standing, the analysis), never on the answer path.
 */
export function judgmentsAfterStop(db: Db, comparisonId: number): AfterStopCounts {
  const byId = db.prepare<{ id: number }, number>('SELECT stopped_after_judgment IS NOT NULL FROM comparisons WHERE id = :id').pluck().get({ id: comparisonId });
  return (
    db.prepare<{ id: number }, AfterStopCounts>(byId === 0 ? AFTER_STOP_BY_TIME : AFTER_STOP_BY_ID).get({ id: comparisonId }) ?? { judgments: 0, pairs: 0, a: 0, b: 0, ties: 0 }
  );
}
