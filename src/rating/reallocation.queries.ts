import type { Db } from '../db/connection.js';

// Reallocation in sequential batches (migration 042; docs/researcher/sequential-batches.md, "Reallocation"): what a
// stop frees, what the open pairs still need, and the record of each reallocation with the pairs it added.

/**
 * Judgments a stopped comparison will no longer buy: the places of its stopped pairs that nobody judged or holds (a
 * lease or reservation is still served). A pair nobody started gives all K.
 */
export function countFreedJudgments(db: Db, comparisonId: number, k: number): number {
  return (
    db
      .prepare<{ id: number; k: number }, number>(
        `SELECT coalesce(sum(max(0, :k - accepted - leased - reserved)), 0) FROM pairs INDEXED BY pairs_by_comparison
         WHERE comparison_id = :id AND kind = 'regular' AND removed_at IS NULL AND stopped_at IS NOT NULL AND accepted < :k`,
      )
      .pluck()
      .get({ id: comparisonId, k }) ?? 0
  );
}

/** Judgments the batch's open pairs still need beyond those held by admitted raters (leases, reservations), by sample. */
export function listOpenDemands(db: Db, batchId: number, k: number): { sample: string; demand: number }[] {
  return db
    .prepare<{ batchId: number; k: number }, { sample: string; demand: number }>(
      `SELECT json_array(scenario_id, cast_id, sample_index) AS sample, max(0, :k - accepted - leased - reserved) AS demand
       FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND stopped_at IS NULL AND accepted < :k`,
    )
    .all({ batchId, k });
}

/** Raters who consented (each is paid); previews by the researcher are not raters of the study. */
export function countAdmittedRaters(db: Db, batchId: number): number {
  return (
    db
      .prepare<{ batchId: number }, number>("SELECT count(*) FROM raters WHERE batch_id = :batchId AND status <> 'no_consent' AND provider <> 'preview'")
      .pluck()
      .get({ batchId }) ?? 0
  );
}

/** The sample of each regular pair the batch was formed with (not those reallocation added). */
export function listOriginalPairSamples(db: Db, batchId: number): string[] {
  return db
    .prepare<{ batchId: number }, string>(
      `SELECT json_array(scenario_id, cast_id, sample_index) FROM pairs
       WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND reallocation_id IS NULL ORDER BY id`,
    )
    .pluck()
    .all({ batchId });
}

export type LimitedBy = 'no-open-comparison' | 'no-unused-pair' | 'raters';

export type NewReallocation = {
  batch_id: number;
  stopped_comparison_id: number;
  stop_reason: string;
  freed_judgments: number;
  added_pairs: number;
  judgments_per_pair: number;
  limited_by: LimitedBy | null;
  budget_raters: number;
  raters_after: number;
  taken_at: string;
};

export function insertReallocation(db: Db, row: NewReallocation): number {
  return Number(
    db
      .prepare(
        `INSERT INTO sequential_reallocations (batch_id, stopped_comparison_id, stop_reason, freed_judgments, added_pairs, judgments_per_pair, limited_by, budget_raters, raters_after, taken_at)
         VALUES (:batch_id, :stopped_comparison_id, :stop_reason, :freed_judgments, :added_pairs, :judgments_per_pair, :limited_by, :budget_raters, :raters_after, :taken_at)`,
      )
      .run(row).lastInsertRowid,
  );
}

export function markReallocatedPair(db: Db, pairId: number, reallocationId: number): void {
  db.prepare('UPDATE pairs SET reallocation_id = :reallocationId WHERE id = :pairId').run({ pairId, reallocationId });
}

export type ReallocationRow = NewReallocation & {
  id: number;
  stopped: string;
  /** The pairs added, by receiving comparison ("A vs B": n). */
  receivers: { comparison: string; pairs: number }[];
};

/** A batch's reallocations in the order they happened, each with the comparisons that received its pairs. */
export function listReallocations(db: Db, batchId: number): ReallocationRow[] {
  const rows = db
    .prepare<{ batchId: number }, NewReallocation & { id: number; stopped: string }>(
      `SELECT r.id, r.batch_id, r.stopped_comparison_id, r.stop_reason, r.freed_judgments, r.added_pairs, r.judgments_per_pair, r.limited_by, r.budget_raters, r.raters_after, r.taken_at, c.condition_a || ' vs ' || c.condition_b AS stopped
       FROM sequential_reallocations r JOIN comparisons c ON c.id = r.stopped_comparison_id
       WHERE r.batch_id = :batchId ORDER BY r.id`,
    )
    .all({ batchId });
  const receivers = db
    .prepare<{ batchId: number }, { reallocation_id: number; comparison: string; pairs: number }>(
      `SELECT p.reallocation_id, c.condition_a || ' vs ' || c.condition_b AS comparison, count(*) AS pairs
       FROM pairs p JOIN comparisons c ON c.id = p.comparison_id
       WHERE p.batch_id = :batchId AND p.reallocation_id IS NOT NULL
       GROUP BY p.reallocation_id, c.position ORDER BY p.reallocation_id, c.position`,
    )
    .all({ batchId });
  return rows.map((r) => ({ ...r, receivers: receivers.filter((x) => x.reallocation_id === r.id).map(({ comparison, pairs }) => ({ comparison, pairs })) }));
}
