import type { Db } from '../db/connection.js';
import type { AnswerSignals } from './answer-signals.js';

export type RaterProvider = 'prolific' | 'mturk' | 'link';
export type RaterStatus = 'consent' | 'instructions' | 'onboarding' | 'rating' | 'completed' | 'screened_out' | 'withdrew' | 'no_consent';

export type RaterRow = {
  id: number;
  batch_id: number;
  public_id: string;
  provider: RaterProvider;
  participant_id: string | null;
  study_id: string | null;
  session_id: string | null;
  submit_to: string | null;
  status: RaterStatus;
  onboarding_correct: number;
  onboarding_answered: number;
  attention_failures: number;
  attention_answered: number;
  excluded: number;
  created_at: string;
  last_seen_at: string;
  finished_at: string | null;
  promised: number | null;
  finish_reason: FinishReason | null;
  /** Progress counters (migration 015), as of when the row was read. */
  judged: number;
  regular_judged: number;
  onboarding_judged: number;
  attention_assigned: number;
};

export type FinishReason = 'cap' | 'exhausted' | 'closed' | 'paused';

const RATER_COLUMNS =
  'id, batch_id, public_id, provider, participant_id, study_id, session_id, submit_to, status, onboarding_correct, onboarding_answered, attention_failures, attention_answered, excluded, created_at, last_seen_at, finished_at, promised, finish_reason, judged, regular_judged, onboarding_judged, attention_assigned';

export function getRaterByPublicId(db: Db, publicId: string): RaterRow | undefined {
  return db.prepare<{ publicId: string }, RaterRow>(`SELECT ${RATER_COLUMNS} FROM raters WHERE public_id = :publicId`).get({ publicId });
}

export function getRater(db: Db, id: number): RaterRow | undefined {
  return db.prepare<{ id: number }, RaterRow>(`SELECT ${RATER_COLUMNS} FROM raters WHERE id = :id`).get({ id });
}

/** The rater a provider session (current or earlier) belongs to. */
export function findRaterBySession(db: Db, batchId: number, provider: RaterProvider, sessionId: string): RaterRow | undefined {
  return db
    .prepare<{ batchId: number; provider: string; sessionId: string }, RaterRow>(
      // Two index lookups (the rater's current session, then any earlier one), not a scan of the batch's raters.
      `SELECT ${RATER_COLUMNS} FROM raters WHERE id = (
         SELECT min(id) FROM (
           SELECT id FROM raters WHERE batch_id = :batchId AND provider = :provider AND session_id = :sessionId
           UNION ALL
           SELECT r.id FROM rater_sessions s CROSS JOIN raters r ON r.id = s.rater_id
           WHERE s.session_id = :sessionId AND r.batch_id = :batchId AND r.provider = :provider))`,
    )
    .get({ batchId, provider, sessionId });
}

/** Whether this provider's participant id has a rater row in any of these batches (a rater of an earlier round). */
export function participantRatedIn(db: Db, provider: RaterProvider, participantId: string, batchIds: readonly number[]): boolean {
  if (batchIds.length === 0) return false;
  return (
    db
      .prepare<{ provider: string; participantId: string; batchIds: string }, number>(
        `SELECT 1 FROM raters WHERE provider = :provider AND participant_id = :participantId
           AND batch_id IN (SELECT value FROM json_each(:batchIds)) LIMIT 1`,
      )
      .pluck()
      .get({ provider, participantId, batchIds: JSON.stringify(batchIds) }) !== undefined
  );
}

export type NewRater = {
  batchId: number;
  publicId: string;
  provider: RaterProvider;
  participantId: string | null;
  studyId: string | null;
  sessionId: string;
  submitTo: string | null;
  userAgent: string | null;
  /** The provider identity that makes this rater one person in the batch (null for plain links). */
  personKey?: string | null;
  addressHash?: string | null;
  status?: RaterStatus;
  promised?: number | null;
  /** The rater's pseudonym in the batch (judgePseudonym of the batch's salt and this identity). */
  judge?: string | null;
};

export function insertRater(db: Db, rater: NewRater, now: Date): number {
  return Number(
    db
      .prepare(
        `INSERT INTO raters (batch_id, public_id, provider, participant_id, study_id, session_id, submit_to, status, user_agent, created_at, last_seen_at,
           person_key, address_hash, promised, judge, finished_at)
         VALUES (:batchId, :publicId, :provider, :participantId, :studyId, :sessionId, :submitTo, :status, :userAgent, :now, :now,
           :personKey, :addressHash, :promised, :judge, CASE WHEN :status = 'no_consent' THEN :now END)`,
      )
      .run({
        ...rater,
        status: rater.status ?? 'consent',
        personKey: rater.personKey ?? null,
        addressHash: rater.addressHash ?? null,
        promised: rater.promised ?? null,
        judge: rater.judge ?? null,
        now: now.toISOString(),
      }).lastInsertRowid,
  );
}

export function setRaterStatus(db: Db, id: number, status: RaterStatus, now: Date): void {
  const final = ['completed', 'screened_out', 'withdrew', 'no_consent'].includes(status);
  db.prepare(
    `UPDATE raters SET status = :status, last_seen_at = :now,
       finished_at = CASE WHEN :final = 1 THEN coalesce(finished_at, :now) ELSE finished_at END
     WHERE id = :id`,
  ).run({ id, status, now: now.toISOString(), final: final ? 1 : 0 });
}

/** A completed rater, with why they finished (the `partial` code goes to those the batch closed or paused under). */
export function finishRater(db: Db, id: number, reason: FinishReason, now: Date): void {
  db.prepare(
    `UPDATE raters SET status = 'completed', finish_reason = :reason, last_seen_at = :now, finished_at = coalesce(finished_at, :now)
     WHERE id = :id`,
  ).run({ id, reason, now: now.toISOString() });
}

export function excludeRater(db: Db, id: number, reason: string): void {
  db.prepare('UPDATE raters SET excluded = 1, exclusion_reason = :reason WHERE id = :id').run({ id, reason });
}

export function touchRater(db: Db, id: number, now: Date): void {
  db.prepare('UPDATE raters SET last_seen_at = :now WHERE id = :id').run({ id, now: now.toISOString() });
}

export function recordGoldAnswer(db: Db, id: number, kind: 'onboarding' | 'attention', correct: boolean): void {
  if (kind === 'onboarding') {
    db.prepare('UPDATE raters SET onboarding_answered = onboarding_answered + 1, onboarding_correct = onboarding_correct + :c WHERE id = :id').run({
      id,
      c: correct ? 1 : 0,
    });
  } else {
    db.prepare('UPDATE raters SET attention_answered = attention_answered + 1, attention_failures = attention_failures + :f WHERE id = :id').run({
      id,
      f: correct ? 0 : 1,
    });
  }
}

// Assignments -------------------------------------------------------------------

export type PairKind = 'regular' | 'attention' | 'onboarding';

export type AssignmentRow = {
  id: number;
  public_id: string;
  batch_id: number;
  pair_id: number;
  rater_id: number;
  left_side: 'a' | 'b';
  state: 'leased' | 'answered' | 'expired' | 'void';
  leased_at: string;
  expires_at: string;
  /** When its page was first served (or, leased by an answer that redirects to it, when it was leased); null before. */
  viewed_at: string | null;
};

const ASSIGNMENT_COLUMNS = 'id, public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at, viewed_at';

export function getAssignmentByPublicId(db: Db, publicId: string): AssignmentRow | undefined {
  return db
    .prepare<{ publicId: string }, AssignmentRow>(`SELECT ${ASSIGNMENT_COLUMNS} FROM assignments WHERE public_id = :publicId`)
    .get({ publicId });
}

export function getAssignment(db: Db, id: number): AssignmentRow | undefined {
  return db.prepare<{ id: number }, AssignmentRow>(`SELECT ${ASSIGNMENT_COLUMNS} FROM assignments WHERE id = :id`).get({ id });
}

/** Leases past their time go back to the pool (their late answers are still judged by record-judgment). */
export function expireLeases(db: Db, batchId: number, now: Date): number {
  return db.prepare("UPDATE assignments SET state = 'expired' WHERE batch_id = :batchId AND state = 'leased' AND expires_at <= :now").run({
    batchId,
    now: now.toISOString(),
  }).changes;
}

export function liveLeaseOf(db: Db, raterId: number): AssignmentRow | undefined {
  return db
    .prepare<{ raterId: number }, AssignmentRow>(
      `SELECT ${ASSIGNMENT_COLUMNS} FROM assignments WHERE rater_id = :raterId AND state = 'leased' ORDER BY id DESC LIMIT 1`,
    )
    .get({ raterId });
}

export function insertAssignment(
  db: Db,
  a: { publicId: string; batchId: number; pairId: number; raterId: number; leftSide: 'a' | 'b'; leasedAt: string; expiresAt: string; viewedAt: string | null },
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO assignments (public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at, viewed_at)
         VALUES (:publicId, :batchId, :pairId, :raterId, :leftSide, 'leased', :leasedAt, :expiresAt, :viewedAt)`,
      )
      .run(a).lastInsertRowid,
  );
}

export function setAssignmentState(db: Db, id: number, state: AssignmentRow['state']): void {
  db.prepare('UPDATE assignments SET state = :state WHERE id = :id').run({ id, state });
}

export function voidLiveLeases(db: Db, raterId: number): void {
  db.prepare("UPDATE assignments SET state = 'void' WHERE rater_id = :raterId AND state = 'leased'").run({ raterId });
}

export type CandidatePair = { id: number; accepted: number; accepted_left_a: number; live: number; live_left_a: number };

/**
 * Which regular pairs (alias p) rater :raterId may still be given (see candidateRegularPairs). One fragment for
 * serving and for counting, so that what is served and the "k of n" a rater sees cannot drift apart. `p.accepted < :k`
 * follows from the sum below it; stated on its own, it lets pairs_by_batch (batch_id, kind, accepted) skip the full
 * pairs, so the scan stays as large as the open part of the batch however many judgments it holds.
 */
// Live leases and reservations of a pair are read from its counters (p.leased, p.reserved: migration 019).
// A pair of a comparison its sequential rule stopped (p.stopped_at, migration 036) is no longer open to anyone new.
const OPEN_REGULAR_PAIR = `p.batch_id = :batchId AND p.kind = 'regular' AND p.removed_at IS NULL AND p.stopped_at IS NULL
  AND p.accepted < :k
  AND p.accepted + p.leased
    + (p.reserved - EXISTS (SELECT 1 FROM pair_reservations r WHERE r.rater_id = :raterId AND r.pair_id = p.id)) < :k
  AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pair_id = p.id AND a.rater_id = :raterId)
  AND (:allowSame = 1 OR NOT EXISTS (
    SELECT 1 FROM assignments a JOIN pairs q ON q.id = a.pair_id
    WHERE a.rater_id = :raterId AND q.kind = 'regular' AND q.scenario_id = p.scenario_id
      AND q.cast_id = p.cast_id AND q.sample_index = p.sample_index))`;

/**
 * Whether the rater met a pair's scenario sample in an onboarding or attention-check pair (`met_in_gold`), for a query
 * over pairs `p` that starts `WITH ${RATER_GOLD_SAMPLES}`: the samples of the rater's gold pairs are read once, not
 * once per pair (reading all the rater's assignments for each of their reserved pairs was the hot path's dearest
 * read; issue 12).
 */
const RATER_GOLD_SAMPLES = `gold AS MATERIALIZED (
  SELECT DISTINCT q.scenario_id, q.cast_id, q.sample_index FROM assignments a JOIN pairs q ON q.id = a.pair_id
  WHERE a.rater_id = :raterId AND q.kind <> 'regular')`;
const MET_IN_GOLD = `EXISTS (SELECT 1 FROM gold g
  WHERE g.scenario_id = p.scenario_id AND g.cast_id = p.cast_id AND g.sample_index = p.sample_index) AS met_in_gold`;

/**
 * Regular pairs this rater may be given: below K counting live leases, never seen by this rater, and (unless the
 * batch allows it) not of a scenario sample this rater already has in a regular pair. Samples met only in onboarding
 * or attention-check pairs do not bar (issue 10): every rater meets the onboarding pairs, so barring their samples
 * left those regular pairs at 0 judgments forever. They are flagged (`met_in_gold`) so assignment serves them last.
 * Gold pairs are built from held-out samples when the runs have any (src/batches/gold-sources.ts), so this only
 * matters when they had to come from rated samples.
 */
export function candidateRegularPairs(
  db: Db,
  params: { batchId: number; raterId: number; k: number; allowSameSample: boolean },
): (CandidatePair & { met_in_gold: number })[] {
  return db
    .prepare<{ batchId: number; raterId: number; k: number; allowSame: number }, CandidatePair & { met_in_gold: number }>(
      `WITH ${RATER_GOLD_SAMPLES}
       SELECT p.id, p.accepted, p.accepted_left_a,
         p.leased AS live,
         p.leased_left_a AS live_left_a,
         ${MET_IN_GOLD}
       FROM pairs p
       WHERE ${OPEN_REGULAR_PAIR}
       ORDER BY p.id`,
    )
    .all({ ...params, allowSame: params.allowSameSample ? 1 : 0 });
}

/**
 * Regular pairs a rater can still be counted on for: those they answered or hold now, plus the pairs they may yet be
 * given (below K, unseen by them, one per scenario sample unless the batch allows more). With no rater (a preview),
 * every place any new rater could get. Drives "k of n", so it counts what candidateRegularPairs serves. With `atMost`
 * (the rater's cap: "k of n" uses the smaller of the two), the open places are counted only up to what the cap leaves
 * after the pairs held, so a comparison page stops reading open pairs after that many instead of reading all of them.
 */
export function countReachableRegularPairs(
  db: Db,
  params: { batchId: number; raterId: number | null; k: number; allowSameSample: boolean; atMost?: number },
): number {
  const raterId = params.raterId ?? -1;
  const held =
    db
      .prepare<{ raterId: number }, number>(
        `SELECT count(*) FROM assignments a JOIN pairs q ON q.id = a.pair_id
         WHERE a.rater_id = :raterId AND q.kind = 'regular'
           AND (a.state = 'leased' OR EXISTS (SELECT 1 FROM judgments j WHERE j.assignment_id = a.id))`,
      )
      .pluck()
      .get({ raterId }) ?? 0;
  // Past the cap, only `atMost - held` open places can change the answer; a negative LIMIT is no limit in SQLite.
  const limit = params.atMost === undefined ? -1 : Math.max(0, Math.floor(params.atMost) - held);
  if (limit === 0) return held;
  // A rater mid-session has the rest of their promise reserved: their reservations settle it without reading the
  // batch's open pairs (issue 12). A reserved pair that late answers filled meanwhile still counts here; assignment
  // then skips it and the rater finishes one short with their code (docs/researcher/rating-batches.md: "fewer than promised").
  if (limit > 0 && params.raterId !== null && countReservationsOf(db, raterId) >= limit) return held + limit;
  const open =
    db
      .prepare<{ batchId: number; raterId: number; k: number; allowSame: number; limit: number }, number>(
        `SELECT count(*) FROM (
           SELECT DISTINCT CASE WHEN :allowSame = 1 THEN CAST(p.id AS TEXT) ELSE p.scenario_id || '|' || p.cast_id || '|' || p.sample_index END
           FROM pairs p
           WHERE ${OPEN_REGULAR_PAIR}
           LIMIT :limit)`,
      )
      .pluck()
      .get({ batchId: params.batchId, raterId, k: params.k, allowSame: params.allowSameSample ? 1 : 0, limit }) ?? 0;
  return held + open;
}

/**
 * Gold pairs of a kind this rater has not had yet, with how often each side was shown on the left, and whether the
 * rater already met the pair's scenario sample (`met_sample`: a check made from a conversation they have read
 * is easy to recognise as a check), or will meet it in a regular pair reserved for them.
 */
export function candidateGoldPairs(db: Db, params: { batchId: number; raterId: number; kind: 'onboarding' | 'attention' }): (CandidatePair & { met_sample: number })[] {
  return db
    .prepare<{ batchId: number; raterId: number; kind: string }, CandidatePair & { met_sample: number }>(
      `SELECT p.id, 0 AS accepted, 0 AS accepted_left_a,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id) AS live,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.left_side = 'a') AS live_left_a,
         EXISTS (SELECT 1 FROM assignments a JOIN pairs q ON q.id = a.pair_id
                 WHERE a.rater_id = :raterId AND q.scenario_id = p.scenario_id
                   AND q.cast_id = p.cast_id AND q.sample_index = p.sample_index)
         OR EXISTS (SELECT 1 FROM pair_reservations res JOIN pairs q ON q.id = res.pair_id
                 WHERE res.rater_id = :raterId AND q.scenario_id = p.scenario_id
                   AND q.cast_id = p.cast_id AND q.sample_index = p.sample_index) AS met_sample
       FROM pairs p
       WHERE p.batch_id = :batchId AND p.kind = :kind AND p.removed_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pair_id = p.id AND a.rater_id = :raterId)
       ORDER BY p.id`,
    )
    .all(params);
}

export function countGoldPairs(db: Db, batchId: number, kind: 'onboarding' | 'attention'): number {
  return (
    db
      .prepare<{ batchId: number; kind: string }, number>('SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = :kind AND removed_at IS NULL')
      .pluck()
      .get({ batchId, kind }) ?? 0
  );
}

export type RaterProgress = { regularJudged: number; attentionAssigned: number; onboardingJudged: number; judged: number };

/** A rater's progress from a row read in this request before anything changed it (no query). */
export function progressOf(rater: RaterRow): RaterProgress {
  return { regularJudged: rater.regular_judged, attentionAssigned: rater.attention_assigned, onboardingJudged: rater.onboarding_judged, judged: rater.judged };
}

export function raterProgress(db: Db, raterId: number): RaterProgress {
  // Counters kept by triggers with the judgments and assignments they count (migration 015): one row read per page.
  return (
    db
      .prepare<{ raterId: number }, RaterProgress>(
        `SELECT regular_judged AS regularJudged, attention_assigned AS attentionAssigned, onboarding_judged AS onboardingJudged, judged
         FROM raters WHERE id = :raterId`,
      )
      .get({ raterId }) ?? { regularJudged: 0, attentionAssigned: 0, onboardingJudged: 0, judged: 0 }
  );
}

// Pairs and judgments ---------------------------------------------------------------

export type PairRow = {
  id: number;
  batch_id: number;
  kind: PairKind;
  dialogue_a_id: number;
  dialogue_b_id: number;
  expected: 'a' | 'b' | null;
  scenario_id: string;
  cast_id: number;
  accepted: number;
  accepted_left_a: number;
  condition_a: string | null;
  condition_b: string | null;
  comparison_id: number | null;
};

export function getPair(db: Db, id: number): PairRow | undefined {
  return db
    .prepare<{ id: number }, PairRow>(
      `SELECT p.id, p.batch_id, p.kind, p.dialogue_a_id, p.dialogue_b_id, p.expected, p.scenario_id, p.cast_id, p.accepted, p.accepted_left_a,
         c.condition_a, c.condition_b, p.comparison_id
       FROM pairs p LEFT JOIN comparisons c ON c.id = p.comparison_id WHERE p.id = :id`,
    )
    .get({ id });
}

/** The example comparison of a batch's preview pages. */
export function firstRegularPairId(db: Db, batchId: number): number | undefined {
  return db
    .prepare<{ batchId: number }, number>("SELECT id FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL ORDER BY id LIMIT 1")
    .pluck()
    .get({ batchId });
}

/** Whether an assignment was answered: its first-question row is written with all the others, in one transaction. */
export function judgmentExistsFor(db: Db, assignmentId: number): boolean {
  return db.prepare('SELECT 1 FROM judgments WHERE assignment_id = :assignmentId AND question_index = 0').get({ assignmentId }) !== undefined;
}

export type NewJudgment = {
  assignmentId: number;
  batchId: number;
  pairId: number;
  raterId: number;
  /** The batch's question this row answers, and its place on the page (0 = the first, which the counters read). */
  questionId: string;
  questionIndex: number;
  leftSide: 'a' | 'b';
  choice: 'left' | 'right' | 'tie';
  winner: 'a' | 'b' | 'tie';
  label: string;
  reason: string | null;
  /** A which-is-real answer's confidence 1-5 (issue 53, migration 070); null for none. */
  confidence?: number | null;
  isGold: boolean;
  correct: boolean | null;
  shownAt: string;
  submittedAt: string;
  activeMs: number | null;
  questionVersion: number;
  late: boolean;
};

export function insertJudgment(db: Db, j: NewJudgment): number {
  return Number(
    db
      .prepare(
        `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, question_id, question_index, left_side, choice, winner, label, reason,
           confidence, is_gold, correct, shown_at, submitted_at, active_ms, question_version, late)
         VALUES (:assignmentId, :batchId, :pairId, :raterId, :questionId, :questionIndex, :leftSide, :choice, :winner, :label, :reason, :confidence,
           :isGold, :correct, :shownAt, :submittedAt, :activeMs, :questionVersion, :late)`,
      )
      .run({ ...j, confidence: j.confidence ?? null, isGold: j.isGold ? 1 : 0, correct: j.correct === null ? null : j.correct ? 1 : 0, late: j.late ? 1 : 0 }).lastInsertRowid,
  );
}

/** The checked signals of one answered assignment (migrations 035, 040). */
export function insertAnswerSignals(db: Db, assignmentId: number, batchId: number, raterId: number, s: AnswerSignals): void {
  db.prepare(
    `INSERT INTO answer_signals (assignment_id, batch_id, rater_id, telemetry, problem, reason_chars, paste_events, pasted_chars, keystrokes, typing_ms,
       hidden_ms, answered_before_second, answer_key)
     VALUES (:assignmentId, :batchId, :raterId, :telemetry, :problem, :reasonChars, :pasteEvents, :pastedChars, :keystrokes, :typingMs, :hiddenMs, :before, :answerKey)`,
  ).run({
    assignmentId,
    batchId,
    raterId,
    telemetry: s.telemetry,
    problem: s.problem,
    reasonChars: s.reasonChars,
    pasteEvents: s.pasteEvents,
    pastedChars: s.pastedChars,
    keystrokes: s.keystrokes,
    typingMs: s.typingMs,
    hiddenMs: s.hiddenMs,
    before: s.answeredBeforeSecond === null ? null : s.answeredBeforeSecond ? 1 : 0,
    answerKey: s.answerKey,
  });
}

export function countAccepted(db: Db, pairId: number, leftSide: 'a' | 'b', delta: 1 | -1): void {
  db.prepare('UPDATE pairs SET accepted = accepted + :delta, accepted_left_a = accepted_left_a + :leftA WHERE id = :id').run({
    id: pairId,
    delta,
    leftA: leftSide === 'a' ? delta : 0,
  });
}

/** Takes a screened-out rater's regular judgments out of the pair counters, so other raters fill those places. */
export function uncountRaterJudgments(db: Db, raterId: number): void {
  const rows = db
    .prepare<{ raterId: number }, { pair_id: number; left_side: 'a' | 'b' }>(
      `SELECT j.pair_id, j.left_side FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.rater_id = :raterId AND j.question_index = 0 AND p.kind = 'regular'`,
    )
    .all({ raterId });
  for (const row of rows) countAccepted(db, row.pair_id, row.left_side, -1);
}

/**
 * Puts a re-included rater's regular judgments back into the pair counters (the inverse of uncountRaterJudgments).
 * A pair refilled meanwhile may then hold K + 1 valid judgments: nothing is deleted, and it is not served again.
 */
export function recountRaterJudgments(db: Db, raterId: number): number {
  const rows = db
    .prepare<{ raterId: number }, { pair_id: number; left_side: 'a' | 'b' }>(
      `SELECT j.pair_id, j.left_side FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.rater_id = :raterId AND j.question_index = 0 AND p.kind = 'regular'`,
    )
    .all({ raterId });
  for (const row of rows) countAccepted(db, row.pair_id, row.left_side, 1);
  return rows.length;
}

/**
 * Ends the session of an excluded rater who is still in the study with the screened-out outcome, keeping the step
 * they were at so that re-including them restores it (src/rating/rater-admin.ts).
 */
export function endExcludedSession(db: Db, raterId: number, status: RaterStatus, now: Date): void {
  db.prepare('UPDATE raters SET status_before_exclusion = :status WHERE id = :raterId').run({ raterId, status });
  setRaterStatus(db, raterId, 'screened_out', now);
  voidLiveLeases(db, raterId);
  releaseReservations(db, raterId);
}

export function insertContentReport(
  db: Db,
  report: { batchId: number; pairId: number; dialogueId: number | null; raterId: number; reason: string },
  now: Date,
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO content_reports (batch_id, pair_id, dialogue_id, rater_id, reason, created_at)
         VALUES (:batchId, :pairId, :dialogueId, :raterId, :reason, :now)`,
      )
      .run({ ...report, now: now.toISOString() }).lastInsertRowid,
  );
}

// The rater pool (issue 10): identity, reservations, address limits ------------------------------

export function findRaterByPerson(db: Db, batchId: number, provider: RaterProvider, personKey: string): RaterRow | undefined {
  return db
    .prepare<{ batchId: number; provider: string; personKey: string }, RaterRow>(
      `SELECT ${RATER_COLUMNS} FROM raters WHERE batch_id = :batchId AND provider = :provider AND person_key = :personKey`,
    )
    .get({ batchId, provider, personKey });
}

/** Records a provider session of a rater and makes it the current one (the one their done page submits). */
export function recordRaterSession(db: Db, raterId: number, session: { sessionId: string; studyId: string | null; submitTo: string | null }, now: Date): void {
  db.prepare(
    `INSERT INTO rater_sessions (rater_id, session_id, study_id, submit_to, started_at, judged_at_start, regular_at_start)
     VALUES (:raterId, :sessionId, :studyId, :submitTo, :now,
       (SELECT count(*) FROM judgments WHERE rater_id = :raterId AND question_index = 0),
       (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = :raterId AND j.question_index = 0 AND p.kind = 'regular'))
     ON CONFLICT (rater_id, session_id) DO UPDATE SET submit_to = excluded.submit_to`,
  ).run({ raterId, ...session, now: now.toISOString() });
  db.prepare('UPDATE raters SET session_id = :sessionId, study_id = :studyId, submit_to = :submitTo, last_seen_at = :now WHERE id = :raterId').run({
    raterId,
    ...session,
    now: now.toISOString(),
  });
}

export type RaterSessionStart = { judged_at_start: number; regular_at_start: number };

/** Where the rater stood when their current provider session began (nothing for plain links). */
export function currentSessionStart(db: Db, rater: Pick<RaterRow, 'id' | 'session_id'>): RaterSessionStart | undefined {
  if (rater.session_id === null) return undefined;
  return db
    .prepare<{ raterId: number; sessionId: string }, RaterSessionStart>(
      'SELECT judged_at_start, regular_at_start FROM rater_sessions WHERE rater_id = :raterId AND session_id = :sessionId',
    )
    .get({ raterId: rater.id, sessionId: rater.session_id });
}

/** Reservations past their time free their places (as expireLeases does for leases). */
export function purgeExpiredReservations(db: Db, batchId: number, now: Date): number {
  return db.prepare('DELETE FROM pair_reservations WHERE batch_id = :batchId AND expires_at <= :now').run({ batchId, now: now.toISOString() }).changes;
}

export type ReservablePair = { id: number; load: number; sample: string; met_in_gold: number };

/**
 * Regular pairs a new rater could be promised: open under K (counting live leases and every reservation), with
 * their scenario sample and whether the rater will meet that sample in an onboarding pair (every rater meets all of
 * them before their first regular pair: `met_in_gold`), least filled first, then by id. An iterator over the index
 * pairs_open_by_load (migration 022): the caller reads only as far as it needs, not every open pair of the batch.
 */
export function iterateReservablePairs(db: Db, params: { batchId: number; k: number; allowSameSample: boolean }): IterableIterator<ReservablePair> {
  return db
    .prepare<{ batchId: number; raterId: number; k: number; allowSame: number }, ReservablePair>(
      `SELECT p.id,
         p.accepted + p.leased + p.reserved AS load,
         p.scenario_id || '|' || p.cast_id || '|' || p.sample_index AS sample,
         EXISTS (SELECT 1 FROM pairs g WHERE g.batch_id = p.batch_id AND g.kind = 'onboarding' AND g.removed_at IS NULL
           AND g.scenario_id = p.scenario_id AND g.cast_id = p.cast_id AND g.sample_index = p.sample_index) AS met_in_gold
       FROM pairs p INDEXED BY pairs_open_by_load
       WHERE ${OPEN_REGULAR_PAIR}
       ORDER BY p.accepted + p.leased + p.reserved, p.id`,
    )
    .iterate({ batchId: params.batchId, raterId: -1, k: params.k, allowSame: params.allowSameSample ? 1 : 0 });
}

export function insertReservations(db: Db, raterId: number, batchId: number, pairIds: readonly number[], expiresAt: Date): void {
  const insert = db.prepare('INSERT INTO pair_reservations (rater_id, pair_id, batch_id, expires_at) VALUES (:raterId, :pairId, :batchId, :expiresAt)');
  for (const pairId of pairIds) insert.run({ raterId, pairId, batchId, expiresAt: expiresAt.toISOString() });
}

/** A rater seen again keeps their reserved pairs until `expiresAt` (never shortens them). */
export function extendReservations(db: Db, raterId: number, expiresAt: Date): void {
  db.prepare('UPDATE pair_reservations SET expires_at = max(expires_at, :expiresAt) WHERE rater_id = :raterId').run({
    raterId,
    expiresAt: expiresAt.toISOString(),
  });
}

export function countReservationsOf(db: Db, raterId: number): number {
  return db.prepare<{ raterId: number }, number>('SELECT count(*) FROM pair_reservations WHERE rater_id = :raterId').pluck().get({ raterId }) ?? 0;
}

export function releaseReservations(db: Db, raterId: number): void {
  db.prepare('DELETE FROM pair_reservations WHERE rater_id = :raterId').run({ raterId });
}

export function releaseReservation(db: Db, raterId: number, pairId: number): void {
  db.prepare('DELETE FROM pair_reservations WHERE rater_id = :raterId AND pair_id = :pairId').run({ raterId, pairId });
}

/**
 * The rater's own reserved pairs that may still be leased to them: not removed, never assigned to them, and below K
 * counting live leases and other raters' reservations (a late answer may have filled one since; `p.reserved` counts
 * the rater's own reservation of the pair, which is the row joined). Flagged `met_in_gold` as in
 * candidateRegularPairs, so that assignment serves those last. CROSS JOIN keeps SQLite reading the rater's few
 * reservations first: left to itself it scanned the batch's pairs (1.7 ms a call at 100k judgments).
 */
export function reservedCandidatePairs(db: Db, params: { batchId: number; raterId: number; k: number }): (CandidatePair & { met_in_gold: number })[] {
  return db
    .prepare<{ batchId: number; raterId: number; k: number }, CandidatePair & { met_in_gold: number }>(
      `WITH ${RATER_GOLD_SAMPLES}
       SELECT p.id, p.accepted, p.accepted_left_a,
         p.leased AS live,
         p.leased_left_a AS live_left_a,
         ${MET_IN_GOLD}
       FROM pair_reservations res CROSS JOIN pairs p ON p.id = res.pair_id
       WHERE res.rater_id = :raterId AND p.batch_id = :batchId AND p.removed_at IS NULL AND p.accepted < :k
         AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pair_id = p.id AND a.rater_id = :raterId)
         AND p.accepted + p.leased + p.reserved - 1 < :k
       ORDER BY p.id`,
    )
    .all(params);
}

/** Raters created from one address hash in a batch since a time (the per-address creation limit). */
export function countRatersFromAddress(db: Db, batchId: number, addressHash: string, since: Date): number {
  return (
    db
      .prepare<{ batchId: number; addressHash: string; since: string }, number>(
        'SELECT count(*) FROM raters WHERE batch_id = :batchId AND address_hash = :addressHash AND created_at > :since',
      )
      .pluck()
      .get({ batchId, addressHash, since: since.toISOString() }) ?? 0
  );
}

/** Raters of one address hash holding a live lease or a reserved pair now (the per-address hold limit). */
export function countActiveRatersFromAddress(db: Db, batchId: number, addressHash: string, now: Date, exceptRaterId = -1): number {
  return (
    db
      .prepare<{ batchId: number; addressHash: string; now: string; exceptRaterId: number }, number>(
        // Only raters still in their session can hold anything (finishing releases leases and reservations): the
        // partial index raters_active_by_address (migration 018) leaves out everyone who finished from that address.
        `SELECT count(*) FROM raters r INDEXED BY raters_active_by_address
         WHERE r.batch_id = :batchId AND r.address_hash = :addressHash AND r.id <> :exceptRaterId
           AND r.status IN ('instructions', 'onboarding', 'rating')
           AND (EXISTS (SELECT 1 FROM assignments a WHERE a.rater_id = r.id AND a.state = 'leased' AND a.expires_at > :now)
             OR EXISTS (SELECT 1 FROM pair_reservations res WHERE res.rater_id = r.id AND res.expires_at > :now))`,
      )
      .pluck()
      .get({ batchId, addressHash, now: now.toISOString(), exceptRaterId }) ?? 0
  );
}

export function getRaterAddressHash(db: Db, raterId: number): string | null {
  return db.prepare<{ raterId: number }, string | null>('SELECT address_hash FROM raters WHERE id = :raterId').pluck().get({ raterId }) ?? null;
}

/** Whether serving this assignment's page turns its short hold into the full lease (markAssignmentViewed writes). */
export function awaitsFirstView(assignment: AssignmentRow): boolean {
  return assignment.viewed_at === null && assignment.state === 'leased';
}

/**
 * Serving a lease's page turns its short hold into the full lease time, once; returns when the lease now ends (what
 * the page shows), without reading the row again. A lease already viewed (or leased by the answer that redirects to
 * its page) writes nothing: the comparison page is then a read-only request.
 */
export function markAssignmentViewed(db: Db, assignment: AssignmentRow, now: Date, leaseMinutes: number): string {
  if (!awaitsFirstView(assignment)) return assignment.expires_at;
  const expiresAt = new Date(now.getTime() + leaseMinutes * 60_000).toISOString();
  const changed = db
    .prepare(
      `UPDATE assignments SET viewed_at = :now, expires_at = max(expires_at, :expiresAt)
       WHERE id = :id AND viewed_at IS NULL AND state = 'leased'`,
    )
    .run({ id: assignment.id, now: now.toISOString(), expiresAt }).changes;
  return changed > 0 && expiresAt > assignment.expires_at ? expiresAt : assignment.expires_at;
}
