// The judgments a stopped comparison received after its stop (issue 51), which the batch page's sequential standing
// reads on each view. A stop records the last judgment before it (migration 051), and the judgments after it are read
// as a range of ids of each pair's index entries; before, every judgment of the comparison was read (320–326 ms at a
// million judgments against 11 ms: scripts/bench/console-pages.ts). A stop recorded before 051 has only its time.
import { describe, expect, it } from 'vitest';
import { judgmentsAfterStop } from '../../src/rating/sequential.queries.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

describe('the judgments after a comparison\'s stop', () => {
  it('are those after the stop\'s last judgment, or for a stop recorded before migration 051 after its time, excluded raters left out; read by id range in the index', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['b', 'a'], ['a', 'a']] });
    const comparison = made.comparisonIds[0] as number;
    const stopAt = new Date('2026-12-04T12:00:00.000Z');
    const last = db.prepare('SELECT max(id) FROM judgments').pluck().get() as number;
    db.prepare("UPDATE comparisons SET stopped_at = :at, stop_reason = 'efficacy', stopped_after_judgment = :last WHERE id = :id").run({ at: stopAt.toISOString(), last, id: comparison });
    expect(judgmentsAfterStop(db, comparison)).toEqual({ judgments: 0, pairs: 0, a: 0, b: 0, ties: 0 });

    // Three late answers on two pairs, one of them by a rater excluded since.
    const late = [makeRater(db, { batchId: made.batchId }), makeRater(db, { batchId: made.batchId }), makeRater(db, { batchId: made.batchId, excluded: true, exclusionReason: 'bot' })];
    const after = new Date(stopAt.getTime() + 60_000);
    makeJudgment(db, { pairId: made.pairIds[0] as number, raterId: late[0] as number, winner: 'a', submittedAt: after });
    makeJudgment(db, { pairId: made.pairIds[0] as number, raterId: late[1] as number, winner: 'tie', submittedAt: after });
    makeJudgment(db, { pairId: made.pairIds[1] as number, raterId: late[1] as number, winner: 'b', submittedAt: after });
    makeJudgment(db, { pairId: made.pairIds[2] as number, raterId: late[2] as number, winner: 'a', submittedAt: after });
    expect(judgmentsAfterStop(db, comparison)).toEqual({ judgments: 3, pairs: 2, a: 1, b: 1, ties: 1 });

    // The same stop as one recorded before migration 051: the judgments submitted after its time.
    db.prepare('UPDATE comparisons SET stopped_after_judgment = NULL WHERE id = ?').run(comparison);
    expect(judgmentsAfterStop(db, comparison)).toEqual({ judgments: 3, pairs: 2, a: 1, b: 1, ties: 1 });
    db.prepare('UPDATE comparisons SET stopped_at = NULL, stop_reason = NULL WHERE id = ?').run(comparison);
    expect(judgmentsAfterStop(db, comparison)).toEqual({ judgments: 0, pairs: 0, a: 0, b: 0, ties: 0 });
  });

  it('reads a stop recorded with its last judgment through a range of ids in each pair\'s index entries', () => {
    const { db } = createTestDb();
    const captured: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => (captured.push(sql), prepare(sql))) as typeof db.prepare;
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b']] });
    const comparison = made.comparisonIds[0] as number;
    db.prepare("UPDATE comparisons SET stopped_at = '2026-12-04T12:00:00.000Z', stop_reason = 'efficacy', stopped_after_judgment = 1 WHERE id = ?").run(comparison);
    captured.length = 0;
    judgmentsAfterStop(db, comparison);
    const read = captured.find((sql) => sql.includes('FROM comparisons c'));
    expect(read).toBeDefined();
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${read}`).all({ id: comparison }) as { detail: string }[]).map((r) => r.detail).join('\n');
    expect(plan).toContain('SEARCH j USING INDEX judgments_by_batch (batch_id=? AND pair_id=? AND rowid>?)');
  });
});
