import type { Db } from '../db/connection.js';

// The batch's participants as the payment decisions read them (src/recruiting/participant-decision.ts): the console's
// payment lists and the platforms' settle commands read the same rows.

/** A rater as the payment lists need them (every column of the raters page but the address share). */
export type ParticipantRater = {
  id: number;
  /** Opaque; only for the `judge` pseudonym of a rater without a participant id. */
  public_id: string;
  /** Their pseudonym as stored at consent (migration 023); null for raters from before, named when needed. */
  judge: string | null;
  provider: string;
  participant_id: string | null;
  study_id: string | null;
  session_id: string | null;
  status: string;
  onboarding_correct: number;
  onboarding_answered: number;
  attention_failures: number;
  attention_answered: number;
  excluded: number;
  exclusion_reason: string | null;
  status_before_exclusion: string | null;
  created_at: string;
  last_seen_at: string;
  finished_at: string | null;
  /** Why a completed rater finished: `cap`, `exhausted`, or `closed`/`paused` (the batch stopped while they worked); null before issue 10. */
  finish_reason: string | null;
  /**
   * Their judgments of regular pairs (gold pairs left out), valid or not, removed pairs included: the counter
   * `raters.regular_judged` (migration 015), kept by triggers to the count of their first-question rows on regular pairs.
   */
  regular_judgments: number;
  /** A role-play participant's outcome (live_players, migration 060); null for a rater and for a player still in it. */
  live_outcome: string | null;
  /** A role-play participant's time in the lobby, in milliseconds (null for a rater): a wait bonus counts it. */
  waited_ms: number | null;
};

export const PARTICIPANT_COLUMNS = `id, public_id, provider, participant_id, study_id, session_id, status, onboarding_correct, onboarding_answered,
  attention_failures, attention_answered, excluded, exclusion_reason, status_before_exclusion, created_at, last_seen_at, finished_at,
  finish_reason, regular_judged AS regular_judgments, judge,
  (SELECT lp.outcome FROM live_players lp WHERE lp.rater_id = raters.id) AS live_outcome,
  (SELECT lp.waited_ms FROM live_players lp WHERE lp.rater_id = raters.id) AS waited_ms`;

/**
 * Up to `limit` participants of a batch after the rater id `afterId`, in id order (the listing index): the payment CSV
 * reads its list in parts, answering other requests between them; no judgment is read.
 */
export function listParticipantsAfter(db: Db, batchId: number, afterId: number, limit: number): ParticipantRater[] {
  return db
    .prepare<{ batchId: number; afterId: number; limit: number }, ParticipantRater>(
      `SELECT ${PARTICIPANT_COLUMNS} FROM raters WHERE batch_id = :batchId AND provider <> 'preview' AND id > :afterId ORDER BY id LIMIT :limit`,
    )
    .all({ batchId, afterId, limit });
}

// CROSS JOIN and +p.kind: from the removed pairs (index pairs_removed) to their judgments; the planner otherwise starts
// from every judgment of the batch (0.3 s at a million) or from every regular pair (pairs_by_batch).
export const JUDGMENTS_ON_REMOVED_PAIRS = `SELECT j.rater_id, count(*) AS n FROM pairs p CROSS JOIN judgments j ON j.batch_id = p.batch_id AND j.pair_id = p.id
  WHERE p.batch_id = :batchId AND p.removed_at IS NOT NULL AND +p.kind = 'regular' AND j.question_index = 0 GROUP BY j.rater_id`;

/**
 * Per rater, their first-question judgments on regular pairs that were removed from the batch: the counter
 * regular_judged includes them, the analysis does not. Reads only the removed pairs' judgments (index pairs_removed).
 */
export function countJudgmentsOnRemovedPairs(db: Db, batchId: number): Map<number, number> {
  const rows = db
    .prepare<{ batchId: number }, [number, number]>(JUDGMENTS_ON_REMOVED_PAIRS)
    .raw()
    .all({ batchId });
  return new Map(rows);
}
