import { recordAudit } from '../audit/audit.queries.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { getBatchRow, setBatchState } from '../batches/batch.queries.js';
import type { BatchSettings, StoppingRule } from '../batches/batch.schema.js';
import type { LookStatistic } from '../batches/look-statistic.js';
import type { PastLook } from '../batches/reallocated-look.js';
import { evaluateLook, type LookPair, waitsForRaters } from '../batches/sequential-look.js';
import type { LookDecision } from '../batches/sequential-rule.js';
import type { Db } from '../db/connection.js';
import {
  type CompletedPairJudgment,
  completedPairJudgments,
  countComparisonPairs,
  countBatchRegularPairs,
  countOutstandingHolds,
  getComparisonStop,
  insertLook,
  listComparisonStops,
  listOpenBatchesAllStopped,
  listLooks,
  markPairsEntered,
  type SequentialLookRow,
  stopComparison,
} from './sequential.queries.js';
import { reallocateAfterStop } from './sequential-reallocation.js';

// Group-sequential stopping on the answer path (issue 44). A look is considered only when an answer completes a pair
// (gives it its K-th judgment), never on other requests: counting the comparison's completed pairs reads one index
// range, and the pairs' votes are read only when a look is due.

/** Called in the answer's transaction after a regular judgment is stored. */
export function applyStoppingRule(db: Db, batch: BatchRow, settings: BatchSettings, comparisonId: number | null, completedPair: boolean, now: Date): void {
  const rule = settings.stopping;
  if (!rule || comparisonId === null) return;
  const comparison = getComparisonStop(db, comparisonId);
  if (!comparison) return;
  if (comparison.stopped_at === null) {
    if (!completedPair) return;
    takeLookIfDue(db, batch, settings, rule, comparisonId, now);
  }
  closeWhenAllStopped(db, batch, now);
}

function takeLookIfDue(db: Db, batch: BatchRow, settings: BatchSettings, rule: StoppingRule, comparisonId: number, now: Date): void {
  const k = settings.judgmentsPerPair;
  const { pairs: maxPairs, completed } = countComparisonPairs(db, comparisonId, k);
  const earlier = listLooks(db, comparisonId);
  // The pairs' judgments are read only when a look is due (evaluateLook asks for them then).
  const evaluation = evaluateLook({
    rule,
    comparisons: settings.comparisons.length,
    earlier: earlier.map(pastLook),
    maxPairs,
    completed,
    pairs: () => lookPairs(completedPairJudgments(db, comparisonId, k)),
    waitForRaters: () => waitsForRaters(settings, countBatchRegularPairs(db, batch.id)),
  });
  if (!evaluation) return;
  const { statistic, decision, plannedLooks, alpha } = evaluation;
  const look = earlier.length + 1;
  insertLook(db, lookRow({ batchId: batch.id, comparisonId, look, plannedLooks, maxPairs, alpha, now }, statistic, decision));
  markPairsEntered(db, comparisonId, k, look);
  if (decision.decision === 'continue') return;
  const released = stopComparison(db, comparisonId, decision.decision, now, k);
  recordAudit(
    db,
    {
      actor: 'system',
      action: 'comparison.stop',
      targetType: 'batch',
      targetId: batch.id,
      details: { comparisonId, look, plannedLooks, reason: decision.decision, pValue: decision.pValue, nominalAlpha: decision.nominal, statistic: statistic.statistic, pairsNotStarted: released },
    },
    now,
  );
  reallocateAfterStop(db, batch.id, settings, comparisonId, decision.decision, now);
}

/** A stored look as the rule reads it: where it stood, the maximum of its time, the pairs it counted. */
function pastLook(l: SequentialLookRow): PastLook {
  return { fraction: l.information_fraction, information: l.information ?? l.information_fraction, maxPairs: l.max_pairs, completed: l.completed_pairs, observedInformation: l.observed_information };
}

/** The completed pairs' judgments grouped by pair, with the look each pair first entered. */
function lookPairs(rows: readonly CompletedPairJudgment[]): LookPair[] {
  const byPair = new Map<number, LookPair & { votes: LookPair['votes'][number][] }>();
  for (const row of rows) {
    let pair = byPair.get(row.pair_id);
    if (!pair) byPair.set(row.pair_id, (pair = { entered: row.entered, votes: [] }));
    pair.votes.push({ rater: row.rater, vote: row.winner === 'a' ? 1 : row.winner === 'b' ? -1 : 0 });
  }
  return [...byPair.values()];
}

type LookAt = { batchId: number; comparisonId: number; look: number; plannedLooks: number; maxPairs: number; alpha: number; now: Date };

/** The row a look stores: what it saw, the statistic it used, where it stood and what it was held to. */
function lookRow(at: LookAt, s: LookStatistic, d: LookDecision): Omit<SequentialLookRow, 'id'> {
  return {
    batch_id: at.batchId,
    comparison_id: at.comparisonId,
    look: at.look,
    planned_looks: at.plannedLooks,
    max_pairs: at.maxPairs,
    completed_pairs: s.completed,
    ties: s.ties,
    wins_a: s.winsA,
    wins_b: s.winsB,
    information_fraction: d.fraction,
    alpha: at.alpha,
    critical_z: Number.isFinite(d.critical) ? d.critical : null,
    nominal_alpha: d.nominal,
    futility_z: d.futility,
    p_value: d.pValue,
    z: d.z,
    decision: d.decision,
    taken_at: at.now.toISOString(),
    statistic: s.statistic,
    statistic_reason: s.reason,
    raters: s.raters,
    df: s.df,
    estimate: s.estimate,
    standard_error: s.standardError,
    design_effect: s.designEffect,
    information: d.information,
    observed_information: s.observedInformation,
    cumulative_alpha: d.cumulativeAlpha,
    ends_design: d.endsDesign ? 1 : 0,
  };
}

/**
 * When every comparison has stopped and no lease or promise is outstanding, the batch closes itself: nobody who
 * consented is left waiting for comparisons they were promised, and no new rater is let in.
 */
function closeWhenAllStopped(db: Db, batch: BatchRow, now: Date, known?: StoppedComparisons): boolean {
  if (batch.state !== 'open') return false;
  const comparisons = known ?? stoppedComparisons(db, batch.id);
  if (!comparisons) return false;
  if (countOutstandingHolds(db, batch.id, now) > 0) return false;
  setBatchState(db, batch.id, 'closed', now);
  recordAudit(
    db,
    {
      actor: 'system',
      action: 'batch.close',
      targetType: 'batch',
      targetId: batch.id,
      details: { from: batch.state, reason: 'sequential-stopping', comparisons: comparisons.map((c) => ({ id: c.id, reason: c.stop_reason })) },
    },
    now,
  );
  return true;
}

/**
 * Closes the batch if every comparison has stopped and no hold is left, for the moments a hold ends without an
 * answer (src/rating/lapsed-holds.ts). Batches without a stopping rule have no stopped comparison: one small read.
 */
export function closeIfAllStopped(db: Db, batchId: number, now: Date): boolean {
  const comparisons = stoppedComparisons(db, batchId);
  if (!comparisons) return false;
  const row = getBatchRow(db, batchId);
  return row ? closeWhenAllStopped(db, row, now, comparisons) : false;
}

type StoppedComparisons = ReturnType<typeof listComparisonStops>;

/** The batch's comparisons when it has some and every one has stopped; null otherwise. */
function stoppedComparisons(db: Db, batchId: number): StoppedComparisons | null {
  const comparisons = listComparisonStops(db, batchId);
  return comparisons.length > 0 && comparisons.every((c) => c.stopped_at !== null) ? comparisons : null;
}

/**
 * Closes every open batch whose comparisons have all stopped and whose last hold lapsed, for batches nobody visits
 * any more (the server runs it periodically; it keeps no state, so a restart loses nothing). Returns the batches closed.
 */
export function closeStoppedBatches(db: Db, now: Date): number[] {
  const ids = listOpenBatchesAllStopped(db);
  return ids.filter((id) => db.transaction(() => closeIfAllStopped(db, id, now)).immediate());
}
