// The analysis worker reads a batch's judgments in parts, each in a snapshot of its own, so that no snapshot holds the
// server's write-ahead log back through a million judgments (issue 12; src/analysis/analysis-input.ts). Checked here:
// no snapshot is held between parts, the input read so is the one a single snapshot reads, judgments added meanwhile
// are left for the next computation, and any change to what was read (a rater excluded, a participant's data erased
// and their ids taken by new judgments) makes it read everything again in one snapshot.
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { analysisVersion, analyzeBatchInput, computeBatchAnalysis } from '../../src/analysis/analysis-cache.js';
import { readAnalysisInput } from '../../src/analysis/analysis-input.js';
import { batchDataVersion, judgmentRange, readJudgmentRows } from '../../src/analysis/batch-judgments.queries.js';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { deleteRaterData, setRaterExcluded } from '../../src/rating/rater-admin.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

const NOW = new Date('2026-02-01T10:00:00.000Z');
const SETTINGS = { seed: 7, bootstrap: 20, targetHalfWidth: 0.05 };

/** Runs `between` after each part of the judgments' read on `db` (the statement of readJudgmentRows has run to its end). */
function betweenParts(db: Db, between: (part: number) => void): void {
  const prepare = db.prepare;
  let part = 0;
  db.prepare = ((sql: string) => {
    const statement = prepare(sql);
    if (!sql.includes('FROM judgments j NOT INDEXED')) return statement;
    return {
      raw: () => ({
        all: (params: unknown) => {
          const rows = statement.raw().all(params);
          between(++part);
          return rows;
        },
      }),
    };
  }) as Db['prepare'];
}

/** A batch of 4 pairs × 3 raters and 6 later judgments, and a second connection to its file (the server's, say). */
function batchWithServer() {
  const { db, path } = createTestDb();
  const made = makeBatchWithJudgments(db, { votes: [['a', 'b', 'b'], ['b', 'b', 'a'], ['a', 'a', 'b'], ['b', 'tie', 'b']], settings: { allowTie: true } });
  const late = makeRater(db, { batchId: made.batchId });
  made.pairIds.forEach((pairId, i) => makeJudgment(db, { pairId, raterId: late, winner: i % 2 === 0 ? 'a' : 'b', activeMs: 4000 }));
  const server = openDatabase(path);
  return { db, path, made, late, server };
}

function judgmentCount(db: Db, batchId: number): number {
  return db.prepare<[number], number>('SELECT count(*) FROM judgments WHERE batch_id = ?').pluck().get(batchId) as number;
}

describe('readJudgmentRows', () => {
  it('holds no snapshot between its parts: another connection checkpoints the whole log and starts it over', () => {
    const { db, path, made } = batchWithServer();
    const other = new Database(path);
    other.pragma('busy_timeout = 0');
    // A commit just before, so that the log holds frames the reader would see.
    makeJudgment(db, { pairId: made.pairIds[0]!, raterId: makeRater(db, { batchId: made.batchId }), winner: 'a' });
    const rows = readJudgmentRows(db, made.batchId, judgmentRange(db, made.batchId), 4);
    expect(rows.next().done).toBe(false);
    expect(other.pragma('wal_checkpoint(TRUNCATE)')).toEqual([{ busy: 0, log: 0, checkpointed: 0 }]);
    expect([...rows]).toHaveLength(judgmentCount(db, made.batchId) - 1);

    // The same check fails while a snapshot is held: the parts inside one read transaction.
    makeJudgment(db, { pairId: made.pairIds[1]!, raterId: makeRater(db, { batchId: made.batchId }), winner: 'b' });
    db.exec('BEGIN');
    const held = readJudgmentRows(db, made.batchId, judgmentRange(db, made.batchId), 4);
    held.next();
    expect(other.pragma('wal_checkpoint(TRUNCATE)')).toEqual([expect.objectContaining({ busy: 1 })]);
    db.exec('COMMIT');
    other.close();
  });
});

describe('readAnalysisInput (the analysis worker\'s read)', () => {
  it('reads in parts the input one snapshot reads: the same report', () => {
    const { db, made, late } = batchWithServer();
    setRaterExcluded(db, { batchId: made.batchId, raterId: late, excluded: true, reason: 'too fast' }, 'admin@example.org', NOW);
    const read = readAnalysisInput(db, made.batchId, SETTINGS, 3);
    if (read === 'unchanged') throw new Error('nothing stored yet');
    expect(read.inParts).toBe(true);
    expect(read.version).toBe(analysisVersion(db, made.batchId, SETTINGS));
    const report = analyzeBatchInput(read.input!, { ...SETTINGS, now: NOW });
    expect(report).toEqual(computeBatchAnalysis(db, made.batchId, { ...SETTINGS, now: NOW }));
    expect(report.n_judgments).toBe(12);
    expect(report.exclusions.raters).toEqual([expect.objectContaining({ reason: 'excluded: too fast', judgments: 4 })]);
  });

  it('leaves judgments added while it reads for the next computation: its input and version are of the first snapshot', () => {
    const { db, made, server } = batchWithServer();
    const before = computeBatchAnalysis(db, made.batchId, { ...SETTINGS, now: NOW });
    const version = analysisVersion(db, made.batchId, SETTINGS);
    let added = 0;
    betweenParts(db, () => {
      makeJudgment(server, { pairId: made.pairIds[2]!, raterId: makeRater(server, { batchId: made.batchId }), winner: 'b' });
      added += 1;
    });
    const read = readAnalysisInput(db, made.batchId, SETTINGS, 3);
    if (read === 'unchanged') throw new Error('nothing stored yet');
    expect(read).toMatchObject({ version, inParts: true });
    // One judgment committed after each of the six parts (16 ids, 3 a part), none of them read.
    expect(added).toBe(6);
    expect(judgmentCount(db, made.batchId)).toBe(16 + 6);
    expect(analyzeBatchInput(read.input!, { ...SETTINGS, now: NOW })).toEqual(before);
    expect(analysisVersion(db, made.batchId, SETTINGS)).not.toBe(version);
  });

  it('reads everything again in one snapshot when a rater is excluded while it reads', () => {
    const { db, made, server } = batchWithServer();
    betweenParts(db, (part) => {
      if (part === 1) setRaterExcluded(server, { batchId: made.batchId, raterId: made.raterIds[1]!, excluded: true, reason: 'straight-lining' }, 'admin@example.org', NOW);
    });
    const read = readAnalysisInput(db, made.batchId, SETTINGS, 3);
    if (read === 'unchanged') throw new Error('nothing stored yet');
    expect(read.inParts).toBe(false);
    expect(read.version).toBe(analysisVersion(db, made.batchId, SETTINGS));
    const report = analyzeBatchInput(read.input!, { ...SETTINGS, now: NOW });
    expect(report.exclusions.raters).toEqual([expect.objectContaining({ reason: 'excluded: straight-lining', judgments: 4 })]);
    expect(report).toEqual(computeBatchAnalysis(db, made.batchId, { ...SETTINGS, now: NOW }));
  });

  it('reads everything again when a participant\'s data is erased and new judgments take their ids while it reads', () => {
    const { db, made, late, server } = batchWithServer();
    const { hi } = judgmentRange(db, made.batchId);
    const replacement = makeRater(db, { batchId: made.batchId });
    betweenParts(db, (part) => {
      if (part !== 1) return;
      // The late rater's four judgments are the table's last rows: SQLite gives their ids to the next four.
      deleteRaterData(server, { batchId: made.batchId, raterId: late, reason: 'erasure request' }, 'admin@example.org', NOW);
      made.pairIds.forEach((pairId) => makeJudgment(server, { pairId, raterId: replacement, winner: 'tie' }));
    });
    const version = analysisVersion(db, made.batchId, SETTINGS);
    const read = readAnalysisInput(db, made.batchId, SETTINGS, 3);
    if (read === 'unchanged') throw new Error('nothing stored yet');
    // The count and the last id are as they were: only the counted removals tell the data apart.
    expect(judgmentRange(db, made.batchId).hi).toBe(hi);
    expect(judgmentCount(db, made.batchId)).toBe(16);
    expect(read.inParts).toBe(false);
    expect(read.version).not.toBe(version);
    const report = analyzeBatchInput(read.input!, { ...SETTINGS, now: NOW });
    expect(report.comparisons[0]).toMatchObject({ n: 16, ties: 5 });
    expect(report).toEqual(computeBatchAnalysis(db, made.batchId, { ...SETTINGS, now: NOW }));
  });

  it('answers unchanged when the stored result has the version', () => {
    const { db, made } = batchWithServer();
    const read = readAnalysisInput(db, made.batchId, SETTINGS);
    if (read === 'unchanged') throw new Error('nothing stored yet');
    db.prepare("INSERT INTO analysis_cache (batch_id, data_version, result, computed_at) VALUES (?, ?, X'00', ?)").run(made.batchId, read.version, NOW.toISOString());
    expect(readAnalysisInput(db, made.batchId, SETTINGS)).toBe('unchanged');
  });
});

describe('batchDataVersion', () => {
  it('changes when judgments are erased and as many new ones take their ids (count and last id the same again)', () => {
    const { db, made, late } = batchWithServer();
    const before = batchDataVersion(db, made.batchId);
    const { hi } = judgmentRange(db, made.batchId);
    deleteRaterData(db, { batchId: made.batchId, raterId: late, reason: 'erasure request' }, 'admin@example.org', NOW);
    const replacement = makeRater(db, { batchId: made.batchId });
    made.pairIds.forEach((pairId) => makeJudgment(db, { pairId, raterId: replacement, winner: 'a' }));
    expect(judgmentRange(db, made.batchId).hi).toBe(hi);
    expect(batchDataVersion(db, made.batchId)).not.toBe(before);
  });

  it('up to an id, is the version that id was the last of: judgments added after it leave it as it was', () => {
    const { db, made } = batchWithServer();
    const before = batchDataVersion(db, made.batchId);
    const { hi } = judgmentRange(db, made.batchId);
    makeJudgment(db, { pairId: made.pairIds[0]!, raterId: makeRater(db, { batchId: made.batchId }), winner: 'a' });
    expect(batchDataVersion(db, made.batchId)).not.toBe(before);
    expect(batchDataVersion(db, made.batchId, hi)).toBe(before);
  });
});
