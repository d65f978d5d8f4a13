import type { BatchState } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { wilsonInterval } from '../analysis/wilson.js';
import { batchMedianSeconds, judgmentCounts } from '../analysis/batch-median-time.queries.js';

// Read-only SQL for the console's batch pages. Counts come from counters kept in the same transaction as the rows
// they count (the pairs' counters by the rating code, comparison_tallies by triggers) and from covering indexes, so a
// page reads a bounded number of rows however many judgments the batch holds (issue 12).

export type BatchListRow = {
  id: number;
  public_id: string;
  name: string;
  state: BatchState;
  created_at: string;
  created_by: string | null;
  judgments_per_pair: number;
  pairs: number;
  accepted: number;
  raters: number;
};

const BATCH_LIST_SQL = `
  SELECT b.id, b.public_id, b.name, b.state, b.created_at, b.created_by,
    CAST(coalesce(json_extract(b.settings, '$.judgmentsPerPair'), 3) AS INTEGER) AS judgments_per_pair,
    (SELECT count(*) FROM pairs p WHERE p.batch_id = b.id AND p.kind = 'regular' AND p.removed_at IS NULL) AS pairs,
    (SELECT coalesce(sum(min(p.accepted, coalesce(json_extract(b.settings, '$.judgmentsPerPair'), 3))), 0)
       FROM pairs p WHERE p.batch_id = b.id AND p.kind = 'regular' AND p.removed_at IS NULL) AS accepted,
    coalesce((SELECT c.raters FROM batch_rater_counts c WHERE c.batch_id = b.id), 0) AS raters
  FROM batches b`;

export function listBatchesWithProgress(db: Db, limit: number, offset: number): BatchListRow[] {
  return db
    .prepare<{ limit: number; offset: number }, BatchListRow>(`${BATCH_LIST_SQL} ORDER BY b.id DESC LIMIT :limit OFFSET :offset`)
    .all({ limit, offset });
}

export function countBatches(db: Db): number {
  return db.prepare('SELECT count(*) FROM batches').pluck().get() as number;
}

export function findBatchListRow(db: Db, id: number): BatchListRow | undefined {
  return db.prepare<{ id: number }, BatchListRow>(`${BATCH_LIST_SQL} WHERE b.id = :id`).get({ id });
}

export type ComparisonProgress = {
  id: number;
  a: string;
  b: string;
  wins_a: number;
  wins_b: number;
  ties: number;
  win_rate_a: number | null;
  ci95: [number, number] | null;
};

export type BatchProgress = {
  batch_id: number;
  state: string;
  judgments_per_pair: number;
  pairs: number;
  pairs_complete: number;
  accepted: number;
  needed: number;
  percent: number;
  judgments: number;
  raters: number;
  raters_active: number;
  raters_completed: number;
  raters_excluded: number;
  median_seconds: number | null;
  attention_checks: number;
  attention_pass_rate: number | null;
  reports_open: number;
  comparisons: ComparisonProgress[];
  updated_at: string;
};

/** Raters seen within this many minutes count as active now. */
const ACTIVE_MINUTES = 5;

export type RaterCounts = { total: number; active: number; completed: number; excluded: number };

/**
 * A batch's raters (preview ones left out), those active now, completed and excluded: the totals from
 * batch_rater_counts (migration 025), the active ones among the raters still in progress alone.
 */
export function batchRaterCounts(db: Db, batchId: number, now: Date): RaterCounts {
  return (
    db
      .prepare<{ batchId: number; since: string }, RaterCounts>(
        `SELECT coalesce(c.raters, 0) AS total,
           (SELECT count(*) FROM raters r INDEXED BY raters_in_progress
            WHERE r.batch_id = :batchId AND r.status IN ('consent', 'instructions', 'onboarding', 'rating') AND r.provider <> 'preview' AND r.last_seen_at >= :since) AS active,
           coalesce(c.completed, 0) AS completed, coalesce(c.excluded, 0) AS excluded
         FROM (SELECT :batchId AS batch_id) AS b LEFT JOIN batch_rater_counts c ON c.batch_id = b.batch_id`,
      )
      .get({ batchId, since: new Date(now.getTime() - ACTIVE_MINUTES * 60_000).toISOString() }) ?? { total: 0, active: 0, completed: 0, excluded: 0 }
  );
}

/**
 * A batch's attention-check answers and those answered right, from the counters kept with the answers (migration 082):
 * counted from the judgments on each poll of the batch page, they took 71–85 ms at a million judgments.
 */
export function attentionCounts(db: Db, batchId: number): { n: number; passed: number } {
  return (
    db
      .prepare<{ batchId: number }, { n: number; passed: number }>('SELECT attention_checks AS n, attention_passed AS passed FROM batch_judgment_counts WHERE batch_id = :batchId')
      .get({ batchId }) ?? { n: 0, passed: 0 }
  );
}

/**
 * The live figures of a batch page: judgments accepted against needed, pairs complete, raters active now, median time
 * per judgment, attention-check pass rate, and the current win rate of each comparison (excluded raters left out;
 * Wilson 95% interval among decisive judgments, as in the analysis report).
 */
export function batchProgress(db: Db, batchId: number, now: Date): BatchProgress | null {
  const batch = findBatchListRow(db, batchId);
  if (!batch) return null;
  const k = batch.judgments_per_pair;
  const pairsComplete = db
    .prepare("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND accepted >= :k")
    .pluck()
    .get({ batchId, k }) as number;
  const raters = batchRaterCounts(db, batchId, now);
  const judgments = judgmentCounts(db, batchId).regular;
  const attention = attentionCounts(db, batchId);
  const reportsOpen = db.prepare('SELECT count(*) FROM content_reports WHERE batch_id = :batchId AND resolved_at IS NULL').pluck().get({ batchId }) as number;
  const comparisons = db
    .prepare<{ batchId: number }, { id: number; a: string; b: string; wins_a: number; wins_b: number; ties: number }>(
      // Tallies kept by triggers (migration 006) with the judgments, exclusions and removed pairs they follow.
      `SELECT c.id, c.condition_a AS a, c.condition_b AS b,
         coalesce(t.wins_a, 0) AS wins_a, coalesce(t.wins_b, 0) AS wins_b, coalesce(t.ties, 0) AS ties
       FROM comparisons c LEFT JOIN comparison_tallies t ON t.comparison_id = c.id
       WHERE c.batch_id = :batchId ORDER BY c.position`,
    )
    .all({ batchId })
    .map((c) => {
      const decisive = c.wins_a + c.wins_b;
      return { ...c, win_rate_a: decisive > 0 ? c.wins_a / decisive : null, ci95: wilsonInterval(c.wins_a, decisive) };
    });
  const needed = batch.pairs * k;
  return {
    batch_id: batch.id,
    state: batch.state,
    judgments_per_pair: k,
    pairs: batch.pairs,
    pairs_complete: pairsComplete,
    accepted: batch.accepted,
    needed,
    percent: needed > 0 ? Math.round((1000 * batch.accepted) / needed) / 10 : 0,
    judgments,
    raters: raters.total,
    raters_active: raters.active,
    raters_completed: raters.completed,
    raters_excluded: raters.excluded,
    median_seconds: batchMedianSeconds(db, batchId),
    attention_checks: attention.n,
    attention_pass_rate: attention.n > 0 ? attention.passed / attention.n : null,
    reports_open: reportsOpen,
    comparisons,
    updated_at: now.toISOString(),
  };
}
