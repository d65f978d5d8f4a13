import type { BatchRow } from '../batches/batch.queries.js';
import type { Db } from '../db/connection.js';
import { countBatchJudgments, listBatchJudgmentsPage } from '../export/export.queries.js';
import { type JudgmentRecord, judgmentRecord } from '../export/judgments-export.js';

// GET /api/batches/:id/judgments serves the export's judgment record (src/export/judgments-export.ts) page by page,
// so the API and `judgments-jsonl --include-excluded --include-gold` agree row for row: every judgment, gold ones
// flagged by `is_gold`, excluded ones (excluded or screened-out rater, removed pair) by `excluded` and the export's
// `exclusion_reason`. Raw provider ids are never served here.

const RECORD_OPTIONS = { withProviderIds: false, includeExcluded: true } as const;

/** `questionId` null: every question's answers, each record naming its `question_id` (issue 16). */
export function countBatchJudgmentsForApi(db: Db, batchId: number, questionId: string | null = null): number {
  return countBatchJudgments(db, batchId, questionId);
}

export function listBatchJudgmentsForApi(
  db: Db,
  batch: Pick<BatchRow, 'id' | 'judge_salt'>,
  limit: number,
  offset: number,
  questionId: string | null = null,
): JudgmentRecord[] {
  const ctx = { batch, options: RECORD_OPTIONS };
  return listBatchJudgmentsPage(db, batch.id, questionId, limit, offset).map((row) => judgmentRecord(ctx, row));
}
