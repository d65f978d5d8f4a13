import type { Db } from '../db/connection.js';
import type { QualityJudgment } from '../analysis/rater-quality.js';

export type RaterRow = {
  id: number;
  /** Opaque; only for the `judge` pseudonym of a rater without a participant id. */
  public_id: string;
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
  /** Their judgments of regular pairs (gold pairs left out), valid or not. */
  regular_judgments: number;
  /** Raters of this batch from the same client address hash, this one included (1 when alone or unknown). */
  address_share: number;
};

export function listBatchRaters(db: Db, batchId: number): RaterRow[] {
  return db
    .prepare<{ batchId: number }, RaterRow>(
      `SELECT id, public_id, provider, participant_id, study_id, session_id, status, onboarding_correct, onboarding_answered, attention_failures,
         attention_answered, excluded, exclusion_reason, status_before_exclusion, created_at, last_seen_at, finished_at, finish_reason,
         (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = raters.id AND j.question_index = 0 AND p.kind = 'regular') AS regular_judgments,
         CASE WHEN address_hash IS NULL THEN 1 ELSE
           (SELECT count(*) FROM raters same WHERE same.batch_id = raters.batch_id AND same.address_hash = raters.address_hash) END AS address_share
       FROM raters WHERE batch_id = :batchId AND provider <> 'preview' ORDER BY id`,
    )
    .all({ batchId });
}

/**
 * Regular (non-gold) judgments of a batch on pairs still in it, for the rater quality figures: the first question's
 * (one per answered comparison), as attention checks are; a batch's later questions are analysed per question.
 */
export function listQualityJudgments(db: Db, batchId: number): QualityJudgment[] {
  return db
    .prepare<{ batchId: number }, QualityJudgment>(
      `SELECT j.rater_id, j.pair_id, j.label, j.choice, j.active_ms FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.batch_id = :batchId AND j.question_index = 0 AND j.is_gold = 0 AND p.removed_at IS NULL`,
    )
    .all({ batchId });
}

export type ContentReportRow = {
  id: number;
  batch_id: number;
  batch_name: string;
  pair_id: number;
  pair_removed_at: string | null;
  dialogue_id: number | null;
  reason: string;
  created_at: string;
  resolved_at: string | null;
  resolution: string | null;
};

export function listContentReports(db: Db, filter: { batchId?: number; open?: boolean }, limit: number, offset: number): ContentReportRow[] {
  return db
    .prepare<{ batchId: number | null; open: number; limit: number; offset: number }, ContentReportRow>(
      `SELECT cr.id, cr.batch_id, b.name AS batch_name, cr.pair_id, p.removed_at AS pair_removed_at, cr.dialogue_id, cr.reason,
         cr.created_at, cr.resolved_at, cr.resolution
       FROM content_reports cr JOIN batches b ON b.id = cr.batch_id JOIN pairs p ON p.id = cr.pair_id
       WHERE (:batchId IS NULL OR cr.batch_id = :batchId) AND (:open = 0 OR cr.resolved_at IS NULL)
       ORDER BY cr.resolved_at IS NOT NULL, cr.id DESC LIMIT :limit OFFSET :offset`,
    )
    .all({ batchId: filter.batchId ?? null, open: filter.open ? 1 : 0, limit, offset });
}
