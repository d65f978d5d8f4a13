import type { Db } from '../db/connection.js';
import type { RaterFiguresRow } from './page-report.js';

// analysis_rater_figures (migration 028): each rater's figures of a batch's stored report, written by the analysis
// worker around the transaction that stores the report (the new result's before it, the old one's deleted after), and
// read by the console's raters and participants pages a page of raters at a time, always under the parts_id of the
// result they serve (analysis_cache.parts_id), so that a page never shows figures of two results.

/**
 * Stores rater figures of the result named `partsId` (one part of them: the worker writes them in parts, each in a
 * transaction of its own, before the transaction that stores the report; a part written again replaces itself).
 */
export function insertRaterFigures(db: Db, batchId: number, partsId: number, rows: readonly RaterFiguresRow[]): void {
  const insert = db.prepare(
    `INSERT OR REPLACE INTO analysis_rater_figures (batch_id, parts_id, judge, judgments, median_seconds, majority_agreement, left_rate)
     VALUES (:batchId, :partsId, :judge, :judgments, :median_seconds, :majority_agreement, :left_rate)`,
  );
  for (const row of rows) insert.run({ batchId, partsId, ...row });
}

/** Deletes up to `limit` stored figures of the batch of any result but this one (the stored result's); how many it deleted. */
export function deleteOtherRaterFigures(db: Db, batchId: number, partsId: number, limit: number): number {
  return db
    .prepare(
      `DELETE FROM analysis_rater_figures WHERE (batch_id, parts_id, judge) IN (
         SELECT batch_id, parts_id, judge FROM analysis_rater_figures WHERE batch_id = :batchId AND parts_id <> :partsId LIMIT :limit)`,
    )
    .run({ batchId, partsId, limit }).changes;
}

/** The stored figures of these raters (by `judge` pseudonym) of the result named `partsId`; a rater without any is left out. */
export function findRaterFigures(db: Db, batchId: number, partsId: number, judges: readonly string[]): RaterFiguresRow[] {
  if (judges.length === 0) return [];
  return db
    .prepare<{ batchId: number; partsId: number; judges: string }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate FROM analysis_rater_figures
       WHERE batch_id = :batchId AND parts_id = :partsId AND judge IN (SELECT value FROM json_each(:judges))`,
    )
    .all({ batchId, partsId, judges: JSON.stringify(judges) });
}

/**
 * Up to `limit` stored figures of the result named `partsId` after the pseudonym `afterJudge`, in pseudonym order (the
 * primary key): the payment CSV reads them all in parts, answering other requests between them.
 */
export function listRaterFiguresAfter(db: Db, batchId: number, partsId: number, afterJudge: string, limit: number): RaterFiguresRow[] {
  return db
    .prepare<{ batchId: number; partsId: number; afterJudge: string; limit: number }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate FROM analysis_rater_figures
       WHERE batch_id = :batchId AND parts_id = :partsId AND judge > :afterJudge ORDER BY judge LIMIT :limit`,
    )
    .all({ batchId, partsId, afterJudge, limit });
}
