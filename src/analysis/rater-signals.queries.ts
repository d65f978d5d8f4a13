import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import type { RaterSignals } from './quality-signals.js';

// analysis_rater_signals (migration 078): each rater's quality-signal counts of the batch's last computed analysis,
// written by whoever stores that analysis (the worker in parts, between raters' writes; in process in one
// transaction), and read by the raters and participants pages and the payment CSV for the raters they list. The
// cross-rater signals (the same reason as another rater) need every reason of the batch, which no request reads.

/** A rater's signals as stored: rater id and the counts' JSON text (compared as text: only changed rows are written). */
export type StoredSignalRow = { rater_id: number; signals: string };

const countsSchema = z.object({
  judgments: z.number().int().min(0),
  measured: z.number().int().min(0),
  implausible: z.number().int().min(0),
  pasted: z.number().int().min(0),
  typed: z.number().int().min(0),
  underReadingFloor: z.number().int().min(0),
  beforeSecond: z.number().int().min(0),
  sameAsOtherRater: z.number().int().min(0),
  copiedFromPage: z.number().int().min(0),
  keys: z.record(z.string(), z.number().int().min(0)),
});

/** Rows of the signals computed, in rater id order (JSON in RaterSignals' field order, so equal counts are equal text). */
export function signalRowsOf(byRater: ReadonlyMap<number, RaterSignals>): StoredSignalRow[] {
  return [...byRater]
    .sort(([x], [y]) => x - y)
    .map(([rater_id, s]) => ({ rater_id, signals: JSON.stringify(countsSchema.parse(s)) }));
}

export type SignalChange = { op: 'upsert'; row: StoredSignalRow } | { op: 'delete'; raterId: number };

/** What turns the stored rows into `next`: changed and new rows written, rows of raters `next` does not have removed. */
export function planSignalChanges(stored: ReadonlyMap<number, string>, next: readonly StoredSignalRow[]): SignalChange[] {
  const left = new Map(stored);
  const changes: SignalChange[] = [];
  for (const row of next) {
    if (left.get(row.rater_id) !== row.signals) changes.push({ op: 'upsert', row });
    left.delete(row.rater_id);
  }
  for (const raterId of left.keys()) changes.push({ op: 'delete', raterId });
  return changes;
}

/** The batch's stored signal rows, by rater id. */
export function listStoredSignals(db: Db, batchId: number): Map<number, string> {
  const rows = db.prepare<{ b: number }, StoredSignalRow>('SELECT rater_id, signals FROM analysis_rater_signals WHERE batch_id = :b').all({ b: batchId });
  return new Map(rows.map((r) => [r.rater_id, r.signals]));
}

/**
 * Writes changes in the caller's transaction. A rater erased since the signals were read is not written back: the row
 * would name a rater who is gone (the foreign key refuses it, and the erasure must hold).
 */
export function applySignalChanges(db: Db, batchId: number, changes: readonly SignalChange[]): void {
  const upsert = db.prepare(
    `INSERT INTO analysis_rater_signals (batch_id, rater_id, signals)
     SELECT :b, :r, :signals WHERE EXISTS (SELECT 1 FROM raters WHERE id = :r AND batch_id = :b)
     ON CONFLICT (batch_id, rater_id) DO UPDATE SET signals = excluded.signals`,
  );
  const remove = db.prepare('DELETE FROM analysis_rater_signals WHERE batch_id = :b AND rater_id = :r');
  for (const change of changes) {
    if (change.op === 'upsert') upsert.run({ b: batchId, r: change.row.rater_id, signals: change.row.signals });
    else remove.run({ b: batchId, r: change.raterId });
  }
}

/** In the caller's transaction: the batch's stored signals made exactly `rows` (an analysis stored in process). */
export function replaceRaterSignals(db: Db, batchId: number, rows: readonly StoredSignalRow[]): void {
  applySignalChanges(db, batchId, planSignalChanges(listStoredSignals(db, batchId), rows));
}

/**
 * The stored signals of these raters (a page's or a CSV part's), by rater id; a rater without a row (no judgment the
 * signals count, or none analysed yet) is left out, as is a damaged row: the page then shows no signals for that rater.
 */
export function findRaterSignals(db: Db, batchId: number, raterIds: readonly number[]): Map<number, RaterSignals> {
  const out = new Map<number, RaterSignals>();
  if (raterIds.length === 0) return out;
  const rows = db
    .prepare<{ b: number; ids: string }, StoredSignalRow>(
      'SELECT rater_id, signals FROM analysis_rater_signals WHERE batch_id = :b AND rater_id IN (SELECT value FROM json_each(:ids))',
    )
    .all({ b: batchId, ids: JSON.stringify(raterIds) });
  for (const row of rows) {
    try {
      out.set(row.rater_id, parseJsonColumn(countsSchema, row.signals, `analysis_rater_signals of rater ${row.rater_id}`));
    } catch {
      // Damaged: no signals shown for this rater; the batch's next analysis writes the row again.
    }
  }
  return out;
}
