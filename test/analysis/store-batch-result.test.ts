// The analysis worker stores a result beside a server whose raters write all the time (issue 12). Its transactions
// read before they write (is the batch's figures writer still this job?): begun as plain (deferred) transactions, one
// that met another process's write lock when it came to write was refused at once ("database is locked"), as SQLite
// does not wait for a lock that a transaction already reading would have to take. They must wait for it instead.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { storeBatchResult } from '../../src/analysis/analysis-worker.js';
import { compressReport } from '../../src/analysis/stored-report.js';
import { findRaterSignals, listStoredSignals, planSignalChanges, signalRowsOf } from '../../src/analysis/rater-signals.queries.js';
import { makeBatch, makeRater } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

/** Another process that takes the database's write lock, says so, and holds it for `ms`; resolves with its exit. */
async function holdWriteLock(path: string, ms: number): Promise<{ exited: Promise<unknown> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[2]));
    db.exec('COMMIT');`;
  const child = spawn(process.execPath, ['-e', script, path, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  expect(String(line)).toBe('locked\n');
  return { exited };
}

describe('storeBatchResult', () => {
  it("while another process holds the write lock, waits for it and stores the result with its raters' figures", async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db, {});
    const figures = [
      { judge: 'aaaa', judgments: 3, median_seconds: 20, majority_agreement: 1, left_rate: 0.5 },
      { judge: 'bbbb', judgments: 2, median_seconds: 14, majority_agreement: 0.5, left_rate: 1 },
    ];
    const result = { version: 'v1', report: compressReport('{}'), pageReport: compressReport('{}'), plots: [], figures, signals: [], now: new Date() };

    const holder = await holdWriteLock(path, 400);
    const started = performance.now();
    await expect(storeBatchResult(db, batchId, result)).resolves.toBe('stored');
    expect(performance.now() - started).toBeGreaterThan(200);
    await holder.exited;
    const parts = db.prepare('SELECT parts_id FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId);
    expect(db.prepare('SELECT judge FROM analysis_rater_figures WHERE batch_id = ? AND from_parts <= ? AND to_parts > ? ORDER BY judge').pluck().all(batchId, parts, parts)).toEqual([
      'aaaa',
      'bbbb',
    ]);

    // The next result, again behind another's lock: only the changed rater's figures are written anew.
    const again = await holdWriteLock(path, 400);
    await expect(storeBatchResult(db, batchId, { ...result, version: 'v2', figures: [figures[0]!, { ...figures[1]!, judgments: 3 }] })).resolves.toBe('stored');
    await again.exited;
    const next = db.prepare('SELECT parts_id FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId);
    expect(db.prepare('SELECT judge, from_parts, judgments FROM analysis_rater_figures WHERE batch_id = ? ORDER BY judge').all(batchId)).toEqual([
      { judge: 'aaaa', from_parts: parts, judgments: 3 },
      { judge: 'bbbb', from_parts: next, judgments: 3 },
    ]);
  });

  it("stores the raters' signals beside the result: only the changed rows are written, a rater gone since is neither kept nor written back", async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db, {});
    const [first, second, third] = [0, 1, 2].map(() => makeRater(db, { batchId })) as [number, number, number];
    const counts = (judgments: number, pasted = 0) => ({ judgments, measured: judgments, implausible: 0, pasted, typed: judgments - pasted, underReadingFloor: 0, beforeSecond: 0, sameAsOtherRater: 0, copiedFromPage: 0, keys: { '1': judgments } });
    const signals = signalRowsOf(new Map([[first, counts(3)], [second, counts(2, 2)], [third, counts(1)]]));
    const result = { version: 'v1', report: compressReport('{}'), pageReport: compressReport('{}'), plots: [], figures: [], signals, now: new Date() };
    await expect(storeBatchResult(db, batchId, result)).resolves.toBe('stored');
    expect(findRaterSignals(db, batchId, [first, second, third])).toEqual(new Map([[first, counts(3)], [second, counts(2, 2)], [third, counts(1)]]));

    // The next result: the first rater answered once more, the third was erased after the worker read the signals.
    db.prepare('DELETE FROM raters WHERE id = ?').run(third);
    const next = signalRowsOf(new Map([[first, counts(4)], [second, counts(2, 2)], [third, counts(1)]]));
    const changes = planSignalChanges(listStoredSignals(db, batchId), next);
    expect(changes.map((c) => (c.op === 'upsert' ? c.row.rater_id : -1))).toEqual([first, third]);
    await expect(storeBatchResult(db, batchId, { ...result, version: 'v2', signals: next })).resolves.toBe('stored');
    expect(findRaterSignals(db, batchId, [first, second, third])).toEqual(new Map([[first, counts(4)], [second, counts(2, 2)]]));

    // A rater the new result does not have (their judgments erased) loses the row.
    await expect(storeBatchResult(db, batchId, { ...result, version: 'v3', signals: next.filter((r) => r.rater_id !== second) })).resolves.toBe('stored');
    expect([...findRaterSignals(db, batchId, [first, second, third]).keys()]).toEqual([first]);
  });
});
