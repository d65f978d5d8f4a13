import { recordAudit } from '../audit/audit.queries.js';
import { insertPair } from '../batches/batch.queries.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { chooseReallocation, pairsBought, ratersForDesign } from '../batches/reallocation-plan.js';
import { listUnusedPairs, type UnusedPair } from '../batches/unused-pairs.js';
import type { Db } from '../db/connection.js';
import {
  countAdmittedRaters,
  countFreedJudgments,
  insertReallocation,
  type LimitedBy,
  listOpenDemands,
  listOriginalPairSamples,
  markReallocatedPair,
} from './reallocation.queries.js';
import { listComparisonStops } from './sequential.queries.js';

// Reallocation (issue 44; docs/researcher/sequential-batches.md, "Reallocation"): when a comparison of a batch with
// `stopping.reallocate` stops, for whatever reason, the judgments it will no longer buy (the places of its pairs that
// nobody judged or holds; all K of a pair nobody started) buy new pairs of K judgments for the comparisons still open. Run in the transaction of the answer whose look stopped it, right after the stop.

export type ReallocationOutcome = { id: number; freed: number; added: number; limitedBy: LimitedBy | null; budgetRaters: number; ratersAfter: number };

/** Moves a stopped comparison's unused budget to the open comparisons, and records what moved (or why nothing did). */
export function reallocateAfterStop(db: Db, batchId: number, settings: BatchSettings, stoppedId: number, reason: string, now: Date): ReallocationOutcome | null {
  if (!settings.stopping?.reallocate) return null;
  const k = settings.judgmentsPerPair;
  const freed = countFreedJudgments(db, stoppedId, k);
  const open = listComparisonStops(db, batchId).filter((c) => c.stopped_at === null);
  const budgetRaters = settings.plannedRaters ?? ratersForDesign(listOriginalPairSamples(db, batchId), k, settings.perRaterCap, settings.allowSameSample);
  const unused = pairsBought(freed, k) > 0 && open.length > 0 ? listUnusedPairs(db, batchId, settings) : [];
  const choice = chooseReallocation<UnusedPair & { comparisonId: number }>({
    freed,
    judgmentsPerPair: k,
    perRaterCap: settings.perRaterCap,
    allowSameSample: settings.allowSameSample,
    openDemands: listOpenDemands(db, batchId, k),
    candidates: open.map((c) => (unused[c.position] ?? []).map((p) => ({ ...p, comparisonId: c.id }))),
    admitted: countAdmittedRaters(db, batchId),
    budgetRaters,
  });
  const limitedBy: LimitedBy | null = choice.limitedBy !== null && open.length === 0 ? 'no-open-comparison' : choice.limitedBy;
  const id = insertReallocation(db, {
    batch_id: batchId,
    stopped_comparison_id: stoppedId,
    stop_reason: reason,
    freed_judgments: freed,
    added_pairs: choice.chosen.length,
    judgments_per_pair: k,
    limited_by: limitedBy,
    budget_raters: budgetRaters,
    raters_after: choice.ratersAfter,
    taken_at: now.toISOString(),
  });
  const added: Record<string, number> = {};
  for (const pair of choice.chosen) {
    const pairId = insertPair(db, {
      batchId,
      comparisonId: pair.comparisonId,
      kind: 'regular',
      dialogueA: pair.dialogueA,
      dialogueB: pair.dialogueB,
      expected: null,
      scenarioId: pair.scenarioId,
      castId: pair.castId,
      sampleIndex: pair.sampleIndex,
    });
    markReallocatedPair(db, pairId, id);
    const name = pair.comparison.join(' vs ');
    added[name] = (added[name] ?? 0) + 1;
  }
  recordAudit(
    db,
    {
      actor: 'system',
      action: 'comparison.reallocate',
      targetType: 'batch',
      targetId: batchId,
      details: { comparisonId: stoppedId, reason, judgmentsFreed: freed, pairsAdded: choice.chosen.length, added, limitedBy, budgetRaters, ratersAfter: choice.ratersAfter },
    },
    now,
  );
  return { id, freed, added: choice.chosen.length, limitedBy, budgetRaters, ratersAfter: choice.ratersAfter };
}
