import type { RaterFiguresRow } from './page-report.js';

// What a new result of a batch's analysis changes in its stored rater figures (migration 032): a figure row is of every
// result from `from_parts` up to, not including, `to_parts`. Result `next` (a number above every one drawn before)
// replaces the stored result `stored`: rows of no result at or after `stored` (left by a job that died while writing,
// or replaced long ago) go, rows of `stored` that a dead job had closed are opened again, and of the new figures only
// those that differ from the stored result's are written, the stored row closed at `next`. Every change keeps the
// stored result's figures as they are, so the changes may be written in as many transactions as it takes while pages
// read the stored result; the rows closed at `next` are no longer of any result once `next` is stored.

/** `to_parts` of a row no result has replaced yet. */
export const OPEN_PARTS = Number.MAX_SAFE_INTEGER;

export type StoredFigureRow = RaterFiguresRow & { from_parts: number; to_parts: number };

/** A row named by its key (batch, judge, from_parts): deleted, opened again, or closed at the new result. */
export type FigureRowKey = { judge: string; from_parts: number };
export type FigureChange =
  | { op: 'delete'; row: FigureRowKey }
  | { op: 'reopen'; row: FigureRowKey }
  | { op: 'close'; row: FigureRowKey }
  | { op: 'insert'; figures: RaterFiguresRow };

/** Whether a stored row is of result `parts` (null: no result with parts is stored, so none is). */
export const isOfResult = (row: Pick<StoredFigureRow, 'from_parts' | 'to_parts'>, parts: number | null) =>
  parts !== null && row.from_parts <= parts && parts < row.to_parts;

const keyOf = (row: StoredFigureRow): FigureRowKey => ({ judge: row.judge, from_parts: row.from_parts });

/** SQLite stores NaN as NULL: the two are one figure. */
const sameNumber = (a: number | null, b: number | null) => (a === null || Number.isNaN(a) ? null : a) === (b === null || Number.isNaN(b) ? null : b);
const sameFigures = (a: RaterFiguresRow, b: RaterFiguresRow) =>
  a.judgments === b.judgments &&
  sameNumber(a.median_seconds, b.median_seconds) &&
  sameNumber(a.majority_agreement, b.majority_agreement) &&
  sameNumber(a.left_rate, b.left_rate) &&
  sameNumber(a.decisive ?? null, b.decisive ?? null);

/** The changes that turn the batch's stored rows (`rows`, all of them) into ones that also hold result `next`'s `figures`, in the order to write them. */
export function planFigureChanges(rows: readonly StoredFigureRow[], stored: number | null, figures: readonly RaterFiguresRow[]): FigureChange[] {
  const cleared: FigureChange[] = [];
  const current = new Map<string, StoredFigureRow>();
  for (const row of rows) {
    if (!isOfResult(row, stored)) cleared.push({ op: 'delete', row: keyOf(row) });
    else {
      current.set(row.judge, row);
      if (row.to_parts !== OPEN_PARTS) cleared.push({ op: 'reopen', row: keyOf(row) });
    }
  }
  const written: FigureChange[] = [];
  for (const next of figures) {
    const old = current.get(next.judge);
    current.delete(next.judge);
    if (old && sameFigures(old, next)) continue;
    if (old) written.push({ op: 'close', row: keyOf(old) });
    written.push({ op: 'insert', figures: next });
  }
  // Raters of the stored result the new one does not have (their data erased): their figures end with it.
  for (const old of current.values()) written.push({ op: 'close', row: keyOf(old) });
  return [...cleared, ...written];
}
