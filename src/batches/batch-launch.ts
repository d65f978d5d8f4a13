import type { Db } from '../db/connection.js';
import { type CapacityResult, checkBatchCapacity } from './batch-capacity.js';
import { BatchError } from './batch-error.js';
import { getBatchRow } from './batch.queries.js';
import { readBatchSettings } from './batch-settings.js';
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
  return launchChecklist({ ...options, settings, capacity: capacity ?? checkBatchCapacity(db, batchId) });
}

/** Throws a 409 naming every failing blocking item of the checklist, each with the setting that fixes it. */
export function requireLaunchChecklist(db: Db, batchId: number): void {
  const failing = blockingFailures(batchLaunchChecklist(db, batchId));
  if (failing.length > 0) {
    throw new BatchError(`Batch ${batchId} was not opened: the launch checklist fails. ${describeFailures(failing).join(' ')}`, 409);
  }
}
