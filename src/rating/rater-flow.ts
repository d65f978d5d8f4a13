import type { BatchRow } from '../batches/batch.queries.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { newPublicId } from '../web/ids.js';
import { onboardingSize } from './assign-next-pair.js';
import type { EntryParams } from './providers.js';
import {
  excludeRater,
  findRaterBySession,
  getAssignmentByPublicId,
  getPair,
  getRater,
  insertContentReport,
  insertRater,
  participantRatedIn,
  type RaterRow,
  setRaterStatus,
  touchRater,
  uncountRaterJudgments,
  voidLiveLeases,
} from './rating.queries.js';

export type EnterOutcome =
  | { kind: 'rater'; rater: RaterRow; created: boolean }
  | { kind: 'refused'; message: string }
  | { kind: 'blocked'; message: string };

const BLOCKED_MESSAGE =
  'Our records show that you already took part in an earlier round of this study, and this round is open to new participants only, ' +
  'so you cannot take part again. Nothing has been recorded. Please return the study on your recruitment platform so that your place goes to someone else. ' +
  'Thank you for your earlier help.';

/**
 * Finds or makes the rater for an entry: one rater per provider session (Prolific SESSION_ID, MTurk assignmentId),
 * so a participant who comes back resumes; the same session under another participant id is refused.
 * A plain link issues a new anonymous rater each time.
 * A participant id with a rater in one of `blockedBatchIds` (the batch's blockParticipantsOf) is turned away before
 * any row is made; plain-link raters cannot be recognised, so the block does not apply to them.
 */
export function enterRater(
  db: Db,
  batch: BatchRow,
  params: Extract<EntryParams, { kind: 'link' | 'prolific' | 'mturk' }>,
  userAgent: string | null,
  now: Date,
  blockedBatchIds: readonly number[] = [],
): EnterOutcome {
  return db
    .transaction((): EnterOutcome => {
      if (params.kind !== 'link') {
        const existing = findRaterBySession(db, batch.id, params.kind, params.sessionId);
        if (existing) {
          if (existing.participant_id !== params.participantId) {
            return { kind: 'refused', message: 'This study session belongs to another participant. Please open the study from your own account.' };
          }
          touchRater(db, existing.id, now);
          return { kind: 'rater', rater: existing, created: false };
        }
        if (participantRatedIn(db, params.kind, params.participantId, blockedBatchIds)) return { kind: 'blocked', message: BLOCKED_MESSAGE };
      }
      const id = insertRater(
        db,
        {
          batchId: batch.id,
          publicId: newPublicId(),
          provider: params.kind,
          participantId: params.kind === 'link' ? newPublicId(9) : params.participantId,
          studyId: params.kind === 'link' ? null : params.studyId,
          sessionId: params.kind === 'link' ? newPublicId() : params.sessionId,
          submitTo: params.kind === 'mturk' ? params.submitTo : null,
          userAgent: userAgent ? userAgent.slice(0, 300) : null,
        },
        now,
      );
      const rater = getRater(db, id);
      if (!rater) throw new Error('rater vanished inside its own transaction');
      return { kind: 'rater', rater, created: true };
    })
    .immediate();
}

/** Consent given moves on to the instructions; consent refused ends the session with the no-consent outcome. */
export function answerConsent(db: Db, rater: RaterRow, agree: boolean, now: Date): void {
  if (rater.status !== 'consent') return;
  setRaterStatus(db, rater.id, agree ? 'instructions' : 'no_consent', now);
}

export function finishInstructions(db: Db, rater: RaterRow, now: Date): void {
  if (rater.status !== 'instructions') return;
  setRaterStatus(db, rater.id, onboardingSize(db, rater.batch_id) > 0 ? 'onboarding' : 'rating', now);
}

/** The rater's work is done (cap reached, or nothing left after at least one answer). */
export function completeRater(db: Db, rater: RaterRow, now: Date): void {
  if (rater.status === 'rating') setRaterStatus(db, rater.id, 'completed', now);
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
    if (current.excluded === 0) {
      excludeRater(db, rater.id, 'withdrew');
      uncountRaterJudgments(db, rater.id);
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

export type Outcome = 'completed' | 'screened_out' | 'no_consent' | 'withdrew';

export function outcomeOf(rater: RaterRow): Outcome | null {
  return rater.status === 'completed' || rater.status === 'screened_out' || rater.status === 'no_consent' || rater.status === 'withdrew' ? rater.status : null;
}

export function completionCodeFor(settings: BatchSettings, outcome: Outcome): string | null {
  const codes = settings.provider.completionCodes;
  if (outcome === 'completed') return codes.completed ?? null;
  if (outcome === 'screened_out') return codes.screenedOut ?? null;
  if (outcome === 'no_consent') return codes.noConsent ?? null;
  return null;
}
