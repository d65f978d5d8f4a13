import type { Db } from '../db/connection.js';
import type { RaterFiguresRow } from './page-report.js';

// analysis_rater_figures (migration 028): each rater's figures of a batch's stored report, written by the analysis
// worker in the transaction that stores the report, and read by the console's raters and participants pages a page of
// raters at a time, always with the data version of the result they serve, so that a page never shows figures of two
// results.

/** Replaces the batch's stored rater figures with those of the report of this version (in the caller's transaction). */
export function storeRaterFigures(db: Db, batchId: number, version: string, rows: readonly RaterFiguresRow[]): void {
  db.prepare('DELETE FROM analysis_rater_figures WHERE batch_id = :batchId').run({ batchId });
  const insert = db.prepare(
    `INSERT INTO analysis_rater_figures (batch_id, judge, data_version, judgments, median_seconds, majority_agreement, left_rate)
     VALUES (:batchId, :judge, :version, :judgments, :median_seconds, :majority_agreement, :left_rate)`,
  );
  for (const row of rows) insert.run({ batchId, version, ...row });
}

/** The stored figures of these raters (by `judge` pseudonym) from the report of exactly this version; a rater without any is left out. */
export function findRaterFigures(db: Db, batchId: number, version: string, judges: readonly string[]): RaterFiguresRow[] {
  if (judges.length === 0) return [];
  return db
    .prepare<{ batchId: number; version: string; judges: string }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate FROM analysis_rater_figures
       WHERE batch_id = :batchId AND data_version = :version AND judge IN (SELECT value FROM json_each(:judges))`,
    )
    .all({ batchId, version, judges: JSON.stringify(judges) });
}

/**
 * Up to `limit` stored figures of the report of this version after the pseudonym `afterJudge`, in pseudonym order (the
 * primary key): the payment CSV reads them all in parts, answering other requests between them.
 */
export function listRaterFiguresAfter(db: Db, batchId: number, version: string, afterJudge: string, limit: number): RaterFiguresRow[] {
  return db
    .prepare<{ batchId: number; version: string; afterJudge: string; limit: number }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate FROM analysis_rater_figures
       WHERE batch_id = :batchId AND judge > :afterJudge AND data_version = :version ORDER BY judge LIMIT :limit`,
    )
    .all({ batchId, version, afterJudge, limit });
}
