import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { assignmentOf, checkInvariants, count, lateRaterPages, raterClient, seedBatch, START, threadedApp, whenRunning } from './rating-fixtures.js';

// The server stores answers, and leases the next comparison, on a thread of its own with its own connection
// (src/rating/answer-thread.ts, issue 12). Judgments the app's connection stored (a TEMP trigger of its own) tell which
// connection did it. The answer whose next lease fails is in answer-and-next-lease.test.ts, for both threads.

/**
 * Judgments the app's own connection has stored since this was called: a TEMP trigger is the connection's own, so
 * it sees that connection's inserts only, not the answer thread's.
 */
function judgmentsStoredHere(db: Db): () => number {
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS stored_here (id INTEGER);
    CREATE TEMP TRIGGER IF NOT EXISTS note_stored_here AFTER INSERT ON main.judgments BEGIN INSERT INTO stored_here VALUES (NEW.id); END;
    DELETE FROM stored_here;`);
  return () => db.prepare('SELECT count(*) FROM temp.stored_here').pluck().get() as number;
}

describe('the answer thread', () => {
  it('stores the answer and leases the next comparison at the request clock, on its own connection; a double submit stores nothing more and another choice revises it', async () => {
    const { app, db, advance, thread, problems } = await threadedApp();
    // Its code was bundled (answer-thread-entry.ts), not left to tsx.
    expect(problems).toEqual([]);
    const seeded = seedBatch(db, { samples: 4, settings: { leaseMinutes: 30 } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    expect(thread.running()).toBe(true);

    advance(20_000);
    const storedHere = judgmentsStoredHere(db);
    const posted = await rater.submit(first.res.text, { choice: 'left' });
    expect(posted.status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(storedHere()).toBe(0);
    expect(assignmentOf(db, first.url)?.state).toBe('answered');
    const location = String(posted.headers.location);
    expect(location).toMatch(/\/c\/[^/?]+\?rt=/);
    const answeredAt = new Date(START.getTime() + 20_000);
    expect(db.prepare('SELECT state, viewed_at, expires_at FROM assignments WHERE id = ?').get(assignmentOf(db, location)?.id)).toEqual({
      state: 'leased',
      viewed_at: answeredAt.toISOString(),
      expires_at: new Date(answeredAt.getTime() + 30 * 60_000).toISOString(),
    });

    const again = await rater.submit(first.res.text, { choice: 'left' });
    expect(again.status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(db.prepare('SELECT choice FROM judgments').pluck().get()).toBe('left');
    // Another choice on the same page is the rater changing the answer just given (issue 49), on the thread too.
    const revised = await rater.submit(first.res.text, { choice: 'right' });
    expect(revised.status).toBe(303);
    expect(String(revised.headers.location)).toMatch(/&notice=revised$/);
    expect(db.prepare('SELECT count(*) AS n, max(choice) AS choice FROM judgments').get()).toEqual({ n: 1, choice: 'right' });
    expect(db.prepare('SELECT choice FROM judgment_revisions').pluck().all()).toEqual(['left']);

    const page = await rater.get(location);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/Comparison 2 of/);
  });

  it('many simultaneous late answers to one pair, while the request thread goes on serving, store exactly K and answer each with a success', async () => {
    const { app, db, advance } = await threadedApp();
    const k = 3;
    const seeded = seedBatch(db, { samples: 1, settings: { judgmentsPerPair: k, leaseMinutes: 1 } });
    const pages = await lateRaterPages(app, seeded.publicId, advance);
    const responses = await Promise.all(
      pages.flatMap(({ rater, page }) => [rater.submit(page.res.text, { choice: 'left' }), rater.submit(page.res.text, { choice: 'right' }), rater.get(page.url)]),
    );
    expect(responses.filter((_, i) => i % 3 !== 2).map((r) => r.status)).toEqual(Array(20).fill(303));
    const pairs = checkInvariants(db, seeded.batchId, k);
    expect(pairs[0]?.judged).toBe(k);
    expect(count(db, 'SELECT count(*) FROM judgments WHERE late = 1')).toBe(k);
  });

  it('raters answering side by side through the thread fill every pair to K and no further, each rater seeing a pair once', async () => {
    const { app, db } = await threadedApp();
    const k = 2;
    // Four raters of three comparisons each: the batch's twelve places, one pair of each sample.
    const seeded = seedBatch(db, { samples: 6, settings: { judgmentsPerPair: k, perRaterCap: 3 } });
    // Each from an address of their own: the per-address limit is not what this is about.
    const walk = async (_: unknown, i: number) => {
      const rater = raterClient(app, { address: `198.51.100.${i + 1}` });
      let page = await rater.startRating(seeded.publicId);
      while (page.url.includes('/c/')) {
        const posted = await rater.submit(page.res.text, { choice: Math.random() < 0.5 ? 'left' : 'right' });
        expect(posted.status).toBe(303);
        page = await rater.follow(String(posted.headers.location));
      }
      expect(page.res.status).toBe(200);
    };
    await Promise.all(Array.from({ length: 4 }, walk));
    const pairs = checkInvariants(db, seeded.batchId, k);
    expect(pairs.reduce((sum, p) => sum + p.judged, 0)).toBe(pairs.length * k);
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(0);
  });

  it("a rater's other steps (entry, consent, instructions, the first lease and its page, the end) are written by the thread too, the app's connection changing no row; while the thread is down, by the request thread", async () => {
    const { app, db, thread } = await threadedApp();
    const seeded = seedBatch(db, { samples: 4, settings: { perRaterCap: 2 } });
    // Rows this connection has inserted, changed or deleted since it was opened (SQLite's own count; not the thread's).
    const changedHere = () => db.prepare('SELECT total_changes()').pluck().get() as number;
    const session = async (address: string) => {
      const rater = raterClient(app, { address });
      let page = await rater.startRating(seeded.publicId);
      while (page.url.includes('/c/')) {
        const posted = await rater.submit(page.res.text, { choice: 'left' });
        expect(posted.status).toBe(303);
        page = await rater.follow(String(posted.headers.location));
      }
      expect(page.url).toContain('/done');
      expect(page.res.status).toBe(200);
    };

    const before = changedHere();
    await session('198.51.100.1');
    expect(changedHere()).toBe(before);
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed'")).toBe(1);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(2);
    expect(count(db, 'SELECT count(*) FROM assignments WHERE viewed_at IS NULL')).toBe(0);

    await thread.interrupt();
    await session('198.51.100.2');
    expect(changedHere()).toBeGreaterThan(before);
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed'")).toBe(2);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(4);
    checkInvariants(db, seeded.batchId, 3);
  });

  it('a fault in storing the answer rolls it back and shows an error page without internals; the answer can be sent again', async () => {
    const { app, db } = await threadedApp();
    const seeded = seedBatch(db, { samples: 4 });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    db.exec("CREATE TRIGGER refuse_judgments BEFORE INSERT ON judgments BEGIN SELECT RAISE(ABORT, 'judgment refused'); END");
    const refused = await rater.submit(first.res.text, { choice: 'left' });
    expect(refused.status).toBe(500);
    expect(refused.text).not.toMatch(/judgment refused|RAISE|at .*\.ts:/);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
    expect(assignmentOf(db, first.url)?.state).toBe('leased');
    db.exec('DROP TRIGGER refuse_judgments');
    const stored = await rater.submit(first.res.text, { choice: 'left' });
    expect(stored.status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
  });

  it('while the thread is down, answers are stored on the request thread; it starts again after the restart delay', async () => {
    const { app, db, thread } = await threadedApp({ restartDelayMs: 300 });
    const seeded = seedBatch(db, { samples: 4 });
    const rater = raterClient(app);
    let page = await rater.startRating(seeded.publicId);
    await thread.interrupt();
    expect(thread.running()).toBe(false);

    const storedHere = judgmentsStoredHere(db);
    let posted = await rater.submit(page.res.text, { choice: 'left' });
    expect(posted.status).toBe(303);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(storedHere()).toBe(1);

    // Started again by itself after the delay.
    await whenRunning(thread);
    page = await rater.follow(String(posted.headers.location));
    posted = await rater.submit(page.res.text, { choice: 'right' });
    expect(posted.status).toBe(303);
    expect(thread.running()).toBe(true);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(2);
    expect(storedHere()).toBe(1);
  });

  it('an answer waiting when the thread ends is stored once, on the request thread or by the thread before it ended', async () => {
    const { app, db, thread } = await threadedApp();
    const seeded = seedBatch(db, { samples: 4, settings: { perRaterCap: 2 } });
    const raters = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        const rater = raterClient(app, { address: `198.51.100.${i + 1}` });
        return { rater, page: await rater.startRating(seeded.publicId) };
      }),
    );
    const answers = raters.map(({ rater, page }) => rater.submit(page.res.text, { choice: 'left' }));
    // Ended while the answers are on their way to it or in it.
    await new Promise((resolve) => setImmediate(resolve));
    await thread.interrupt();
    const responses = await Promise.all(answers);
    expect(responses.map((r) => r.status)).toEqual([303, 303, 303, 303]);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(4);
    for (const { page } of raters) expect(assignmentOf(db, page.url)?.state).toBe('answered');
    checkInvariants(db, seeded.batchId, 3);
  });

  it('without its bundle, the thread runs the TypeScript sources through tsx and stores answers the same way', async () => {
    const { app, db } = await threadedApp({ bundled: false });
    const seeded = seedBatch(db, { samples: 4 });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    const storedHere = judgmentsStoredHere(db);
    const posted = await rater.submit(first.res.text, { choice: 'left' });
    expect(posted.status).toBe(303);
    expect(String(posted.headers.location)).toMatch(/\/c\/[^/?]+\?rt=/);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    expect(storedHere()).toBe(0);
  });
});
