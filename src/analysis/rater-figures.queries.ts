import type { Db } from '../db/connection.js';
import type { RaterFiguresRow } from './page-report.js';
import { type FigureChange, type FigureRowKey, OPEN_PARTS, type StoredFigureRow } from './rater-figures-plan.js';

// analysis_rater_figures (migrations 028 and 032): each rater's figures of a batch's stored report, written by the
// analysis worker before the transaction that stores the report, only where they changed (src/analysis/rater-figures-plan.ts),
// and read by the console's raters and participants pages a page of raters at a time, always of the result they serve
// (analysis_cache.parts_id), so that a page never shows figures of two results. A row is of result R when
// from_parts <= R < to_parts.

/**
 * SQL: the figure rows (table alias `f`, or none) of the result the `:partsId` parameter names. Every read of the
 * figures goes through it, so that a page reads one result's figures and no other's.
 */
export function figuresOfResult(alias?: string): string {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `${column('from_parts')} <= :partsId AND ${column('to_parts')} > :partsId`;
}

/**
 * A job writing a batch's figures marks each of its transactions; silent this long, it is taken to have died and its
 * number is drawn past. Its transactions come a few tens of ms apart, its longest silence (reading the stored figures
 * and comparing them, at idle priority beside busy raters) a few seconds.
 */
export const FIGURES_WRITER_SILENT_MS = 2 * 60_000;

/**
 * In a write transaction: draws the number of the batch's next result and marks it as being written at `nowMs`,
 * unless another job wrote less than FIGURES_WRITER_SILENT_MS ago (then null: that job's result will be stored).
 * `stored`: the stored result's number, null when none is stored with its parts.
 */
export function claimFiguresWriter(db: Db, batchId: number, nowMs: number): { parts: number; stored: number | null } | null {
  const writer = db
    .prepare<{ b: number }, { last_parts: number; written_at: number | null }>('SELECT last_parts, written_at FROM analysis_figures_writer WHERE batch_id = :b')
    .get({ b: batchId });
  if (writer?.written_at != null && nowMs - writer.written_at < FIGURES_WRITER_SILENT_MS) return null;
  const stored = db.prepare<{ b: number }, number | null>('SELECT parts_id FROM analysis_cache WHERE batch_id = :b').pluck().get({ b: batchId }) ?? null;
  const parts = Math.max(writer?.last_parts ?? 0, stored ?? 0) + 1;
  db.prepare(
    `INSERT INTO analysis_figures_writer (batch_id, last_parts, written_at) VALUES (:b, :parts, :now)
     ON CONFLICT (batch_id) DO UPDATE SET last_parts = excluded.last_parts, written_at = excluded.written_at`,
  ).run({ b: batchId, parts, now: nowMs });
  return { parts, stored };
}

/** In a write transaction: marks result `parts` as written at `nowMs`; false when it is no longer being written (another job took the batch over). */
export function markFiguresWriter(db: Db, batchId: number, parts: number, nowMs: number): boolean {
  return (
    db
      .prepare('UPDATE analysis_figures_writer SET written_at = :now WHERE batch_id = :b AND last_parts = :parts AND written_at IS NOT NULL')
      .run({ b: batchId, parts, now: nowMs }).changes === 1
  );
}

/** Ends the writing of result `parts` (stored, or given up). */
export function releaseFiguresWriter(db: Db, batchId: number, parts: number): void {
  db.prepare('UPDATE analysis_figures_writer SET written_at = NULL WHERE batch_id = :b AND last_parts = :parts').run({ b: batchId, parts });
}

/** Every stored figure row of the batch, of whichever result. */
export function listStoredFigureRows(db: Db, batchId: number): StoredFigureRow[] {
  return db
    .prepare<{ b: number }, StoredFigureRow>(
      'SELECT judge, from_parts, to_parts, judgments, median_seconds, majority_agreement, left_rate, decisive FROM analysis_rater_figures WHERE batch_id = :b',
    )
    .all({ b: batchId });
}

/** Writes changes planned for result `parts` (planFigureChanges); closing a row ends it at `parts`. */
export function applyFigureChanges(db: Db, batchId: number, parts: number, changes: readonly FigureChange[]): void {
  const key = (row: FigureRowKey) => ({ b: batchId, judge: row.judge, from: row.from_parts });
  const remove = db.prepare('DELETE FROM analysis_rater_figures WHERE batch_id = :b AND judge = :judge AND from_parts = :from');
  const end = db.prepare('UPDATE analysis_rater_figures SET to_parts = :to WHERE batch_id = :b AND judge = :judge AND from_parts = :from');
  const insert = db.prepare(
    `INSERT INTO analysis_rater_figures (batch_id, judge, from_parts, to_parts, judgments, median_seconds, majority_agreement, left_rate, decisive)
     VALUES (:b, :judge, :parts, :open, :judgments, :median_seconds, :majority_agreement, :left_rate, :decisive)`,
  );
  for (const change of changes) {
    if (change.op === 'delete') remove.run(key(change.row));
    else if (change.op === 'reopen') end.run({ ...key(change.row), to: OPEN_PARTS });
    else if (change.op === 'close') end.run({ ...key(change.row), to: parts });
    else insert.run({ b: batchId, parts, open: OPEN_PARTS, ...change.figures, decisive: change.figures.decisive ?? null });
  }
}

/** Deletes rows that ended at or before result `parts` (by their keys): once `parts` is stored they are of no result read. */
export function deleteEndedFigureRows(db: Db, batchId: number, parts: number, rows: readonly FigureRowKey[]): void {
  const remove = db.prepare('DELETE FROM analysis_rater_figures WHERE batch_id = :b AND judge = :judge AND from_parts = :from AND to_parts <= :parts');
  for (const row of rows) remove.run({ b: batchId, judge: row.judge, from: row.from_parts, parts });
}

/** The stored figures of these raters (by `judge` pseudonym) of result `partsId`; a rater without any is left out. */
export function findRaterFigures(db: Db, batchId: number, partsId: number, judges: readonly string[]): RaterFiguresRow[] {
  if (judges.length === 0) return [];
  return db
    .prepare<{ batchId: number; partsId: number; judges: string }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate, decisive FROM analysis_rater_figures
       WHERE batch_id = :batchId AND judge IN (SELECT value FROM json_each(:judges)) AND ${figuresOfResult()}`,
    )
    .all({ batchId, partsId, judges: JSON.stringify(judges) });
}

/**
 * Up to `limit` stored figures of result `partsId` after the pseudonym `afterJudge`, in pseudonym order (the primary
 * key): the payment CSV reads them all in parts, answering other requests between them.
 */
export function listRaterFiguresAfter(db: Db, batchId: number, partsId: number, afterJudge: string, limit: number): RaterFiguresRow[] {
  return db
    .prepare<{ batchId: number; partsId: number; afterJudge: string; limit: number }, RaterFiguresRow>(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate, decisive FROM analysis_rater_figures
       WHERE batch_id = :batchId AND judge > :afterJudge AND ${figuresOfResult()} ORDER BY judge LIMIT :limit`,
    )
    .all({ batchId, partsId, afterJudge, limit });
}
