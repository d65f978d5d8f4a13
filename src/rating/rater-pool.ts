import type { BatchRow } from '../batches/batch.queries.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { newPublicId } from '../web/ids.js';
import type { EntryIdentity } from './rater-token.js';
import { judgePseudonym } from './judge-pseudonym.js';
import {
  countActiveRatersFromAddress,
  countRatersFromAddress,
  countReachableRegularPairs,
  findRaterByPerson,
  findRaterBySession,
  getRater,
  insertRater,
  insertReservations,
  participantRatedIn,
  type RaterRow,
  recordRaterSession,
  iterateReservablePairs,
  type ReservablePair,
} from './rating.queries.js';
import { releaseLapsedHolds } from './lapsed-holds.js';
import { ADDRESS_HOLD_MINUTES, countAddressHolds, holdAddressPlace, releaseAddressHold, releaseHolder } from './address-holds.queries.js';
import { heldBackComparisons, lookRoom, takeRoom } from './look-room.js';

// Who may enter a batch, and what they are promised (issue 10): one rater per provider identity, no rater before
// consent, nobody let in for whom no regular comparison is left, the regular comparisons promised at consent
// reserved for them, and no client address holding more than its share.

/** A lease or reservation nobody has looked at yet lasts this long (or the lease time, if shorter). */
export const UNVIEWED_HOLD_MINUTES = 2;

export function unviewedHoldUntil(now: Date, leaseMinutes: number): Date {
  return new Date(now.getTime() + Math.min(leaseMinutes, UNVIEWED_HOLD_MINUTES) * 60_000);
}

export function activeHoldUntil(now: Date, leaseMinutes: number): Date {
  return new Date(now.getTime() + leaseMinutes * 60_000);
}

const FINAL_STATUSES = ['completed', 'screened_out', 'withdrew', 'no_consent'];

export function isFinished(rater: RaterRow): boolean {
  return FINAL_STATUSES.includes(rater.status);
}

const BLOCKED_MESSAGE =
  'Our records show that you already took part in an earlier round of this study, and this round is open to new participants only, ' +
  'so you cannot take part again. Nothing has been recorded. Please return the study on your recruitment platform so that your place goes to someone else. ' +
  'Thank you for your earlier help.';

export type Returning =
  | { kind: 'returning'; rater: RaterRow }
  | { kind: 'refused'; message: string }
  /** An MTurk worker who already finished, arriving with a new assignment: there is nothing to submit it for. */
  | { kind: 'finished-elsewhere'; rater: RaterRow };

/**
 * The rater this entry continues, if any: the same provider identity (a new Prolific session or a new MTurk
 * assignment continues that person's rater and becomes its current session), or the same provider session. A
 * session that belongs to another participant id is refused.
 */
export function findReturningRater(db: Db, batch: BatchRow, entry: EntryIdentity, now: Date): Returning | null {
  if (entry.kind === 'link') {
    const rater = findRaterBySession(db, batch.id, 'link', entry.nonce);
    return rater ? { kind: 'returning', rater } : null;
  }
  const session = { sessionId: entry.sessionId, studyId: entry.studyId, submitTo: entry.kind === 'mturk' ? entry.submitTo : null };
  const bySession = findRaterBySession(db, batch.id, entry.kind, entry.sessionId);
  if (bySession) {
    if (bySession.participant_id?.toLowerCase() !== entry.participantId.toLowerCase()) {
      return { kind: 'refused', message: 'This study session belongs to another participant. Please open the study from your own account.' };
    }
    // An earlier session opened again (an MTurk assignment reopened) becomes the current one: its done page submits it.
    if (bySession.session_id !== entry.sessionId) recordRaterSession(db, bySession.id, session, now);
    return { kind: 'returning', rater: getRater(db, bySession.id) ?? bySession };
  }
  const rater = findRaterByPerson(db, batch.id, entry.kind, entry.participantId);
  if (!rater) return null;
  if (entry.kind === 'mturk' && isFinished(rater)) return { kind: 'finished-elsewhere', rater };
  recordRaterSession(db, rater.id, session, now);
  return { kind: 'returning', rater: getRater(db, rater.id) ?? rater };
}

export type Limited = { kind: 'limited'; message: string; retryAfterMinutes: number };

/**
 * The per-address limits of the batch, counted from the raters table so that every server process sees them, with the
 * places consent pages hold for others (migration 045): a person behind a full address is told so before consenting.
 */
export function checkAddressLimits(db: Db, batch: BatchRow, settings: BatchSettings, addressHash: string | null, now: Date): Limited | null {
  if (!addressHash) return null;
  const limits = settings.addressLimits;
  const since = new Date(now.getTime() - limits.windowMinutes * 60_000);
  const holds = countAddressHolds(db, batch.id, addressHash, now);
  if (countRatersFromAddress(db, batch.id, addressHash, since) + holds >= limits.ratersPerWindow) {
    return {
      kind: 'limited',
      retryAfterMinutes: limits.windowMinutes,
      message:
        'Too many people have started this study from your internet connection recently. If you share a connection with others ' +
        `(for example at a university or in a café), please try again in about ${limits.windowMinutes} minutes, or from another connection. Nothing has been recorded.`,
    };
  }
  if (countActiveRatersFromAddress(db, batch.id, addressHash, now) + holds >= limits.activeRaters) {
    const minutes = holds > 0 ? Math.min(settings.leaseMinutes, ADDRESS_HOLD_MINUTES) : settings.leaseMinutes;
    return {
      kind: 'limited',
      retryAfterMinutes: minutes,
      message:
        `Too many sessions of this study are open from your internet connection at the moment: it takes at most ${limits.activeRaters} at once from one connection. ` +
        `If you share a connection with others (for example in an office or at a university), please try again in about ${minutes} minutes, or from another connection. Nothing has been recorded.`,
    };
  }
  return null;
}

/**
 * The regular pairs a new rater can be promised now: at most the per-rater cap, one per scenario sample unless the
 * batch allows more; pairs of samples the rater will not meet in an onboarding pair first, then those of samples
 * they will (so those stay reachable: issue 10, "gold pairs never consume regular work"), least filled first, the
 * comparisons interleaved (issue 51). In a sequential batch, no more of a comparison's pairs are reserved than its
 * next look needs (src/rating/look-room.ts): the reservations may then be fewer than the promise (promisedCount).
 */
export function planPromise(db: Db, batch: BatchRow, settings: BatchSettings, now: Date): number[] {
  releaseLapsedHolds(db, batch.id, now);
  const room = lookRoom(db, batch.id, settings);
  const chosen: number[] = [];
  const samples = new Set<string>();
  const take = (pair: ReservablePair) => {
    if (chosen.length >= settings.perRaterCap || (!settings.allowSameSample && samples.has(pair.sample))) return;
    if (pair.load === 0 && !takeRoom(room, pair.comparison_id)) return;
    samples.add(pair.sample);
    chosen.push(pair.id);
  };
  // Least filled first, pairs of samples met in onboarding after all others: read in load order, the others are taken
  // as they come and those set aside, so the reading stops as soon as the cap is reached without them (the usual
  // case); only when the others run short are the set-aside ones taken, in the same order.
  const primed: ReservablePair[] = [];
  const open = { batchId: batch.id, k: settings.judgmentsPerPair, allowSameSample: settings.allowSameSample, heldBack: heldBackComparisons(room) };
  for (const pair of iterateReservablePairs(db, open)) {
    if (pair.met_in_gold === 1) primed.push(pair);
    else take(pair);
    if (chosen.length >= settings.perRaterCap) break;
  }
  for (const pair of primed) take(pair);
  return chosen;
}

/**
 * How many pairs planPromise would choose now, without choosing them: the open places of a new rater (the very pairs
 * iterateReservablePairs lists, one per scenario sample unless the batch allows more), counted only up to the per-rater cap.
 * The entry page needs just this number; choosing (with its ordering of every open pair) waits for consent. In a
 * sequential batch this is the promise (promisedCount), made when at least one pair can be reserved now.
 */
export function promiseSize(db: Db, batch: BatchRow, settings: BatchSettings, now: Date): number {
  if (settings.stopping) return planPromise(db, batch, settings, now).length === 0 ? 0 : openPlaces(db, batch, settings);
  releaseLapsedHolds(db, batch.id, now);
  return openPlaces(db, batch, settings);
}

/**
 * The comparisons a rater who consents now is promised, `reserved` of them reserved for them. In a sequential batch
 * the reservations stop where the comparisons' next looks leave no room (planPromise), while the promise is what the
 * batch has open for them: the rest is given as looks are taken and room opens, or, if none has when they get there,
 * they finish with their code (issue 51: a rater promised N comparisons gets N or is paid). So raters who arrive while
 * a look is pending are not given short promises that would take more raters than the batch was planned for.
 */
function promisedCount(db: Db, batch: BatchRow, settings: BatchSettings, reserved: number): number {
  return settings.stopping ? Math.max(reserved, openPlaces(db, batch, settings)) : reserved;
}

/** A new rater's open places, up to the per-rater cap (holds already released by the caller). */
function openPlaces(db: Db, batch: BatchRow, settings: BatchSettings): number {
  return countReachableRegularPairs(db, {
    batchId: batch.id,
    raterId: null,
    k: settings.judgmentsPerPair,
    allowSameSample: settings.allowSameSample,
    atMost: settings.perRaterCap,
  });
}

export type EntryDecision =
  | Returning
  | Limited
  | { kind: 'blocked'; message: string }
  /** Nothing left for a new rater: the "study is full" page, before consent. */
  | { kind: 'full' }
  | { kind: 'open'; promise: number };

/** The returning rater of an entry, in one transaction (it may record their new session). */
export function findReturningRaterNow(db: Db, batch: BatchRow, entry: EntryIdentity, now: Date): Returning | null {
  return db.transaction(() => findReturningRater(db, batch, entry, now)).immediate();
}

/**
 * What an entry link leads to, before anyone consents. No rater and no reserved pair is created here; when the consent
 * page is to be shown, a place of the client's address is held for `hold` (address-holds.queries.ts).
 */
export function decideEntry(
  db: Db,
  batch: BatchRow,
  settings: BatchSettings,
  entry: EntryIdentity,
  addressHash: string | null,
  now: Date,
  hold?: { holder: string; raterPublicId: string },
): EntryDecision {
  return db
    .transaction((): EntryDecision => {
      const returning = findReturningRater(db, batch, entry, now);
      if (returning) return returning;
      if (entry.kind !== 'link' && participantRatedIn(db, entry.kind, entry.participantId, settings.blockParticipantsOf)) return { kind: 'blocked', message: BLOCKED_MESSAGE };
      // A participant opening the link again renews their own hold: it is not counted against them.
      if (hold && addressHash) releaseHolder(db, batch.id, hold.holder);
      const limited = checkAddressLimits(db, batch, settings, addressHash, now);
      if (limited) return limited;
      const promise = promiseSize(db, batch, settings, now);
      if (promise === 0) return { kind: 'full' };
      if (hold && addressHash) holdAddressPlace(db, { batchId: batch.id, ...hold, addressHash }, now, Math.min(settings.leaseMinutes, ADDRESS_HOLD_MINUTES));
      return { kind: 'open', promise };
    })
    .immediate();
}

/**
 * The rater row of someone who answered the consent page (agreed: at the instructions; declined: no consent), with
 * their platform session: one definition for the rating and the role-play and writing entries.
 */
export function createEnteredRater(
  db: Db,
  batch: BatchRow,
  entry: EntryIdentity,
  input: { agree: boolean; raterPublicId: string; userAgent: string | null; addressHash: string | null; now: Date; promised: number | null },
): number {
  const participantId = entry.kind === 'link' ? newPublicId(9) : entry.participantId;
  const id = insertRater(
    db,
    {
      batchId: batch.id,
      publicId: input.raterPublicId,
      provider: entry.kind,
      participantId,
      personKey: entry.kind === 'link' ? null : entry.participantId,
      studyId: entry.kind === 'link' ? null : entry.studyId,
      sessionId: entry.kind === 'link' ? entry.nonce : entry.sessionId,
      submitTo: entry.kind === 'mturk' ? entry.submitTo : null,
      userAgent: input.userAgent ? input.userAgent.slice(0, 300) : null,
      addressHash: input.addressHash,
      status: input.agree ? 'instructions' : 'no_consent',
      promised: input.promised,
      judge: judgePseudonym(batch.judge_salt, { provider: entry.kind, participantId, raterPublicId: input.raterPublicId }),
    },
    input.now,
  );
  if (entry.kind !== 'link') recordRaterSession(db, id, { sessionId: entry.sessionId, studyId: entry.studyId, submitTo: entry.kind === 'mturk' ? entry.submitTo : null }, input.now);
  return id;
}

export type Admission = Exclude<EntryDecision, { kind: 'open' }> | { kind: 'admitted'; rater: RaterRow };

/**
 * The answer at consent, in one IMMEDIATE transaction so that limits and reservations hold across processes. Agreeing
 * creates the rater with the pairs promised reserved for them (a short hold, extended when they are seen again);
 * declining records a no-consent rater, so the provider's no-consent code has a session to belong to.
 */
export function admitRater(
  db: Db,
  batch: BatchRow,
  settings: BatchSettings,
  entry: EntryIdentity,
  input: { agree: boolean; raterPublicId: string; userAgent: string | null; addressHash: string | null; now: Date },
): Admission {
  return db
    .transaction((): Admission => {
      const { now } = input;
      const returning = findReturningRater(db, batch, entry, now);
      if (returning) return returning;
      if (entry.kind !== 'link' && participantRatedIn(db, entry.kind, entry.participantId, settings.blockParticipantsOf)) return { kind: 'blocked', message: BLOCKED_MESSAGE };
      // The consent page held a place of this address for this form: agreeing (or declining) takes it, unchecked.
      const held = input.addressHash !== null && releaseAddressHold(db, batch.id, input.raterPublicId, input.addressHash, now);
      const limited = held ? null : checkAddressLimits(db, batch, settings, input.addressHash, now);
      if (limited) return limited;
      const pairIds = input.agree ? planPromise(db, batch, settings, now) : [];
      if (input.agree && pairIds.length === 0) return { kind: 'full' };
      const id = createEnteredRater(db, batch, entry, { ...input, promised: input.agree ? promisedCount(db, batch, settings, pairIds.length) : null });
      insertReservations(db, id, batch.id, pairIds, unviewedHoldUntil(now, settings.leaseMinutes));
      const rater = getRater(db, id);
      if (!rater) throw new Error('rater vanished inside its own transaction');
      return { kind: 'admitted', rater };
    })
    .immediate();
}
