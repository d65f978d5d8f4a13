import { cachedBatchRow } from '../batches/batch-row-cache.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { type BatchSettings, type Question, batchQuestions } from '../batches/batch.schema.js';
import { type Db, transactionOf } from '../db/connection.js';
import {
  countAccepted,
  countGoldPairs,
  excludeRater,
  getAssignmentByPublicId,
  getPair,
  getRater,
  insertAnswerSignals,
  insertJudgment,
  judgmentExistsFor,
  recordGoldAnswer,
  setAssignmentState,
  setRaterStatus,
  releaseReservations,
  uncountRaterJudgments,
  voidLiveLeases,
  type AssignmentRow,
  type PairRow,
  type RaterRow,
} from './rating.queries.js';
import { checkAnswerSignals } from './answer-signals.js';
import { type Choice, REASON_MAX, reasonTooLong } from './rater.schema.js';
import { applyStoppingRule } from './sequential-stopping.js';
import { recordExclusionAfterLooks } from './sequential.queries.js';

export type { Choice };

/**
 * A rater's answers to one assignment: `choice`/`reason` answer the batch's first question (the only one of most
 * batches); `laterAnswers` the questions after it, in page order (issue 16). All are stored together or not at all.
 */
export type JudgmentInput = {
  assignmentPublicId: string;
  choice: Choice;
  reason: string | null;
  /** How sure the rater is, 1-5, of a which-is-real answer (issue 53); null or absent for none. */
  confidence?: number | null;
  activeMs: number | null;
  /** The page's `signals` field as sent (issue 43); checked here against the server's own times. */
  signals?: string | null;
  laterAnswers?: { choice: Choice; reason: string | null; confidence?: number | null }[];
};

export type RecordOutcome =
  | { kind: 'stored'; late: boolean; gold: 'onboarding' | 'attention' | null; correct: boolean | null; screenedOut: boolean }
  /** The same assignment was answered before with the same answer (a double submit): nothing changes, a success. */
  | { kind: 'duplicate' }
  /** The rater's last answer, changed (issue 49, revise-judgment.ts); `screenedOut` when the change failed a check. */
  | { kind: 'revised'; screenedOut: boolean }
  /** Another answer to an assignment whose answer can no longer change (revise-judgment.ts): stored nothing. */
  | { kind: 'final' }
  /** A late answer to a pair that already has K judgments: stored nothing, thanked. */
  | { kind: 'full' }
  /** The batch closed and this lease had ended: stored nothing; the rater finishes with the `partial` code. */
  | { kind: 'closed' }
  /** `question`: the on-page number (from 1) of the question whose answer was refused, when it is about one. */
  | { kind: 'rejected'; status: 400 | 403 | 404 | 409 | 410; code: string; message: string; question?: number };

function reject(status: 400 | 403 | 404 | 409 | 410, code: string, message: string, question?: number): RecordOutcome {
  return question === undefined ? { kind: 'rejected', status, code, message } : { kind: 'rejected', status, code, message, question };
}

/** Why this assignment takes no answer now (its batch, its lease or its rater's session), or null when it does. */
function refusalOf(assignment: AssignmentRow, rater: RaterRow, batch: BatchRow, now: Date): RecordOutcome | null {
  if (batch.state === 'draft') return reject(410, 'batch_closed', 'This study is closed and no longer accepts answers. Thank you for your time; you may close this page.');
  // Closing a batch does not strand the people working on it: an answer to a comparison whose lease is still
  // running is stored (issue 10); after the lease, the rater is thanked with their code instead.
  if (batch.state === 'closed' && !(assignment.state === 'leased' && assignment.expires_at > now.toISOString())) return { kind: 'closed' };
  if (assignment.state === 'void' || (rater.status !== 'onboarding' && rater.status !== 'rating')) {
    return reject(409, 'session_ended', 'Your session has ended, so this answer cannot be recorded. Open the study link again to see your outcome and its code.');
  }
  return null;
}

export type CheckedAnswer = { questionId: string; choice: Choice; reason: string | null; confidence: number | null };

/** How a refusal names the question it is about: only when the page has several. */
function onQuestion(several: boolean, i: number): string {
  return several ? ` for question ${i + 1}` : '';
}

/**
 * Each question's answer, checked against that question's rules (a page names a question by its number on it):
 * the answers to store, one per question in page order, or the refusal of the first that breaks a rule.
 */
export function checkedAnswers(questions: Question[], input: JudgmentInput, pair: PairRow): CheckedAnswer[] | RecordOutcome {
  const given = [{ choice: input.choice, reason: input.reason, confidence: input.confidence }, ...(input.laterAnswers ?? [])];
  const several = questions.length > 1;
  const answers: CheckedAnswer[] = [];
  for (const [i, question] of questions.entries()) {
    const answer = given[i];
    if (!answer) return reject(400, 'answer_missing', several ? `Please answer question ${i + 1}.` : 'Please choose one of the conversations.', i + 1);
    if (answer.choice === 'tie' && !question.allowTie) return reject(400, 'tie_not_allowed', `Please choose Conversation 1 or Conversation 2${onQuestion(several, i)}.`, i + 1);
    const reason = answer.reason?.trim() ? answer.reason.trim() : null;
    if (reason && reason.length > REASON_MAX) return reject(400, 'reason_too_long', reasonTooLong(reason.length), i + 1);
    if (question.reason === 'required' && !reason && pair.kind === 'regular') {
      const message = several ? `Please give a short reason for your answer to question ${i + 1}.` : 'Please give a short reason for your choice.';
      return reject(400, 'reason_required', message, i + 1);
    }
    const confidence = confidenceOf(question, answer.confidence, pair, several, i);
    if ('refused' in confidence) return confidence.refused;
    answers.push({ questionId: question.id, choice: answer.choice, reason: question.reason === 'off' ? null : reason, confidence: confidence.value });
  }
  return answers;
}

/** A which-is-real answer's confidence as stored (issue 53): null when the question asks none or none was given. */
function confidenceOf(question: Question, given: number | null | undefined, pair: PairRow, several: boolean, i: number): { value: number | null } | { refused: RecordOutcome } {
  if ((question.confidence ?? 'off') === 'off') return { value: null };
  const value = given ?? null;
  if (value !== null && !(Number.isInteger(value) && value >= 1 && value <= 5))
    return { refused: reject(400, 'bad_confidence', `Please choose how sure you are${onQuestion(several, i)}, from 1 to 5.`, i + 1) };
  if (value === null && question.confidence === 'required' && pair.kind === 'regular')
    return { refused: reject(400, 'confidence_required', `Please say how sure you are${onQuestion(several, i)}, from 1 to 5.`, i + 1) };
  return { value };
}

/** The side a choice picks, from which conversation was shown on the left. */
export function winnerOf(choice: Choice, leftSide: AssignmentRow['left_side']): 'a' | 'b' | 'tie' {
  return choice === 'tie' ? 'tie' : choice === 'left' ? leftSide : leftSide === 'a' ? 'b' : 'a';
}

/** A judgment's label: the condition its winner names, or TIE; never a screen side. */
export function labelOf(winner: 'a' | 'b' | 'tie', pair: PairRow): string {
  return winner === 'tie' ? 'TIE' : ((winner === 'a' ? pair.condition_a : pair.condition_b) ?? winner);
}

/** Takes a rater off the study: their leases and reservations go back and their judgments stop counting. */
export function screenOut(db: Db, raterId: number, why: string, now: Date): void {
  setRaterStatus(db, raterId, 'screened_out', now);
  excludeRater(db, raterId, why);
  voidLiveLeases(db, raterId);
  releaseReservations(db, raterId);
  uncountRaterJudgments(db, raterId);
  // A sequential batch's looks taken with their judgments stand; later looks leave them out (issue 51).
  recordExclusionAfterLooks(db, raterId, 'exclude', why, now);
}

/**
 * Counts an onboarding or attention answer to the rater and moves them on (onboarding passed) or screens them out
 * (onboarding failed, too many attention failures); true when it screened them out. A regular answer changes nothing.
 */
function scoreGoldAnswer(db: Db, raterId: number, batch: BatchRow, settings: BatchSettings, pair: PairRow, correct: boolean | null, now: Date): boolean {
  if (pair.kind === 'onboarding') {
    recordGoldAnswer(db, raterId, 'onboarding', correct === true);
    const after = getRater(db, raterId);
    const total = countGoldPairs(db, batch.id, 'onboarding');
    if (after && after.onboarding_answered >= total) {
      const threshold = settings.onboarding?.threshold ?? 0.75;
      if (after.onboarding_correct / Math.max(1, total) >= threshold) {
        setRaterStatus(db, raterId, 'rating', now);
        return false;
      }
      screenOut(db, raterId, 'onboarding', now);
      return true;
    }
  } else if (pair.kind === 'attention') {
    recordGoldAnswer(db, raterId, 'attention', correct === true);
    const after = getRater(db, raterId);
    if (after && settings.attentionChecks && after.attention_failures >= settings.attentionChecks.maxFailures) {
      screenOut(db, raterId, 'attention', now);
      return true;
    }
  }
  return false;
}

/**
 * What an answer to an assignment already answered becomes, in the same transaction: by default a double submit (a
 * success that changes nothing); the rater's pages pass revise-judgment.ts's answerAgain, which may revise it.
 */
export type AnswerAgain = (db: Db, raterId: number, assignment: AssignmentRow, input: JudgmentInput, now: Date) => RecordOutcome;
const asDuplicate: AnswerAgain = () => ({ kind: 'duplicate' });

/**
 * recordJudgment's work, in a write transaction the caller holds (an answer's POST also takes the next lease in it).
 * Not a savepoint of its own: a throw rolls the caller's transaction back anyway, and a savepoint's journal of the
 * twenty-odd pages an answer changes outgrew SQLite's in-memory limit (64 KB) into a temporary file created and
 * deleted for every answer (issue 12).
 */
export function recordInTransaction(db: Db, raterId: number, input: JudgmentInput, now: Date, again: AnswerAgain = asDuplicate): RecordOutcome {
  const assignment = getAssignmentByPublicId(db, input.assignmentPublicId);
  // Another rater's assignment looks exactly like an unknown one: its existence is not the asker's business.
  if (!assignment || assignment.rater_id !== raterId) return reject(404, 'no_assignment', 'This comparison is not one of yours. Go back to your current comparison.');
  if (judgmentExistsFor(db, assignment.id)) return again(db, raterId, assignment, input, now);
  const rater = getRater(db, raterId);
  const batch = cachedBatchRow(db, assignment.batch_id);
  const pair = getPair(db, assignment.pair_id);
  if (!rater || !batch || !pair) return reject(404, 'no_assignment', 'This comparison no longer exists. Open the study link again to go on.');
  const refusal = refusalOf(assignment, rater, batch, now);
  if (refusal) return refusal;
  const settings = readBatchSettings(batch);
  const answers = checkedAnswers(batchQuestions(settings), input, pair);
  if (!Array.isArray(answers)) return answers;

  const late = assignment.state === 'expired' || assignment.expires_at <= now.toISOString();
  const isGold = pair.kind !== 'regular';
  // A regular pair never gets more than K accepted judgments: a late answer (or one racing a late answer) to a
  // full pair is dropped, not stored as a surplus (issue 4, Assignment).
  if (!isGold && pair.accepted >= settings.judgmentsPerPair) {
    if (assignment.state === 'leased') setAssignmentState(db, assignment.id, 'expired');
    return { kind: 'full' };
  }
  const firstWinner = winnerOf(input.choice, assignment.left_side);
  // Onboarding and attention checks are judged on the first question alone: the pair's expected answer is to it.
  const correct = isGold ? firstWinner === pair.expected : null;
  const elapsed = Math.max(0, now.getTime() - Date.parse(assignment.leased_at));
  // The server's own shown and submitted times bound every rater's time: a page without the script (or a client that
  // skips it) is timed by them, so answering faster than a person can read is seen whatever the client (issue 40).
  const activeMs = input.activeMs === null ? elapsed : Math.min(Math.max(0, Math.round(input.activeMs)), elapsed);
  // One row per question; the first (question_index 0) stands for the comparison in every counter (migration 013).
  for (const [i, answer] of answers.entries()) {
    const winner = winnerOf(answer.choice, assignment.left_side);
    insertJudgment(db, {
      assignmentId: assignment.id,
      batchId: batch.id,
      pairId: pair.id,
      raterId,
      questionId: answer.questionId,
      questionIndex: i,
      leftSide: assignment.left_side,
      choice: answer.choice,
      winner,
      label: labelOf(winner, pair),
      reason: answer.reason,
      confidence: answer.confidence,
      isGold,
      correct: i === 0 ? correct : null,
      shownAt: assignment.leased_at,
      submittedAt: now.toISOString(),
      activeMs,
      questionVersion: batch.question_version,
      late,
    });
  }
  const signals = checkAnswerSignals(input.signals, answers.reduce((n, a) => n + (a.reason?.length ?? 0), 0), elapsed);
  if (signals) insertAnswerSignals(db, assignment.id, batch.id, raterId, signals);
  setAssignmentState(db, assignment.id, 'answered');
  countAccepted(db, pair.id, assignment.left_side, 1);
  if (!isGold && settings.stopping) {
    applyStoppingRule(db, batch, settings, pair.comparison_id, pair.accepted + 1 === settings.judgmentsPerPair, now);
  }
  const screenedOut = scoreGoldAnswer(db, raterId, batch, settings, pair, correct, now);
  return { kind: 'stored', late, gold: isGold ? (pair.kind as 'onboarding' | 'attention') : null, correct, screenedOut };
}

const recordTransaction = transactionOf(recordInTransaction);

/**
 * Stores a rater's answer to an assignment (one row per question), with the pair's counters, in one IMMEDIATE
 * transaction: an assignment is answered once and a pair never gets more than K, whatever the concurrency.
 */
export function recordJudgment(db: Db, raterId: number, input: JudgmentInput, now: Date, again: AnswerAgain = asDuplicate): RecordOutcome {
  return recordTransaction(db).immediate(raterId, input, now, again);
}
