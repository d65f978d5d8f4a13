import { readBatchSettings } from '../batches/batch-settings.js';
import { JsonColumnError } from '../db/json-column.js';
import type { Db } from '../db/connection.js';
import { findBatchForAnalysis, loadBatchJudgments } from './batch-judgments.queries.js';
import { pilotDesign, type PilotDesign } from './study-plan.js';

export type Pilot = PilotDesign & {
  batch: { id: number; name: string };
  /** The pilot's own settings, defaults for a plan that does not give them. */
  settings: { judgmentsPerPair: number; perRaterCap: number; pay: string; estimatedMinutes: number } | null;
};

/** A pilot batch's design figures (intra-pair correlation, tie share) and settings; null when there is no such batch. */
export function loadPilot(db: Db, batchId: number): Pilot | null {
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) return null;
  const design = pilotDesign(loadBatchJudgments(db, batch).table);
  const row = db.prepare<{ id: number }, { settings: string }>('SELECT settings FROM batches WHERE id = :id').get({ id: batchId });
  let settings: Pilot['settings'] = null;
  try {
    const parsed = row ? readBatchSettings({ id: batchId, settings: row.settings }) : null;
    if (parsed) settings = { judgmentsPerPair: parsed.judgmentsPerPair, perRaterCap: parsed.perRaterCap, pay: parsed.pay, estimatedMinutes: parsed.estimatedMinutes };
  } catch (error) {
    // Settings are validated on write; unreadable ones only lose the defaults they would give.
    if (!(error instanceof JsonColumnError)) throw error;
  }
  return { ...design, batch: { id: batch.id, name: batch.name }, settings };
}
