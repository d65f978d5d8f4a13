import type { Db } from '../db/connection.js';
import { type CapacityResult, checkBatchCapacity } from './batch-capacity.js';
import { BatchError } from './batch-error.js';
import { getBatchRow } from './batch.queries.js';
import type { BatchSettings } from './batch.schema.js';
import { readBatchSettings } from './batch-settings.js';
import { wordsPerComparison } from './comparison-words.queries.js';
import { type SessionMinimum, sessionMinimum } from './minimum-time.js';
import { blockingFailures, type ChecklistInput, type ChecklistItem, describeFailures, launchChecklist } from './launch-checklist.js';

export type LaunchOptions = Omit<ChecklistInput, 'settings' | 'capacity'>;

/**
 * The launch checklist of a stored batch (console batch page, `batches open`, and the refusal of `open`); `capacity`:
 * the batch's capacity when the caller has just checked it (the batch page shows it too), else checked here.
 */
export function batchLaunchChecklist(db: Db, batchId: number, options: LaunchOptions = {}, capacity?: CapacityResult): ChecklistItem[] {
  const row = getBatchRow(db, batchId);
  if (!row) throw new BatchError(`No batch with id ${batchId}`, 404);
  const settings = readBatchSettings(row);
  const checked = capacity ?? checkBatchCapacity(db, batchId);
  return launchChecklist({ ...options, settings, capacity: checked, minimum: options.minimum ?? fullSessionMinimum(db, batchId, settings, checked) });
}

/**
 * The least time a full session of a stored batch takes: the comparisons a rater who goes on to their cap is shown
 * (the capacity check's count), each of the batch's mean words. Null when the batch has no regular pair.
 */
function fullSessionMinimum(db: Db, batchId: number, settings: BatchSettings, capacity: CapacityResult): SessionMinimum | null {
  if (capacity.pairs === 0) return null;
  return sessionMinimum(settings, wordsPerComparison(db, batchId, settings.context === 'scenario+profiles+goals'), capacity.sessionComparisons);
}

/** Throws a 409 naming every failing blocking item of the checklist, each with the setting that fixes it. */
export function requireLaunchChecklist(db: Db, batchId: number): void {
  const failing = blockingFailures(batchLaunchChecklist(db, batchId));
  if (failing.length > 0) {
    throw new BatchError(`Batch ${batchId} was not opened: the launch checklist fails. ${describeFailures(failing).join(' ')}`, 409);
  }
}
