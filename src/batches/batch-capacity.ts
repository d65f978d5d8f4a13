import type { Db } from '../db/connection.js';
import { BatchError } from './batch-error.js';
import { capacityRows, getBatchRow } from './batch.queries.js';
import type { BatchSettings } from './batch.schema.js';
import { readBatchSettings } from './batch-settings.js';
import { type CapacityResult, computeCapacity, describeCapacity } from './capacity-check.js';
import type { PlannedPair } from './form-pairs.js';
import { sampleKeyOf } from './gold-sources.js';

export type { CapacityProblem, CapacityResult } from './capacity-check.js';

function inputOf(settings: BatchSettings, pairSamples: string[], gold: { onboarding: number; attention: number; fromRated: number }, stoppedPairs = 0) {
  return {
    stoppedPairs,
    judgmentsPerPair: settings.judgmentsPerPair,
    perRaterCap: settings.perRaterCap,
    allowSameSample: settings.allowSameSample,
    plannedRaters: settings.plannedRaters,
    pairSamples,
    gold: {
      onboardingWanted: settings.onboarding?.pairs ?? 0,
      onboardingPairs: gold.onboarding,
      attentionRate: settings.attentionChecks?.rate ?? null,
      attentionPairs: gold.attention,
      fromRatedSamples: gold.fromRated,
    },
  };
}

/** The capacity of a pair set not yet stored (the console's Preview pairs). */
export function planCapacity(settings: BatchSettings, pairs: PlannedPair[], gold: { onboarding: number; attention: number; fromRated: number }): CapacityResult {
  return computeCapacity(inputOf(settings, pairs.map(sampleKeyOf), gold));
}

/**
 * Whether every regular pair of a stored batch can reach K judgments under its settings, with the numbers: the
 * console's batch page and launch checklist show it; creating and opening a batch refuse when `ok` is false.
 */
export function checkBatchCapacity(db: Db, batchId: number): CapacityResult {
  const row = getBatchRow(db, batchId);
  if (!row) throw new BatchError(`No batch with id ${batchId}`, 404);
  const settings = readBatchSettings(row);
  const rows = capacityRows(db, batchId);
  return computeCapacity(inputOf(settings, rows.pairSamples, { onboarding: rows.onboardingPairs, attention: rows.attentionPairs, fromRated: rows.goldFromRatedSamples }, rows.stoppedPairs));
}

/** Throws a BatchError naming the numbers when some regular pair of the batch cannot reach K judgments. */
export function requireBatchCapacity(db: Db, batchId: number, refusal: string, status: 400 | 409): CapacityResult {
  const result = checkBatchCapacity(db, batchId);
  if (!result.ok) throw new BatchError(`${refusal} ${describeCapacity(result).replace(/\n/g, ' ')}`, status);
  return result;
}
