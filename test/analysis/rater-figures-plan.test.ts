// Migration 032: a new result writes only the rater figures that changed since the stored one, and clears what a job
// that died while writing left behind; every change keeps the stored result's figures as they are.
import { describe, expect, it } from 'vitest';
import type { RaterFiguresRow } from '../../src/analysis/page-report.js';
import { type FigureChange, isOfResult, OPEN_PARTS, planFigureChanges, type StoredFigureRow } from '../../src/analysis/rater-figures-plan.js';

const figures = (judge: string, judgments: number, median: number | null = 20): RaterFiguresRow => ({ judge, judgments, median_seconds: median, majority_agreement: 0.75, left_rate: 0.5 });
const row = (f: RaterFiguresRow, from: number, to = OPEN_PARTS): StoredFigureRow => ({ ...f, from_parts: from, to_parts: to });

/** The rows after the changes are written for result `next`, as src/analysis/rater-figures.queries.ts writes them. */
function apply(rows: StoredFigureRow[], changes: FigureChange[], next: number): StoredFigureRow[] {
  let out = rows.map((r) => ({ ...r }));
  const find = (k: { judge: string; from_parts: number }) => out.find((r) => r.judge === k.judge && r.from_parts === k.from_parts)!;
  for (const change of changes) {
    if (change.op === 'delete') out = out.filter((r) => !(r.judge === change.row.judge && r.from_parts === change.row.from_parts));
    else if (change.op === 'reopen') find(change.row).to_parts = OPEN_PARTS;
    else if (change.op === 'close') find(change.row).to_parts = next;
    else out.push(row(change.figures, next));
  }
  return out;
}
const ofResult = (rows: StoredFigureRow[], parts: number) =>
  rows
    .filter((r) => isOfResult(r, parts))
    .map(({ from_parts: _from, to_parts: _to, ...f }) => f)
    .sort((a, b) => a.judge.localeCompare(b.judge));

describe('planFigureChanges', () => {
  it('writes every figure of a first result, and nothing of an unchanged one', () => {
    const next = [figures('ann', 3), figures('bob', 5)];
    expect(planFigureChanges([], null, next)).toEqual(next.map((f) => ({ op: 'insert', figures: f })));
    expect(planFigureChanges([row(next[0]!, 4), row(next[1]!, 2)], 4, next)).toEqual([]);
  });

  it('closes and writes anew only the raters whose figures changed, closes those the new result has not, and keeps the stored result as it was', () => {
    const stored = [row(figures('ann', 3), 1), row(figures('bob', 5), 2), row(figures('cy', 1), 2), row(figures('dee', 7, null), 1)];
    // bob answered once more, cy's data were erased, eve is new; ann unchanged, dee's NaN time is SQLite's NULL.
    const next = [figures('ann', 3), figures('bob', 6), figures('dee', 7, Number.NaN), figures('eve', 1)];
    const changes = planFigureChanges(stored, 2, next);
    expect(changes).toEqual([
      { op: 'close', row: { judge: 'bob', from_parts: 2 } },
      { op: 'insert', figures: figures('bob', 6) },
      { op: 'insert', figures: figures('eve', 1) },
      { op: 'close', row: { judge: 'cy', from_parts: 2 } },
    ]);
    // Whatever prefix of them is written, result 2 reads what it read; once all are, result 3 reads the new figures.
    for (let n = 0; n <= changes.length; n++) expect(ofResult(apply(stored, changes.slice(0, n), 3), 2)).toEqual(ofResult(stored, 2));
    const after = apply(stored, changes, 3);
    expect(ofResult(after, 3)).toEqual(ofResult(next.map((f) => row(f, 3)), 3).map((f) => (f.judge === 'dee' ? { ...f, median_seconds: null } : f)));
  });

  it('clears what a dead job left (its rows, its closing of stored rows) and rows no result at or after the stored one reads', () => {
    const ann = figures('ann', 3);
    const bob = figures('bob', 5);
    // Stored result 4. Job 5 died after closing ann's row and writing its own; bob's row from result 1 ended at 3.
    const rows = [row(ann, 2, 5), row({ ...ann, judgments: 4 }, 5), row({ ...bob, judgments: 4 }, 1, 3), row(bob, 3)];
    const changes = planFigureChanges(rows, 4, [ann, bob]);
    expect(changes).toEqual([
      { op: 'reopen', row: { judge: 'ann', from_parts: 2 } },
      { op: 'delete', row: { judge: 'ann', from_parts: 5 } },
      { op: 'delete', row: { judge: 'bob', from_parts: 1 } },
    ]);
    const after = apply(rows, changes, 6);
    expect(after).toEqual([row(ann, 2), row(bob, 3)]);
    expect(ofResult(after, 6)).toEqual([ann, bob]);
  });

  it('with no result stored with its parts (one stored in process), clears every row and writes every figure', () => {
    const rows = [row(figures('ann', 3), 1)];
    expect(planFigureChanges(rows, null, [figures('ann', 3)])).toEqual([
      { op: 'delete', row: { judge: 'ann', from_parts: 1 } },
      { op: 'insert', figures: figures('ann', 3) },
    ]);
  });
});
