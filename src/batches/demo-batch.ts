import type { Db } from '../db/connection.js';
import { DEMO_MODEL, DEMO_RUN_NAME } from '../demo/seed-demo.js';
import { findRun } from '../generation/run.queries.js';
import { BatchError } from './batch-error.js';
import { transitionBatch } from './batch.commands.js';
import type { BatchSettingsInput } from './batch.schema.js';
import { createBatch } from './create-batch.js';

export const DEMO_BATCH_NAME = 'Demo: SCRIPT vs AGENTS (hand-written examples)';

export function demoBatchSettings(): BatchSettingsInput {
  return {
    name: DEMO_BATCH_NAME,
    runs: [DEMO_RUN_NAME],
    comparisons: [[`SCRIPT:${DEMO_MODEL}`, `AGENTS:${DEMO_MODEL}`]],
    judgmentsPerPair: 3,
    allowTie: true,
    reason: 'optional',
    perRaterCap: 10,
    leaseMinutes: 20,
    provider: { kind: 'link', params: {}, completionCodes: { completed: 'DEMO-DONE' }, sandbox: false },
    estimatedMinutes: 5,
    consent:
      'This is a **demonstration** of the rating flow. The conversations were written by hand as illustrations; ' +
      'they are not model output. Your answers are stored in this installation only.',
    instructions: 'Read the situation, then both conversations, and choose the one that sounds more natural.',
  };
}

/**
 * The open demo batch over the demo run, made once on first start so a new installation shows the rater flow
 * at once (the start-up banner prints its link). Returns the batch id, or null when present or impossible.
 */
export function ensureDemoBatch(db: Db, now: Date): number | null {
  if (!findRun(db, DEMO_RUN_NAME)) return null;
  const exists = db.prepare("SELECT 1 FROM batches WHERE created_by = 'system' AND name = :name").get({ name: DEMO_BATCH_NAME });
  if (exists) return null;
  try {
    const created = createBatch(db, demoBatchSettings(), { actor: 'system', now });
    transitionBatch(db, created.batchId, 'open', 'system', now);
    return created.batchId;
  } catch (error) {
    // Demo content without a SCRIPT/AGENTS pair is not worth stopping the server for.
    if (error instanceof BatchError) return null;
    throw error;
  }
}
