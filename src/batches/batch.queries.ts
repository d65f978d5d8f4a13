import type { Db } from '../db/connection.js';
import type { BatchState } from './batch.schema.js';

export type BatchRow = {
  id: number;
  public_id: string;
  name: string;
  state: BatchState;
  settings: string;
  question_version: number;
  judge_salt: string;
  cloned_from: number | null;
  created_by: string | null;
  created_at: string;
  opened_at: string | null;
  closed_at: string | null;
};

const BATCH_COLUMNS =
  'id, public_id, name, state, settings, question_version, judge_salt, cloned_from, created_by, created_at, opened_at, closed_at';

export function insertBatch(
  db: Db,
  batch: { publicId: string; name: string; settings: string; judgeSalt: string; clonedFrom: number | null; createdBy: string },
  now: Date,
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO batches (public_id, name, state, settings, question_version, judge_salt, cloned_from, created_by, created_at)
         VALUES (:publicId, :name, 'draft', :settings, 1, :judgeSalt, :clonedFrom, :createdBy, :now)`,
      )
      .run({ ...batch, now: now.toISOString() }).lastInsertRowid,
  );
}

export function getBatchRow(db: Db, id: number): BatchRow | undefined {
  return db.prepare<{ id: number }, BatchRow>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE id = :id`).get({ id });
}

export function getBatchRowByPublicId(db: Db, publicId: string): BatchRow | undefined {
  return db.prepare<{ publicId: string }, BatchRow>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE public_id = :publicId`).get({ publicId });
}

export function listBatchRows(db: Db): BatchRow[] {
  return db.prepare<[], BatchRow>(`SELECT ${BATCH_COLUMNS} FROM batches ORDER BY id`).all();
}

export function setBatchState(db: Db, id: number, state: BatchState, now: Date): void {
  db.prepare(
    `UPDATE batches SET state = :state,
       opened_at = CASE WHEN :state = 'open' AND opened_at IS NULL THEN :now ELSE opened_at END,
       closed_at = CASE WHEN :state = 'closed' THEN :now ELSE closed_at END
     WHERE id = :id`,
  ).run({ id, state, now: now.toISOString() });
}

export function updateBatchSettingsRow(db: Db, id: number, name: string, settings: string, questionVersion: number): void {
  db.prepare('UPDATE batches SET name = :name, settings = :settings, question_version = :questionVersion WHERE id = :id').run({
    id,
    name,
    settings,
    questionVersion,
  });
}

export function insertBatchRun(db: Db, batchId: number, runId: number): void {
  db.prepare('INSERT OR IGNORE INTO batch_runs (batch_id, run_id) VALUES (:batchId, :runId)').run({ batchId, runId });
}

export function insertComparison(db: Db, batchId: number, position: number, conditionA: string, conditionB: string): number {
  return Number(
    db
      .prepare('INSERT INTO comparisons (batch_id, position, condition_a, condition_b) VALUES (:batchId, :position, :conditionA, :conditionB)')
      .run({ batchId, position, conditionA, conditionB }).lastInsertRowid,
  );
}

export type NewPair = {
  batchId: number;
  comparisonId: number | null;
  kind: 'regular' | 'attention' | 'onboarding';
  dialogueA: number;
  dialogueB: number;
  expected: 'a' | 'b' | null;
  scenarioId: string;
  castId: number;
  sampleIndex: number;
  /**
   * A regular pair's place in the serving order (src/batches/serve-order.ts, migration 053); left out, a regular pair
   * comes after every regular pair of the batch (a pair added by reallocation).
   */
  serveOrder?: number;
};

export function insertPair(db: Db, pair: NewPair): number {
  return Number(
    db
      .prepare(
        `INSERT INTO pairs (batch_id, comparison_id, kind, dialogue_a_id, dialogue_b_id, expected, scenario_id, cast_id, sample_index, serve_order)
         VALUES (:batchId, :comparisonId, :kind, :dialogueA, :dialogueB, :expected, :scenarioId, :castId, :sampleIndex,
           coalesce(:serveOrder, CASE WHEN :kind = 'regular' THEN (SELECT coalesce(max(serve_order), -1) + 1 FROM pairs WHERE batch_id = :batchId AND kind = 'regular') END))`,
      )
      .run({ ...pair, serveOrder: pair.serveOrder ?? null }).lastInsertRowid,
  );
}

/** Removes the pair set of a batch that has no judgments yet, so it can be formed again from new settings. */
export function deletePairSet(db: Db, batchId: number): void {
  db.prepare('DELETE FROM assignments WHERE batch_id = :batchId').run({ batchId });
  db.prepare('DELETE FROM content_reports WHERE batch_id = :batchId').run({ batchId });
  db.prepare('DELETE FROM pairs WHERE batch_id = :batchId').run({ batchId });
  db.prepare('DELETE FROM comparisons WHERE batch_id = :batchId').run({ batchId });
  db.prepare('DELETE FROM batch_runs WHERE batch_id = :batchId').run({ batchId });
}

/** Deletes a batch; its pairs, comparisons, raters and the rest go with it (ON DELETE CASCADE). */
export function deleteBatchRow(db: Db, batchId: number): void {
  db.prepare('DELETE FROM batches WHERE id = :batchId').run({ batchId });
}

/** The batches cloned from this one (batches.cloned_from, which does not cascade). */
/** The batches named exactly `name`, oldest first (a database made before migration 046 may hold several). */
export function listBatchIdsNamed(db: Db, name: string): number[] {
  return db.prepare<{ name: string }, number>('SELECT id FROM batches WHERE name = :name ORDER BY id').pluck().all({ name });
}

export function listClonesOf(db: Db, batchId: number): number[] {
  return db.prepare<{ batchId: number }, number>('SELECT id FROM batches WHERE cloned_from = :batchId ORDER BY id').pluck().all({ batchId });
}

export function countBatchJudgments(db: Db, batchId: number): number {
  return db.prepare<{ batchId: number }, number>('SELECT count(*) FROM judgments WHERE batch_id = :batchId AND question_index = 0').pluck().get({ batchId }) ?? 0;
}

/** Looks taken at the batch's comparisons under its sequential rule (the table is written by src/rating/). */
export function countBatchLooks(db: Db, batchId: number): number {
  return db.prepare<{ batchId: number }, number>('SELECT count(*) FROM sequential_looks WHERE batch_id = :batchId').pluck().get({ batchId }) ?? 0;
}

/**
 * `judgments`: answered comparisons, onboarding and attention-check answers included; `regular`: those of regular pairs
 * alone, the judgments the console's batch page and the analysis count (before exclusions).
 */
export type BatchCounts = { pairs: number; goldPairs: number; judgments: number; regular: number; raters: number; completedPairs: number };

/**
 * A batch's counts, as every console batch page and `batches list` show them. Read from indexes alone and the counters
 * kept by triggers: the regular pairs in use from pairs_by_batch less the removed ones (pairs_removed; usually none),
 * never from the pairs' rows, which cost 14 ms a page at 20,000 pairs (issue 12).
 */
export function batchCounts(db: Db, batchId: number, judgmentsPerPair: number): BatchCounts {
  const row = db
    .prepare<{ batchId: number; k: number }, BatchCounts>(
      `SELECT
         (SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular')
           - (SELECT count(*) FROM pairs INDEXED BY pairs_removed WHERE batch_id = :batchId AND removed_at IS NOT NULL AND kind = 'regular') AS pairs,
         (SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind IN ('onboarding', 'attention')) AS goldPairs,
         coalesce((SELECT judgments FROM batch_judgment_counts WHERE batch_id = :batchId), 0) AS judgments,
         coalesce((SELECT regular FROM batch_judgment_counts WHERE batch_id = :batchId), 0) AS regular,
         coalesce((SELECT raters FROM batch_rater_counts WHERE batch_id = :batchId), 0) AS raters,
         (SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND accepted >= :k)
           - (SELECT count(*) FROM pairs INDEXED BY pairs_removed WHERE batch_id = :batchId AND removed_at IS NOT NULL AND kind = 'regular' AND accepted >= :k) AS completedPairs`,
    )
    .get({ batchId, k: judgmentsPerPair });
  return row ?? { pairs: 0, goldPairs: 0, judgments: 0, regular: 0, raters: 0, completedPairs: 0 };
}

export type SampleDialogueRow = {
  id: number;
  run_id: number;
  scenario_id: string;
  cast_id: number;
  sample_index: number;
  mode: string;
  model: string;
  state: string;
  visible_turns: number;
};

/**
 * Dialogues of the given runs that a pair may use: derived gold variants are never compared as conditions, and a
 * collected dialogue only once a researcher accepted it (issue 52, review before rating).
 */
export function listSampleDialogues(db: Db, runIds: number[]): SampleDialogueRow[] {
  if (runIds.length === 0) return [];
  return db
    .prepare<{ runIds: string }, SampleDialogueRow>(
      `SELECT d.id, d.run_id, d.scenario_id, d.cast_id, d.sample_index, d.mode, d.model, d.state,
         (SELECT count(*) FROM turns t WHERE t.dialogue_id = d.id AND t.action <> 'none') AS visible_turns
       FROM dialogues d
       WHERE d.run_id IN (SELECT value FROM json_each(:runIds)) AND d.origin <> 'derived'
         AND (d.origin <> 'collected' OR EXISTS (SELECT 1 FROM collected_dialogues c WHERE c.dialogue_id = d.id AND c.review = 'accepted'))
       ORDER BY d.scenario_id, d.cast_id, d.sample_index, d.id`,
    )
    .all({ runIds: JSON.stringify(runIds) });
}

export type CapacityRows = { pairSamples: string[]; stoppedPairs: number; onboardingPairs: number; attentionPairs: number; goldFromRatedSamples: number };

/**
 * What the capacity check reads of a stored batch: its regular pairs' samples (without those a sequential rule stopped:
 * they are served to nobody new, and the pairs reallocation added in their place are counted) and its gold pairs.
 */
export function capacityRows(db: Db, batchId: number): CapacityRows {
  const pairSamples = db
    .prepare<{ batchId: number }, string>(
      `SELECT json_array(scenario_id, cast_id, sample_index) FROM pairs
       WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND stopped_at IS NULL ORDER BY id`,
    )
    .pluck()
    .all({ batchId });
  const stoppedPairs =
    db
      .prepare<{ batchId: number }, number>("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND stopped_at IS NOT NULL")
      .pluck()
      .get({ batchId }) ?? 0;
  const gold = db
    .prepare<{ batchId: number }, { onboarding: number; attention: number; rated: number }>(
      `SELECT coalesce(sum(g.kind = 'onboarding'), 0) AS onboarding, coalesce(sum(g.kind = 'attention'), 0) AS attention,
         coalesce(sum(EXISTS (SELECT 1 FROM pairs p WHERE p.batch_id = g.batch_id AND p.kind = 'regular' AND p.removed_at IS NULL
           AND p.scenario_id = g.scenario_id AND p.cast_id = g.cast_id AND p.sample_index = g.sample_index)), 0) AS rated
       FROM pairs g WHERE g.batch_id = :batchId AND g.kind <> 'regular' AND g.removed_at IS NULL`,
    )
    .get({ batchId }) ?? { onboarding: 0, attention: 0, rated: 0 };
  return { pairSamples, stoppedPairs, onboardingPairs: gold.onboarding, attentionPairs: gold.attention, goldFromRatedSamples: gold.rated };
}
