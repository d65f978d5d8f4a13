import { cachedBatchRow } from '../batches/batch-row-cache.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { type BatchSettings, batchQuestions } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { type AnswerAgain, type CheckedAnswer, type RecordOutcome, checkedAnswers, labelOf, screenOut, winnerOf } from './record-judgment.js';
import { type AssignmentRow, type PairRow, type RaterRow, getPair, getRater } from './rating.queries.js';
import { type StoredAnswer, lastAnsweredAssignmentOf, lookTakenSince, reviseJudgmentRow, shiftAttentionFailures, storedAnswersOf } from './revision.queries.js';

// Issue 49, "the back button": a rater who went back after answering and chose again had their new choice stored
// nowhere, or (the page of the answered comparison redirecting to the next one) as the answer to the next comparison.
// An answer is only ever applied to the assignment of the page it was given on, and the rater may change the answer
// they have just given while nothing has been built on it yet:
// - it is their most recent answer, their session is still going (a finished session's code is already given) and
//   the batch is open;
// - it is not a practice (onboarding) answer: passing onboarding moved the rater on, and a practice pair is labelled
//   as such, so refusing it tells the rater nothing new. An attention check is revisable exactly as a regular pair is
//   (refusing it would tell the rater which pairs are checks); its pass or failure is counted again;
// - no sequential look counted it: a look is the record of what a stopping decision saw (migration 036), so a look
//   taken at or after the answer, at the comparison of a pair that has its K judgments, makes the answer final.
// The revision rewrites the judgment's rows (so K distinct raters per pair and every counter stay as they are: the
// triggers move the win tallies with the winner) and keeps the replaced answer in judgment_revisions (migration 046).

/** Why a rater's answer to an assignment can no longer change, or null when it can. */
export type RevisionRefusal = 'session' | 'batch' | 'not-last' | 'practice' | 'looked';

/** Reads in the caller's transaction, or alone for a page (a POST checks again in its own). */
export function revisionRefusal(db: Db, rater: RaterRow, assignment: AssignmentRow, batch: BatchRow, settings: BatchSettings, pair: PairRow): RevisionRefusal | null {
  if (rater.excluded === 1 || (rater.status !== 'onboarding' && rater.status !== 'rating')) return 'session';
  if (batch.state !== 'open') return 'batch';
  if (lastAnsweredAssignmentOf(db, rater.id) !== assignment.id) return 'not-last';
  if (pair.kind === 'onboarding') return 'practice';
  if (pair.kind === 'regular' && settings.stopping && pair.comparison_id !== null && pair.accepted >= settings.judgmentsPerPair) {
    const answeredAt = storedAnswersOf(db, assignment.id)[0]?.answered_at;
    if (answeredAt !== undefined && lookTakenSince(db, pair.comparison_id, answeredAt)) return 'looked';
  }
  return null;
}

/** The answers as they would be stored are those stored: a form sent again (a double submit, or nothing changed). */
function sameAsStored(stored: StoredAnswer[], answers: CheckedAnswer[]): boolean {
  return answers.length === stored.length && stored.every((s, i) => answers[i]?.choice === s.choice && answers[i]?.reason === s.reason && answers[i]?.confidence === s.confidence);
}

/**
 * An answer to an assignment that has one (recordInTransaction's `again`): the same answer is a double submit; another
 * revises the rater's last answer when it may still change (checked by the rules of a first answer), else is refused
 * as final and stores nothing.
 */
export const answerAgain: AnswerAgain = (db, raterId, assignment, input, now): RecordOutcome => {
  const stored = storedAnswersOf(db, assignment.id);
  const rater = getRater(db, raterId);
  const batch = cachedBatchRow(db, assignment.batch_id);
  const pair = getPair(db, assignment.pair_id);
  if (!rater || !batch || !pair) return { kind: 'duplicate' };
  const settings = readBatchSettings(batch);
  const answers = checkedAnswers(batchQuestions(settings), input, pair);
  if (Array.isArray(answers) && sameAsStored(stored, answers)) return { kind: 'duplicate' };
  if (revisionRefusal(db, rater, assignment, batch, settings, pair) !== null) return { kind: 'final' };
  if (!Array.isArray(answers)) return answers;
  const ids = { batchId: batch.id, raterId };
  const firstBefore = stored[0]?.correct ?? null;
  let firstCorrect: boolean | null = null;
  for (const [i, answer] of answers.entries()) {
    const before = stored.find((s) => s.question_index === i);
    if (!before) continue;
    const winner = winnerOf(answer.choice, assignment.left_side);
    // Gold pairs are judged on the first question alone (record-judgment.ts).
    const correct = i === 0 && pair.kind !== 'regular' ? winner === pair.expected : null;
    if (i === 0) firstCorrect = correct;
    reviseJudgmentRow(db, before, { choice: answer.choice, winner, label: labelOf(winner, pair), reason: answer.reason, confidence: answer.confidence, correct }, ids, now);
  }
  const screenedOut = pair.kind === 'attention' && rescoreAttention(db, raterId, settings, firstBefore === 1, firstCorrect === true, now);
  return { kind: 'revised', screenedOut };
};

/** An attention check's answer changed: its failure is counted again; true when that screens the rater out. */
function rescoreAttention(db: Db, raterId: number, settings: BatchSettings, passedBefore: boolean, passedNow: boolean, now: Date): boolean {
  if (passedBefore === passedNow) return false;
  const failures = shiftAttentionFailures(db, raterId, passedNow ? -1 : 1);
  if (!settings.attentionChecks || failures < settings.attentionChecks.maxFailures) return false;
  screenOut(db, raterId, 'attention', now);
  return true;
}
