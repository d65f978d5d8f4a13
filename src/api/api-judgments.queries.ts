import type { Db } from '../db/connection.js';
import { judgePseudonym } from '../export/judge-pseudonym.js';

// Read-only SQL for GET /api/batches/:id/judgments: one row per judgment, unblinded to conditions, with the rater
// as the batch's salted pseudonym (raw provider ids are never served here).

type JudgmentApiRow = {
  id: number;
  pair_id: number;
  pair_kind: string;
  scenario_id: string;
  condition_a: string | null;
  condition_b: string | null;
  left_side: 'a' | 'b';
  choice: string;
  winner: string;
  label: string;
  reason: string | null;
  is_gold: number;
  correct: number | null;
  shown_at: string;
  submitted_at: string;
  active_ms: number | null;
  question_version: number;
  late: number;
  provider: string;
  participant_id: string | null;
  rater_public_id: string;
  excluded: number;
  exclusion_reason: string | null;
  pair_removed: number;
};

export function countBatchJudgmentsForApi(db: Db, batchId: number): number {
  return db.prepare('SELECT count(*) FROM judgments WHERE batch_id = :batchId').pluck().get({ batchId }) as number;
}

export function listBatchJudgmentsForApi(db: Db, batch: { id: number; judgeSalt: string }, limit: number, offset: number) {
  return db
    .prepare<{ batchId: number; limit: number; offset: number }, JudgmentApiRow>(
      `SELECT j.id, j.pair_id, p.kind AS pair_kind, p.scenario_id, c.condition_a, c.condition_b, j.left_side, j.choice, j.winner, j.label,
         j.reason, j.is_gold, j.correct, j.shown_at, j.submitted_at, j.active_ms, j.question_version, j.late,
         r.provider, r.participant_id, r.public_id AS rater_public_id, r.excluded, r.exclusion_reason, (p.removed_at IS NOT NULL) AS pair_removed
       FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN raters r ON r.id = j.rater_id
       LEFT JOIN comparisons c ON c.id = p.comparison_id
       WHERE j.batch_id = :batchId ORDER BY j.id LIMIT :limit OFFSET :offset`,
    )
    .all({ batchId: batch.id, limit, offset })
    .map((j) => ({
      id: j.id,
      pair_id: j.pair_id,
      pair_kind: j.pair_kind,
      scenario_id: j.scenario_id,
      model_a: j.condition_a,
      model_b: j.condition_b,
      left: j.left_side,
      choice: j.choice,
      winner: j.winner === 'a' ? 'model_a' : j.winner === 'b' ? 'model_b' : 'tie',
      label: j.label,
      reason: j.reason,
      is_gold: j.is_gold === 1,
      correct: j.correct === null ? null : j.correct === 1,
      judge: judgePseudonym(batch.judgeSalt, { provider: j.provider, participantId: j.participant_id, raterPublicId: j.rater_public_id }),
      provider: j.provider,
      shown_at: j.shown_at,
      submitted_at: j.submitted_at,
      active_time_s: j.active_ms === null ? null : j.active_ms / 1000,
      question_version: j.question_version,
      late: j.late === 1,
      excluded: j.excluded === 1 || j.pair_removed === 1,
      exclusion_reason: j.excluded === 1 ? j.exclusion_reason : j.pair_removed === 1 ? 'pair removed' : null,
    }));
}
