import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { findBatchForAnalysis, loadBatchJudgments } from './batch-judgments.queries.js';
import { analyzePooled, type PooledReport } from './pooled-analysis.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from './analyze.js';

/** A pooling request that cannot be served (fewer than two batches, an unknown one): a 4xx, one line in the CLI. */
export class PooledBatchesError extends UserFacingError {}

/** Reads each batch's judgments (exclusions applied as in its own analysis) and pools them. */
export function computePooledAnalysis(db: Db, batchIds: number[], options: { seed?: number; bootstrap?: number; anchor?: string; now?: Date } = {}): PooledReport {
  const ids = [...new Set(batchIds)];
  if (ids.length < 2) throw new PooledBatchesError('pooling needs at least two different batches');
  const severalQuestions: string[] = [];
  const input = ids.map((id) => {
    const batch = findBatchForAnalysis(db, id);
    if (!batch) throw new PooledBatchesError(`no batch ${id}`, 404);
    // Pooling reads each batch's first question (issue 16): one answer per rater and pair, as in its own report's top.
    if (batch.questions.length > 1) severalQuestions.push(`batch ${batch.id}: ${(batch.questions[0] as { id: string }).id}`);
    return { id: batch.id, name: batch.name, table: loadBatchJudgments(db, batch).table };
  });
  const report = analyzePooled(input, { seed: options.seed ?? DEFAULT_SEED, bootstrap: options.bootstrap ?? DEFAULT_BOOTSTRAP, anchor: options.anchor, now: options.now });
  // Batches that share no condition with the others cannot be pooled into one scale: say so rather than guess.
  const shared = report.batches.filter((b) => report.batches.some((o) => o.id !== b.id && o.conditions.some((c) => b.conditions.includes(c))));
  if (shared.length < report.batches.length) {
    const apart = report.batches.filter((b) => !shared.includes(b)).map((b) => b.id);
    report.notes.unshift(`batch${apart.length > 1 ? 'es' : ''} ${apart.join(', ')} share${apart.length > 1 ? '' : 's'} no condition with the other batches: nothing connects ${apart.length > 1 ? 'them' : 'it'} to the pooled scale.`);
  }
  if (severalQuestions.length > 0)
    report.notes.push(`Batches with several questions are pooled on their first question (${severalQuestions.join('; ')}).`);
  return report;
}
