import type { Db } from '../db/connection.js';
import type { RaterFiguresRow } from './page-report.js';

// analysis_rater_figures (migration 028): each rater's figures of a batch's stored report, written by the analysis
// worker around the transaction that stores the report (the new result's before it, the old one's deleted after), and read by the console's raters and participants pages a page of
// raters at a time, always with the data version of the result they serve, so that a page never shows figures of two
// results.

/**
 * Stores rater figures of the report of this version (one part of them: the worker writes them in parts, each in a
 * transaction of its own, before the transaction that stores the report; a part written again replaces itself).
 */
export function insertRaterFigures(db: Db, batchId: number, version: string, rows: readonly RaterFiguresRow[]): void {
  const insert = db.prepare(
    `INSERT OR REPLACE INTO analysis_rater_figures (batch_id, judge, data_version, judgments, median_seconds, majority_agreement, left_rate)
     VALUES (:batchId, :judge, :version, :judgments, :median_seconds, :majority_agreement, :left_rate)`,
  );
  for (const row of rows) insert.run({ batchId, version, ...row });
}

/** Deletes up to `limit` stored figures of the batch of any version but this one (the stored result's); how many it deleted. */
export function deleteOtherRaterFigures(db: Db, batchId: number, version: string, limit: number): number {
  return db
    .prepare(
      `DELETE FROM analysis_rater_figures WHERE (batch_id, data_version, judge) IN (
         SELECT batch_id, data_version, judge FROM analysis_rater_figures WHERE batch_id = :batchId AND data_version <> :version LIMIT :limit)`,
    )
    .run({ batchId, version, limit }).changes;
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
