import { describe, expect, it } from 'vitest';
import { makeBatchWithJudgments } from './factories.js';
import { createTestDb } from './test-db.js';

describe('test factories', () => {
  it('makeBatchWithJudgments, with three pairs and two raters, stores judgments and keeps pair counters', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['a', null], ['tie', 'a']] });
    expect(made.pairIds).toHaveLength(3);
    expect(db.prepare('SELECT count(*) FROM judgments WHERE batch_id = ?').pluck().get(made.batchId)).toBe(5);
    expect(db.prepare('SELECT accepted FROM pairs WHERE id = ?').pluck().get(made.pairIds[1])).toBe(1);
    expect(db.prepare("SELECT label FROM judgments WHERE winner = 'a' LIMIT 1").pluck().get()).toBe('SCRIPT:test-model');
  });
});
