import { describe, expect, it } from 'vitest';
import { batchCounts } from '../../src/batches/batch.queries.js';
import type { Db } from '../../src/db/connection.js';
import { removePair } from '../../src/rating/rater-admin.js';
import { makeRater } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';
import { seedBatch } from '../rating/rating-fixtures.js';

// batchCounts reads indexes and counters; what it says must be what counting the rows says.

function countedFromRows(db: Db, batchId: number, k: number) {
  const one = (sql: string) => db.prepare(sql).pluck().get({ batchId, k }) as number;
  return {
    pairs: one("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL"),
    goldPairs: one("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind <> 'regular'"),
    judgments: one('SELECT count(*) FROM judgments WHERE batch_id = :batchId AND question_index = 0'),
    regular: one('SELECT count(*) FROM judgments WHERE batch_id = :batchId AND question_index = 0 AND is_gold = 0'),
    raters: one('SELECT count(*) FROM raters WHERE batch_id = :batchId'),
    completedPairs: one("SELECT count(*) FROM pairs WHERE batch_id = :batchId AND kind = 'regular' AND removed_at IS NULL AND accepted >= :k"),
  };
}

describe('batchCounts', () => {
  it('for a batch with gold pairs, removed pairs (full and not), full pairs and raters, equals counting the rows', () => {
    const { db } = createTestDb();
    const seeded = seedBatch(db, { samples: 6, settings: { judgmentsPerPair: 2, onboarding: { pairs: 1, threshold: 0.5 }, attentionChecks: { rate: 0.5, maxFailures: 1 } } });
    const other = seedBatch(db, { samples: 2, settings: { judgmentsPerPair: 2 } });
    const [p1, p2, p3, p4] = seeded.pairIds as [number, number, number, number];
    // Counters as answers would leave them (pairs.accepted is what "full" reads); the other batch's pairs all full.
    const setAccepted = db.prepare('UPDATE pairs SET accepted = :n WHERE id = :id');
    for (const [id, n] of [[p1, 2], [p2, 3], [p3, 1], [p4, 2]] as const) setAccepted.run({ id, n });
    for (const id of other.pairIds) setAccepted.run({ id, n: 2 });
    removePair(db, { batchId: seeded.batchId, pairId: p2, reason: 'broken' }, 'test', new Date());
    removePair(db, { batchId: seeded.batchId, pairId: p3, reason: 'broken' }, 'test', new Date());
    for (let i = 0; i < 3; i += 1) makeRater(db, { batchId: seeded.batchId });
    makeRater(db, { batchId: other.batchId });
    const counts = batchCounts(db, seeded.batchId, 2);
    expect(counts).toEqual(countedFromRows(db, seeded.batchId, 2));
    expect(counts).toMatchObject({ pairs: seeded.pairIds.length - 2, completedPairs: 2, raters: 3 });
    expect(counts.goldPairs).toBeGreaterThan(0);
    expect(batchCounts(db, other.batchId, 2)).toEqual(countedFromRows(db, other.batchId, 2));
  });
});
