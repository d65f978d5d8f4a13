import { recordAudit } from '../audit/audit.queries.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { setBatchState } from '../batches/batch.queries.js';
import type { BatchSettings, StoppingRule } from '../batches/batch.schema.js';
import { comparisonAlpha, decideLook, lookDue, lookSchedule, pairMajority } from '../batches/sequential-rule.js';
import type { Db } from '../db/connection.js';
import {
  completedPairVotes,
  countComparisonPairs,
  countOutstandingHolds,
  getComparisonStop,
  insertLook,
  listComparisonStops,
  listLooks,
  stopComparison,
} from './sequential.queries.js';

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
  const decision = decideLook({ alpha, spending: rule.spending, futility: rule.futility, maxPairs: pairs, earlier: earlier.map((l) => l.information_fraction), completed, winsA, winsB, final });
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
}

/**
 * When every comparison has stopped and no lease or promise is outstanding, the batch closes itself: nobody who
 * consented is left waiting for comparisons they were promised, and no new rater is let in.
 */
function closeWhenAllStopped(db: Db, batch: BatchRow, now: Date): void {
  if (batch.state !== 'open') return;
  const comparisons = listComparisonStops(db, batch.id);
  if (comparisons.length === 0 || comparisons.some((c) => c.stopped_at === null)) return;
  if (countOutstandingHolds(db, batch.id, now) > 0) return;
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
}
