import { describe, expect, it } from 'vitest';
import { COMPLETED_PAIR_JUDGMENTS_SQL } from '../../src/rating/sequential.queries.js';
import { createTestDb } from '../helpers/test-db.js';

// A look runs inside the answer's write transaction, so what it reads must not grow with the database: it once
// scanned every judgment of every batch (11 s a look at 200,000 judgments of history, scripts/bench/sequential-looks.ts).
describe('sequential look queries', () => {
  it('completedPairVotes reads its comparison\'s pairs and their judgments by index, never every judgment of the database', () => {
    const { db } = createTestDb();
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${COMPLETED_PAIR_JUDGMENTS_SQL}`).all({ id: 1, k: 3 }) as { detail: string }[]).map((r) => r.detail);
    expect(plan[0]).toMatch(/^SEARCH p USING INDEX pairs_by_comparison/);
    expect(plan).toContain('SEARCH j USING INDEX judgments_by_batch (batch_id=? AND pair_id=?)');
    expect(plan.filter((d) => d.startsWith('SCAN'))).toEqual([]);
  });
});
