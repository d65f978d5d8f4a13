import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serveOrders } from '../../src/batches/serve-order.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';
import { seedBatch } from '../rating/rating-fixtures.js';

// Issue 51, item 8: the order that breaks ties between equally filled pairs interleaves the comparisons, each starting
// at a different scenario sample (src/batches/serve-order.ts; migration 053 gives existing batches the same order).

describe('the serving order of a batch\'s pairs', () => {
  it('serveOrders, for two comparisons of four pairs over the same samples, alternates comparisons and samples apart', () => {
    // Comparison 0 starts at its sample 0, comparison 1 at its sample 2 (4 / 2): places 0..7 are
    // c0 s0, c1 s2, c0 s1, c1 s3, c0 s2, c1 s0, c0 s3, c1 s1.
    expect(serveOrders([0, 0, 0, 0, 1, 1, 1, 1], 2)).toEqual([0, 2, 4, 6, 5, 7, 1, 3]);
    // One comparison: formation order.
    expect(serveOrders([0, 0, 0], 1)).toEqual([0, 1, 2]);
    // Uneven sizes (a sample skipped in one comparison): still one place each, no two alike.
    const uneven = serveOrders([0, 0, 0, 1, 1, 2, 2, 2, 2], 3);
    expect(new Set(uneven).size).toBe(9);
  });

  it('migration 053, on a database whose pairs had no serving order, gives each pair the order a new batch gets', () => {
    const { db } = createTestDb();
    const runName = `order-${Math.random().toString(36).slice(2, 8)}`;
    const runId = makeRun(db, { name: runName, model: 'm', modes: ['SCRIPT', 'AGENTS', 'MINDREADERS'] });
    for (let i = 0; i < 7; i++) {
      const scenario = makeScenario(db);
      for (const mode of ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const) makeDialogue(db, { runId, scenario, mode, model: 'm', turns: makeTurns(4, 6) });
    }
    const created = createBatch(
      db,
      launchReady({ name: 'three comparisons', runs: [runName], comparisons: [['SCRIPT:m', 'AGENTS:m'], ['AGENTS:m', 'MINDREADERS:m'], ['SCRIPT:m', 'MINDREADERS:m']], provider: { kind: 'link' } }),
      { actor: 'test', now: new Date('2026-01-15T12:00:00.000Z') },
    );
    seedBatch(db, { samples: 3 });
    const orders = db.prepare("SELECT id, serve_order FROM pairs WHERE kind = 'regular' ORDER BY id").raw().all() as [number, number | null][];
    expect(orders.filter(([, order]) => order === null)).toEqual([]);
    db.prepare('UPDATE pairs SET serve_order = NULL').run();
    const migration = readFileSync(new URL('../../src/db/migrations/053-pair-serve-order.sql', import.meta.url), 'utf8');
    const backfill = /UPDATE pairs SET serve_order[\s\S]*?WHERE pairs\.id = placed\.id;/.exec(migration)?.[0];
    expect(backfill).toBeDefined();
    db.exec(backfill as string);
    expect(db.prepare("SELECT id, serve_order FROM pairs WHERE kind = 'regular' ORDER BY id").raw().all()).toEqual(orders);
    expect(db.prepare("SELECT count(DISTINCT serve_order) FROM pairs WHERE batch_id = ? AND kind = 'regular'").pluck().get(created.batchId)).toBe(21);
  });
});
