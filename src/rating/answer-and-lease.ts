import { cachedBatchRow } from '../batches/batch-row-cache.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { type Db, transactionOf } from '../db/connection.js';
import { type AssignOutcome, assignInTransaction } from './assign-next-pair.js';
import { currentSessionStart, getRaterByPublicId, type RaterRow, raterProgress } from './rating.queries.js';
import { type JudgmentInput, type RecordOutcome, recordInTransaction } from './record-judgment.js';
import { answerAgain } from './revise-judgment.js';

/** How far an answer's transaction got, and what it read and leased on the way (read when it throws too). */
export type AnswerStep = { leasing: boolean; answered: RaterRow | undefined; next: AssignOutcome | null };

/**
 * An MTurk multi-HIT study's current HIT: it ends when the rater's regular judgments reach `regularEnd`, and its
 * pages are counted from `judgedAtStart`. Null when one HIT covers the whole session.
 */
export function hitWindowOf(db: Db, settings: BatchSettings, rater: RaterRow | null): { regularEnd: number; judgedAtStart: number } | null {
  const perHit = settings.provider.kind === 'mturk' ? settings.provider.comparisonsPerHit : undefined;
  if (!perHit) return null;
  const start = rater ? currentSessionStart(db, rater) : undefined;
  return { regularEnd: (start?.regular_at_start ?? 0) + perHit, judgedAtStart: start?.judged_at_start ?? 0 };
}

/** In an MTurk multi-HIT study: this HIT's comparisons are done, and the rater has more to do in another HIT. */
export function isHitDone(db: Db, settings: BatchSettings, rater: RaterRow): boolean {
  const hit = hitWindowOf(db, settings, rater);
  if (!hit || rater.status !== 'rating') return false;
  const regular = raterProgress(db, rater.id).regularJudged;
  return regular >= hit.regularEnd && regular < Math.min(settings.perRaterCap, rater.promised ?? settings.perRaterCap);
}

/**
 * The answer and the rater's next lease in one IMMEDIATE transaction: one commit per answered comparison, not two
 * (issue 12). The next lease is taken only where the next step would take it: the rater is still rating, the batch
 * is open (as this transaction reads it) and no HIT of theirs just ended. Neither is a savepoint of its own: a
 * savepoint's journal of the pages they change outgrew SQLite's in-memory limit into a temporary file created and
 * deleted for every answer. `step` says how far it got: should taking the lease fail, the whole transaction is
 * rolled back and the caller stores the answer alone.
 */
export const answerAndLease = transactionOf(
  (db: Db, rater: RaterRow, input: JudgmentInput, now: Date, random: () => number, step: AnswerStep): RecordOutcome => {
    // An answer to an assignment already answered may revise it (issue 49); either way the rater goes on from here.
    const recorded = recordInTransaction(db, rater.id, input, now, answerAgain);
    if (recorded.kind !== 'stored' && recorded.kind !== 'duplicate' && recorded.kind !== 'revised' && recorded.kind !== 'final') return recorded;
    step.answered = getRaterByPublicId(db, rater.public_id);
    const answered = step.answered;
    if (!answered || (answered.status !== 'onboarding' && answered.status !== 'rating')) return recorded;
    const batch = cachedBatchRow(db, answered.batch_id);
    if (!batch || batch.state !== 'open' || isHitDone(db, readBatchSettings(batch), answered)) return recorded;
    step.leasing = true;
    step.next = assignInTransaction(db, answered.id, { now, random, redirecting: true, rater: answered });
    return recorded;
  },
);
