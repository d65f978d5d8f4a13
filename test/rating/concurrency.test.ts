import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb } from '../helpers/test-db.js';
import { checkInvariants, lateRaterPages, seedBatch } from './rating-fixtures.js';

const root = new URL('../../', import.meta.url).pathname;

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
    const pages = await lateRaterPages(app, seeded.publicId, (ms) => (now = new Date(now.getTime() + ms)));
    const responses = await Promise.all(
      pages.flatMap(({ rater, page }) => [rater.submit(page.res.text, { choice: 'left' }), rater.submit(page.res.text, { choice: 'right' })]),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(303));
    const pairs = checkInvariants(db, seeded.batchId, k);
    expect(pairs[0]?.judged).toBe(k);
    expect(db.prepare('SELECT count(*) FROM judgments WHERE late = 1').pluck().get()).toBe(k);
  });
});
