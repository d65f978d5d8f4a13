import { recordAudit } from '../audit/audit.queries.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { getBatchRow, setBatchState } from '../batches/batch.queries.js';
import type { BatchSettings, StoppingRule } from '../batches/batch.schema.js';
import { decideReallocatedLook, maximumChanged } from '../batches/reallocated-look.js';
import { comparisonAlpha, decideLook, lookDue, lookSchedule, pairMajority } from '../batches/sequential-rule.js';
import type { Db } from '../db/connection.js';
import {
  completedPairVotes,
  countComparisonPairs,
  countOutstandingHolds,
  getComparisonStop,
  insertLook,
  listComparisonStops,
  listOpenBatchesAllStopped,
  listLooks,
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
  const { pairs, completed } = countComparisonPairs(db, comparisonId, k);
  if (pairs === 0) return;
  const schedule = lookSchedule(rule, pairs);
  const earlier = listLooks(db, comparisonId);
  const last = earlier[earlier.length - 1];
  if (!lookDue(schedule, completed, last?.completed_pairs ?? 0)) return;
  let winsA = 0;
  let winsB = 0;
  let ties = 0;
  for (const votes of completedPairVotes(db, comparisonId, k)) {
    const outcome = pairMajority(votes.a, votes.b);
    if (outcome === 'a') winsA++;
    else if (outcome === 'b') winsB++;
    else ties++;
  }
  const alpha = comparisonAlpha(rule, settings.comparisons.length);
  const final = completed >= pairs;
  // A maximum raised by reallocation since the earlier looks: bounds over the new maximum (src/batches/reallocated-look.ts).
  const decision = maximumChanged(earlier.map((l) => ({ maxPairs: l.max_pairs })), pairs)
    ? decideReallocatedLook({ alpha, spending: rule.spending, futility: rule.futility, maxPairs: pairs, earlier: earlier.map((l) => ({ fraction: l.information_fraction, maxPairs: l.max_pairs, critical: l.critical_z })), winsA, winsB, final })
    : decideLook({ alpha, spending: rule.spending, futility: rule.futility, maxPairs: pairs, earlier: earlier.map((l) => l.information_fraction), completed, winsA, winsB, final });
  if (!decision) return;
  const look = earlier.length + 1;
  insertLook(db, {
    batch_id: batch.id,
    comparison_id: comparisonId,
    look,
    planned_looks: Math.max(look, schedule.length),
    max_pairs: pairs,
    completed_pairs: winsA + winsB + ties,
    ties,
    wins_a: winsA,
    wins_b: winsB,
    information_fraction: decision.fraction,
    alpha,
    critical_z: Number.isFinite(decision.critical) ? decision.critical : null,
    nominal_alpha: decision.nominal,
    futility_z: decision.futility,
    p_value: decision.pValue,
    z: decision.z,
    decision: decision.decision,
    taken_at: now.toISOString(),
  });
  if (decision.decision === 'continue') return;
  const released = stopComparison(db, comparisonId, decision.decision, now, k);
  recordAudit(
    db,
    {
      actor: 'system',
      action: 'comparison.stop',
      targetType: 'batch',
      targetId: batch.id,
      details: { comparisonId, look, plannedLooks: Math.max(look, schedule.length), reason: decision.decision, pValue: decision.pValue, nominalAlpha: decision.nominal, pairsNotStarted: released },
    },
    now,
  );
  reallocateAfterStop(db, batch.id, settings, comparisonId, decision.decision, now);
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
