import { readBatchSettings } from '../batches/batch-settings.js';
import { JsonColumnError } from '../db/json-column.js';
import type { Db } from '../db/connection.js';
import { answersAgainst } from './answers-against.js';
import { findBatchForAnalysis, loadBatchJudgments } from './batch-judgments.queries.js';
import { oneWayIcc, type RealismPilot } from './realism-plan.js';
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

/**
 * A pilot realism batch's intraclass correlations of right answers to its which-is-real question (issue 53), by pair
 * and by rater, each on the answers less their condition's mean (so differences between conditions are not taken for
 * clustering); null when there is no such batch, a string saying why when it has no which-is-real question.
 */
export function loadRealismPilot(db: Db, batchId: number): RealismPilot | string | null {
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) return null;
  const question = batch.questions.find((q) => q.kind === 'which-is-real' && q.real !== null);
  if (!question?.real) return `batch ${batchId} (${batch.name}) has no which-is-real question`;
  const a = answersAgainst(loadBatchJudgments(db, batch, question.id).table, question.real);
  const n = a.chosen.length;
  const sums = new Map<number, { n: number; right: number }>();
  for (let i = 0; i < n; i++) {
    const c = sums.get(a.condition[i] as number) ?? { n: 0, right: 0 };
    c.n += 1;
    c.right += 1 - (a.chosen[i] as number);
    sums.set(a.condition[i] as number, c);
  }
  const centred = Float64Array.from(a.chosen, (x, i) => {
    const c = sums.get(a.condition[i] as number) as { n: number; right: number };
    return 1 - x - c.right / c.n;
  });
  const right = [...sums.values()].reduce((s, c) => s + c.right, 0);
  return { batch: { id: batch.id, name: batch.name }, answers: n, icc_pair: oneWayIcc(centred, a.item), icc_rater: oneWayIcc(centred, a.rater), accuracy: n > 0 ? right / n : null };
}
