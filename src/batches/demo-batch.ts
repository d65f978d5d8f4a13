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
    // Roomy enough to click through again and again (and for a room of people behind one address): 50 persons per
    // pair (the most a batch allows) instead of 3, so a few walks and an abandoned tab no longer fill it for 20
    // minutes, and short leases give an abandoned tab's places back soon.
    judgmentsPerPair: 50,
    allowTie: true,
    reason: 'optional',
    perRaterCap: 10,
    leaseMinutes: 5,
    addressLimits: { ratersPerWindow: 200, windowMinutes: 60, activeRaters: 50 },
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

/**
 * A researcher's work in the database: runs other than the demo seed, batches other than the demo batch. The demo is
 * kept out of such a database (a study database made with the CLI, say), so it never mixes with a study's raters.
 * Returns a short description ("2 runs, 1 batch"), or null when there is none.
 */
export function researchWorkIn(db: Db): string | null {
  const runs = db.prepare("SELECT COUNT(*) FROM runs WHERE kind <> 'demo'").pluck().get() as number;
  const batches = db
    .prepare("SELECT COUNT(*) FROM batches WHERE NOT (created_by = 'system' AND name = :name)")
    .pluck()
    .get({ name: DEMO_BATCH_NAME }) as number;
  const parts = [runs > 0 ? `${runs} run${runs === 1 ? '' : 's'}` : '', batches > 0 ? `${batches} batch${batches === 1 ? '' : 'es'}` : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : null;
}

const DEMO_PAUSED_MARK = 'demo_paused_for_research';

/**
 * Pauses the open demo batch of a database that now holds a researcher's work, once: an admin who opens it again
 * (console or CLI) keeps it open. Returns true when it paused it now.
 */
export function pauseDemoForResearch(db: Db, now: Date): boolean {
  if (db.prepare('SELECT 1 FROM settings WHERE key = :key').get({ key: DEMO_PAUSED_MARK })) return false;
  const open = db
    .prepare<{ name: string }, { id: number }>("SELECT id FROM batches WHERE created_by = 'system' AND name = :name AND state = 'open'")
    .all({ name: DEMO_BATCH_NAME });
  for (const batch of open) transitionBatch(db, batch.id, 'pause', 'system', now);
  db.prepare("INSERT INTO settings (key, value) VALUES (:key, 'yes') ON CONFLICT (key) DO NOTHING").run({ key: DEMO_PAUSED_MARK });
  return open.length > 0;
}
