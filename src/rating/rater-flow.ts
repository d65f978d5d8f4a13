import type { BatchSettings } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { onboardingSize } from './assign-next-pair.js';
import { answeredAllGiven, everyComparisonStopped } from './look-room.queries.js';
import { activeHoldUntil } from './rater-pool.js';
import {
  excludeRater,
  extendReservations,
  type FinishReason,
  finishRater,
  getAssignmentByPublicId,
  getPair,
  getRater,
  insertContentReport,
  type RaterRow,
  releaseReservations,
  setRaterStatus,
  touchRater,
  uncountRaterJudgments,
  voidLiveLeases,
} from './rating.queries.js';
import { recordExclusionAfterLooks } from './sequential.queries.js';

/** Consent given moves on to the instructions; consent refused ends the session with the no-consent outcome. */
export function answerConsent(db: Db, rater: RaterRow, agree: boolean, now: Date): void {
  if (rater.status !== 'consent') return;
  setRaterStatus(db, rater.id, agree ? 'instructions' : 'no_consent', now);
}

export function finishInstructions(db: Db, rater: RaterRow, now: Date): void {
  if (rater.status !== 'instructions') return;
  setRaterStatus(db, rater.id, onboardingSize(db, rater.batch_id) > 0 ? 'onboarding' : 'rating', now);
}

/**
 * The rater's work is done: their cap or promise reached, nothing left for them, or the batch closed or paused while
 * they were working (those get the `partial` code). Their remaining reservations go back to the pool.
 */
export function completeRater(db: Db, rater: RaterRow, reason: FinishReason, now: Date): void {
  db.transaction(() => {
    const current = getRater(db, rater.id);
    if (!current || !['instructions', 'onboarding', 'rating'].includes(current.status)) return;
    // Someone who did every comparison they were promised completed their work, even if the batch closed as they
    // finished (a sequential batch closes itself after the last promised answer: issue 44).
    const fulfilled = (reason === 'closed' || reason === 'paused') && current.promised !== null && current.regular_judged >= current.promised;
    // A sequential batch whose comparisons have all stopped has nothing left for anyone: a rater promised more than
    // the looks let be reserved for them (issue 51) who answered every comparison they were given did all there was,
    // and completed (one who let a comparison lapse finished early, as in any batch that closes).
    const nothingLeft = !fulfilled && reason === 'closed' && everyComparisonStopped(db, current.batch_id) && answeredAllGiven(db, current.id);
    finishRater(db, rater.id, fulfilled ? 'cap' : nothingLeft ? 'exhausted' : reason, now);
    voidLiveLeases(db, rater.id);
    releaseReservations(db, rater.id);
  }).immediate();
}

/**
 * How often a rater's "last seen" (and with it their reserved pairs' hold) is written: not on every page, which made
 * two writes of every request (issue 12). A hold then ends at most this much earlier than the lease time after the
 * rater's last page; leases last minutes.
 */
const SEEN_EVERY_MS = 15_000;

/** A rater seen on any page keeps their reserved pairs for another lease time (they are not holding them idle). */
export function touchRaterHolds(db: Db, rater: RaterRow, leaseMinutes: number, now: Date): void {
  if (now.getTime() - Date.parse(rater.last_seen_at) < SEEN_EVERY_MS) return;
  touchRater(db, rater.id, now);
  if (rater.status === 'instructions' || rater.status === 'onboarding' || rater.status === 'rating') extendReservations(db, rater.id, activeHoldUntil(now, leaseMinutes));
}

/**
 * Withdrawal ends the session and takes the rater's answers out of the pair counters (their data are not used),
 * so other raters fill those places; the rows stay, marked excluded, for the audit of what happened.
 */
export function withdrawRater(db: Db, rater: RaterRow, now: Date): void {
  db.transaction(() => {
    const current = getRater(db, rater.id);
    if (!current || ['completed', 'withdrew', 'screened_out', 'no_consent'].includes(current.status)) return;
    // Leaving before consenting is declining consent: the provider's no-consent code is the right outcome.
    setRaterStatus(db, rater.id, current.status === 'consent' ? 'no_consent' : 'withdrew', now);
    voidLiveLeases(db, rater.id);
    releaseReservations(db, rater.id);
    if (current.excluded === 0) {
      excludeRater(db, rater.id, 'withdrew');
      uncountRaterJudgments(db, rater.id);
      recordExclusionAfterLooks(db, rater.id, 'exclude', 'withdrew', now);
    }
  }).immediate();
}

/** A rater's flag on offensive or broken content: stored for admins against the dialogue shown on that side. */
export function reportContent(
  db: Db,
  rater: RaterRow,
  assignmentPublicId: string,
  which: 'left' | 'right' | 'both',
  reason: string,
  now: Date,
): boolean {
  const assignment = getAssignmentByPublicId(db, assignmentPublicId);
  if (!assignment || assignment.rater_id !== rater.id) return false;
  const pair = getPair(db, assignment.pair_id);
  if (!pair) return false;
  const leftDialogue = assignment.left_side === 'a' ? pair.dialogue_a_id : pair.dialogue_b_id;
  const rightDialogue = assignment.left_side === 'a' ? pair.dialogue_b_id : pair.dialogue_a_id;
  insertContentReport(
    db,
    { batchId: assignment.batch_id, pairId: pair.id, dialogueId: which === 'both' ? null : which === 'left' ? leftDialogue : rightDialogue, raterId: rater.id, reason },
    now,
  );
  return true;
}

/** `partial`: the batch closed or paused while the rater was working (they finished early through no choice of theirs). */
export type Outcome = 'completed' | 'partial' | 'screened_out' | 'no_consent' | 'withdrew';

export function outcomeOf(rater: RaterRow): Outcome | null {
  if (rater.status === 'completed') return rater.finish_reason === 'closed' || rater.finish_reason === 'paused' ? 'partial' : 'completed';
  return rater.status === 'screened_out' || rater.status === 'no_consent' || rater.status === 'withdrew' ? rater.status : null;
}

/** The provider code for an outcome; `partial` falls back to the completed code when the batch sets none. */
export function completionCodeFor(settings: BatchSettings, outcome: Outcome): string | null {
  const codes = settings.provider.completionCodes;
  if (outcome === 'completed') return codes.completed ?? null;
  if (outcome === 'partial') return codes.partial ?? codes.completed ?? null;
  if (outcome === 'screened_out') return codes.screenedOut ?? null;
  if (outcome === 'no_consent') return codes.noConsent ?? null;
  return null;
}

/**
 * The rater's platform submission ended without them (Prolific reports it RETURNED or TIMED-OUT): the comparison they
 * hold and the pairs reserved for them go back to the pool at once, instead of when their lease lapses. Their status
 * and answers are left as they are (a person who carries on is served again from the pool).
 */
export function releaseRaterHolds(db: Db, raterId: number): void {
  db.transaction(() => {
    voidLiveLeases(db, raterId);
    releaseReservations(db, raterId);
  }).immediate();
}
