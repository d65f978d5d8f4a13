import { z } from 'zod';
import type { BatchRow } from '../batches/batch.queries.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { batchQuestions } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { countBatchJudgments, type JudgmentsPageStart, listBatchJudgmentsPage } from '../export/export.queries.js';
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

/**
 * A page's cursor: `pair_id.judgment_id` of its last record, as `pagination.next_after` gives it and `?after=` takes
 * it back (the order is the export's, pair then judgment).
 */
export const judgmentsCursorSchema = z.string().regex(/^\d{1,15}\.\d{1,15}$/, 'after must be the pagination.next_after of an earlier page (two numbers joined by a dot)');

/** Where the page after the one `cursor` ends starts. */
export function pageAfter(cursor: string): JudgmentsPageStart {
  const [pairId, judgmentId] = cursor.split('.').map(Number) as [number, number];
  return { after: { pairId, judgmentId } };
}

/** A page of the batch's judgment records, and the cursor of the page after it (null when none follows). */
export function listBatchJudgmentsForApi(
  db: Db,
  batch: Pick<BatchRow, 'id' | 'judge_salt' | 'settings'>,
  limit: number,
  start: JudgmentsPageStart,
  questionId: string | null = null,
): { records: JudgmentRecord[]; nextAfter: string | null } {
  const ctx = { batch, options: RECORD_OPTIONS, meta: { questions: batchQuestions(readBatchSettings(batch)) } };
  // One row more than the page says whether another page follows.
  const rows = listBatchJudgmentsPage(db, batch.id, questionId, limit + 1, start);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { records: page.map((row) => judgmentRecord(ctx, row)), nextAfter: rows.length > limit && last ? `${last.pair_id}.${last.judgment_id}` : null };
}
