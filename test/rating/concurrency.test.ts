import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb } from '../helpers/test-db.js';
import { raterClient, seedBatch } from './rating-fixtures.js';

const root = new URL('../../', import.meta.url).pathname;

/** The invariants no interleaving may break. */
function checkInvariants(db: Db, batchId: number, k: number) {
  const pairs = db
    .prepare<{ batchId: number }, { id: number; accepted: number; accepted_left_a: number; judged: number; judged_left_a: number }>(
      `SELECT p.id, p.accepted, p.accepted_left_a,
         (SELECT count(*) FROM judgments j WHERE j.pair_id = p.id) AS judged,
         (SELECT count(*) FROM judgments j WHERE j.pair_id = p.id AND j.left_side = 'a') AS judged_left_a
       FROM pairs p WHERE p.batch_id = :batchId AND p.kind = 'regular'`,
    )
    .all({ batchId });
  for (const p of pairs) {
    expect(p.judged).toBeLessThanOrEqual(k);
    expect(p.accepted).toBe(p.judged);
    expect(p.accepted_left_a).toBe(p.judged_left_a);
  }
  const doubled = db.prepare('SELECT count(*) FROM (SELECT assignment_id FROM judgments GROUP BY assignment_id HAVING count(*) > 1)').pluck().get();
  expect(doubled).toBe(0);
  const raterTwice = db.prepare('SELECT count(*) FROM (SELECT rater_id, pair_id FROM judgments GROUP BY rater_id, pair_id HAVING count(*) > 1)').pluck().get();
  expect(raterTwice).toBe(0);
  // The counters the triggers keep (migrations 015, 019) equal the rows they stand for, after any interleaving.
  const pairLoads = db
    .prepare(
      `SELECT p.id, p.leased, p.leased_left_a, p.reserved,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.state = 'leased') AS leased_rows,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.state = 'leased' AND a.left_side = 'a') AS leased_left_a_rows,
         (SELECT count(*) FROM pair_reservations r WHERE r.pair_id = p.id) AS reserved_rows
       FROM pairs p WHERE p.batch_id = :batchId`,
    )
    .all({ batchId }) as { leased: number; leased_left_a: number; reserved: number; leased_rows: number; leased_left_a_rows: number; reserved_rows: number }[];
  for (const p of pairLoads) expect([p.leased, p.leased_left_a, p.reserved]).toEqual([p.leased_rows, p.leased_left_a_rows, p.reserved_rows]);
  const progress = db
    .prepare(
      `SELECT r.judged, r.regular_judged,
         (SELECT count(*) FROM judgments j WHERE j.rater_id = r.id AND j.question_index = 0) AS judged_rows,
         (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = r.id AND j.question_index = 0 AND p.kind = 'regular') AS regular_rows
       FROM raters r WHERE r.batch_id = :batchId`,
    )
    .all({ batchId }) as { judged: number; regular_judged: number; judged_rows: number; regular_rows: number }[];
  for (const r of progress) expect([r.judged, r.regular_judged]).toEqual([r.judged_rows, r.regular_rows]);
  return pairs;
}

function runWorker(dbPath: string, batchId: number, seed: number, rounds: number): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/rating/concurrency-worker.ts', dbPath, String(batchId), String(seed), String(rounds)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Record<string, number>) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

describe('concurrency', () => {
  it('several processes leasing and answering on one SQLite file, with leases expiring under each other, never exceed K per pair nor give an assignment two judgments', async () => {
    const { db, path } = createTestDb();
    const k = 2;
    // Each worker's rater takes one comparison, so its cap is one: consent reserves up to the cap, and a reservation
    // never turned into a lease would hold a place for the hold time of a rater who is never coming back.
    const seeded = seedBatch(db, { samples: 5, settings: { judgmentsPerPair: k, leaseMinutes: 1, perRaterCap: 1 } });
    const tallies = await Promise.all([1, 2, 3, 4].map((seed) => runWorker(path, seeded.batchId, seed, 40)));
    const total = tallies.reduce<Record<string, number>>((sum, t) => {
      for (const [key, v] of Object.entries(t)) sum[key] = (sum[key] ?? 0) + v;
      return sum;
    }, {});
    // The race really happened: late answers met full pairs, and double submits met their first answer.
    expect(total.stored).toBeGreaterThan(0);
    expect(total.duplicate).toBeGreaterThan(0);
    expect((total.full ?? 0) + (total.done ?? 0)).toBeGreaterThan(0);
    const pairs = checkInvariants(db, seeded.batchId, k);
    expect(pairs.reduce((s, p) => s + p.judged, 0)).toBe(total.stored);
    expect(pairs.every((p) => p.judged === k)).toBe(true);
  }, 120_000);

  it('many simultaneous HTTP submissions of late answers to one pair store exactly K judgments and answer every request as a success', async () => {
    let now = new Date('2026-02-01T09:00:00.000Z');
    const { app, db } = buildTestApp({ clock: () => now });
    const k = 3;
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: k, leaseMinutes: 1 } });
    // Ten raters in turn lease the one pair; each lease expires before the next rater arrives.
    const pages = [];
    for (let i = 0; i < 10; i += 1) {
      const rater = raterClient(app);
      const page = await rater.startRating(seeded.publicId);
      expect(page.url).toContain('/c/');
      pages.push({ rater, page });
      now = new Date(now.getTime() + 2 * 60_000);
    }
    const responses = await Promise.all(
      pages.flatMap(({ rater, page }) => [rater.submit(page.res.text, { choice: 'left' }), rater.submit(page.res.text, { choice: 'right' })]),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(303));
    const pairs = checkInvariants(db, seeded.batchId, k);
    expect(pairs[0]?.judged).toBe(k);
    expect(db.prepare('SELECT count(*) FROM judgments WHERE late = 1').pluck().get()).toBe(k);
  });
});
