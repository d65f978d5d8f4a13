import { cachedBatchRow } from '../batches/batch-row-cache.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { type Db, transactionOf } from '../db/connection.js';
import { newPublicId } from '../web/ids.js';
import { attentionChecksDue } from './attention-schedule.js';
import { activeHoldUntil, unviewedHoldUntil } from './rater-pool.js';
import {
  type AssignmentRow,
  type CandidatePair,
  candidateGoldPairs,
  candidateRegularPairs,
  countActiveRatersFromAddress,
  countGoldPairs,
  countReservationsOf,
  endExcludedSession,
  getRaterAddressHash,
  getRater,
  insertAssignment,
  liveLeaseOf,
  type RaterRow,
  progressOf,
  releaseReservation,
  reservedCandidatePairs,
  setAssignmentState,
  setRaterStatus,
} from './rating.queries.js';
import { releaseLapsedHolds } from './lapsed-holds.js';
import { heldBackComparisons, lookRoom } from './look-room.js';

/**
 * `redirecting`: the lease is made by an answer whose response redirects the browser straight to its page, so it is
 * leased as viewed, for the full lease time (the page then writes nothing). Otherwise (consent, a reload, GET /next)
 * it is a short hold until its page is served. `rater`: the rater's row as the caller read it inside the transaction
 * this one joins (an answer's), so it is not read again.
 */
export type AssignDeps = { now: Date; random: () => number; redirecting?: boolean; rater?: RaterRow };

export type AssignOutcome =
  | { kind: 'assigned'; assignment: AssignmentRow; resumed: boolean }
  /** The rater's work is done: their cap is reached, or no pair is left for them. */
  | { kind: 'done'; reason: 'cap' | 'exhausted'; judged: number }
  | { kind: 'batch-not-open'; state: string }
  /** Too many raters from this rater's client address hold comparisons now (issue 10). */
  | { kind: 'limited' }
  | { kind: 'not-rating'; status: string };

/**
 * Counterbalancing (issue 4): the side shown on the left is chosen when the lease is made, so that for every pair
 * the left-a and left-b counts (accepted judgments plus live leases) differ by at most one; ties are broken at random.
 */
export function chooseLeftSide(pair: Pick<CandidatePair, 'accepted' | 'accepted_left_a' | 'live' | 'live_left_a'>, random: () => number): 'a' | 'b' {
  const leftA = pair.accepted_left_a + pair.live_left_a;
  const leftB = pair.accepted + pair.live - leftA;
  if (leftA < leftB) return 'a';
  if (leftB < leftA) return 'b';
  return random() < 0.5 ? 'a' : 'b';
}

/** Fewest judgments (and live leases) first, so a batch fills evenly; among equals, one at random. */
function pickLeastFilled(candidates: CandidatePair[], random: () => number): CandidatePair | undefined {
  if (candidates.length === 0) return undefined;
  const load = (c: CandidatePair) => c.accepted + c.live;
  const least = Math.min(...candidates.map(load));
  const tied = candidates.filter((c) => load(c) === least);
  return tied[Math.floor(random() * tied.length)] ?? tied[0];
}

function lease(db: Db, settings: BatchSettings, raterId: number, batchId: number, pair: CandidatePair, deps: AssignDeps): AssignmentRow {
  const viewed = deps.redirecting === true;
  const leasedAt = deps.now.toISOString();
  const row = {
    public_id: newPublicId(),
    batch_id: batchId,
    pair_id: pair.id,
    rater_id: raterId,
    left_side: chooseLeftSide(pair, deps.random),
    state: 'leased' as const,
    leased_at: leasedAt,
    // Short until its page is served (markAssignmentViewed): a lease nobody looks at cannot hold a place for long.
    expires_at: (viewed ? activeHoldUntil : unviewedHoldUntil)(deps.now, settings.leaseMinutes).toISOString(),
    viewed_at: viewed ? leasedAt : null,
  };
  // The row as stored, made from what was inserted rather than read back.
  const id = insertAssignment(db, { publicId: row.public_id, batchId, pairId: pair.id, raterId, leftSide: row.left_side, leasedAt, expiresAt: row.expires_at, viewedAt: row.viewed_at });
  return { id, ...row };
}

/** assignNextPair's work, in a write transaction the caller holds (an answer's, which records the answer first). */
export function assignInTransaction(db: Db, raterId: number, deps: AssignDeps): AssignOutcome {
  const rater = deps.rater ?? getRater(db, raterId);
  if (!rater) return { kind: 'not-rating', status: 'unknown' };
  const batch = cachedBatchRow(db, rater.batch_id);
  if (!batch || batch.state !== 'open') return { kind: 'batch-not-open', state: batch?.state ?? 'unknown' };
  if (rater.status !== 'onboarding' && rater.status !== 'rating') return { kind: 'not-rating', status: rater.status };
  // An excluded rater is never served (issue 10): excluding one ends their session at once (src/rating/rater-admin.ts);
  // should one still be here, end it now, so they are sent to the screened-out page.
  if (rater.excluded === 1) {
    endExcludedSession(db, raterId, rater.status, deps.now);
    return { kind: 'not-rating', status: 'screened_out' };
  }
  const settings = readBatchSettings(batch);

  releaseLapsedHolds(db, batch.id, deps.now);
  const live = liveLeaseOf(db, raterId);
  if (live) {
    if (live.expires_at > deps.now.toISOString()) return { kind: 'assigned', assignment: live, resumed: true };
    // Lapsed since the batch's holds were last released (releaseLapsedHolds): released now, as they would have been.
    setAssignmentState(db, live.id, 'expired');
  }
  if (isOverAddressLimit(db, settings, rater.id, batch.id, deps.now)) return { kind: 'limited' };

  if (rater.status === 'onboarding') {
    const next = candidateGoldPairs(db, { batchId: batch.id, raterId, kind: 'onboarding' })[0];
    if (next) return { kind: 'assigned', assignment: lease(db, settings, raterId, batch.id, next, deps), resumed: false };
    // No onboarding pairs left to show (none configured, or all answered while the verdict was pending).
    setRaterStatus(db, raterId, 'rating', deps.now);
  }

  // The rater's row was read in this transaction (here or by the caller), so its counters are current.
  const progress = progressOf(rater);
  // A rater is given what they were promised at consent, no more (the count on their pages stays true).
  const cap = Math.min(settings.perRaterCap, rater.promised ?? settings.perRaterCap);
  if (progress.regularJudged >= cap) return { kind: 'done', reason: 'cap', judged: progress.regularJudged };

  if (settings.attentionChecks && progress.attentionAssigned < attentionChecksDue(progress.regularJudged, settings.attentionChecks.rate, rater.public_id)) {
    // Checks from conversations the rater has not read come first: a shuffled copy of one they know gives itself away.
    const checks = candidateGoldPairs(db, { batchId: batch.id, raterId, kind: 'attention' });
    const fresh = checks.filter((c) => c.met_sample === 0);
    const check = pickLeastFilled(fresh.length > 0 ? fresh : checks, deps.random);
    if (check) return { kind: 'assigned', assignment: lease(db, settings, raterId, batch.id, check, deps), resumed: false };
  }

  // Pairs reserved at consent come first: they were promised, and other raters' reservations leave room for them.
  // Among them too, a pair of a sample met in a gold pair comes last (see below).
  const promised = reservedCandidatePairs(db, { batchId: batch.id, raterId, k: settings.judgmentsPerPair });
  const promisedUnprimed = promised.filter((c) => c.met_in_gold === 0);
  const reserved = pickLeastFilled(promisedUnprimed.length > 0 ? promisedUnprimed : promised, deps.random);
  if (reserved) {
    releaseReservation(db, raterId, reserved.id);
    return { kind: 'assigned', assignment: lease(db, settings, raterId, batch.id, reserved, deps), resumed: false };
  }

  // A pair of a sample the rater met in a gold pair is still served (so it stays reachable), but only when nothing
  // else is left for them: they know one of its dialogues as a practice or check pair's "right answer".
  // In a sequential batch, a pair nobody holds yet is not handed out beyond what its comparison's next look needs
  // (src/rating/look-room.ts); one pair is taken here, so a comparison with any room left may give it.
  const heldBack = heldBackComparisons(lookRoom(db, batch.id, settings));
  const regular = candidateRegularPairs(db, { batchId: batch.id, raterId, k: settings.judgmentsPerPair, allowSameSample: settings.allowSameSample, heldBack });
  const unprimed = regular.filter((c) => c.met_in_gold === 0);
  const pair = pickLeastFilled(unprimed.length > 0 ? unprimed : regular, deps.random);
  if (!pair) return { kind: 'done', reason: 'exhausted', judged: progress.regularJudged };
  return { kind: 'assigned', assignment: lease(db, settings, raterId, batch.id, pair, deps), resumed: false };
}

/** A rater holding nothing while enough others from their address hold comparisons waits (the per-address limit). */
function isOverAddressLimit(db: Db, settings: BatchSettings, raterId: number, batchId: number, now: Date): boolean {
  // A rater mid-session holds reservations: settled without reading their address.
  if (countReservationsOf(db, raterId) > 0) return false;
  const hash = getRaterAddressHash(db, raterId);
  if (!hash) return false;
  return countActiveRatersFromAddress(db, batchId, hash, now, raterId) >= settings.addressLimits.activeRaters;
}

const assignTransaction = transactionOf(assignInTransaction);

/**
 * Gives a rater their next comparison: their live lease if they have one, else an onboarding pair, an attention
 * check when one is due, or the least-filled regular pair they may see. One IMMEDIATE transaction, so two raters
 * (or two processes) can never both take the last place of a pair.
 */
export function assignNextPair(db: Db, raterId: number, deps: AssignDeps): AssignOutcome {
  return assignTransaction(db).immediate(raterId, deps);
}

/** Onboarding pairs a rater must answer before rating. */
export function onboardingSize(db: Db, batchId: number): number {
  return countGoldPairs(db, batchId, 'onboarding');
}
