import { describe, expect, it } from 'vitest';
import { assignmentOf, count, raterClient, seedBatch, START, testApp, threadedApp } from './rating-fixtures.js';

// An answer's POST stores the judgment and leases the rater's next comparison in one transaction, and redirects
// straight to it; that lease is made as viewed, for the full lease time, so its page writes nothing (issue 12).

/** Rows this connection (the app's) has written so far, triggers included: unchanged means the request wrote nothing. */
const totalWrites = (db: ReturnType<typeof testApp>['db']) => db.prepare('SELECT total_changes()').pluck().get() as number;

describe('an answer and the next lease', () => {
  it('the answer redirects straight to the next comparison, leased for the full lease time as viewed; serving that page writes nothing', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 4, settings: { leaseMinutes: 30 } });
    const rater = raterClient(app);
    const first = await rater.startRating(seeded.publicId);
    // A lease made on the way in (GET /next) is a short hold until its page is served; serving it gave it the full time.
    const firstRow = db.prepare('SELECT viewed_at, expires_at FROM assignments WHERE id = ?').get(assignmentOf(db, first.url)?.id) as { viewed_at: string; expires_at: string };
    expect(firstRow).toEqual({ viewed_at: START.toISOString(), expires_at: new Date(START.getTime() + 30 * 60_000).toISOString() });

    advance(20_000);
    const posted = await rater.submit(first.res.text, { choice: 'left' });
    expect(posted.status).toBe(303);
    const location = String(posted.headers.location);
    expect(location).toMatch(/\/c\/[^/?]+\?rt=/);
    const nextId = assignmentOf(db, location)?.id;
    const answeredAt = new Date(START.getTime() + 20_000);
    expect(db.prepare('SELECT state, viewed_at, expires_at FROM assignments WHERE id = ?').get(nextId)).toEqual({
      state: 'leased',
      viewed_at: answeredAt.toISOString(),
      expires_at: new Date(answeredAt.getTime() + 30 * 60_000).toISOString(),
    });

    advance(1_000);
    const before = totalWrites(db);
    const page = await rater.get(location);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/Comparison 2 of/);
    expect(totalWrites(db)).toBe(before);
  });

  // On the request thread, and on the answer thread the server stores answers on (src/rating/answer-thread.ts).
  for (const [where, makeApp] of [
    ['on the request thread', async () => testApp()],
    ['on the answer thread', () => threadedApp()],
  ] as const) {
    it(`when the next lease cannot be made ${where}, the answer is kept all the same, once, and the rater is sent to GET /next, which says what went wrong`, async () => {
      const { app, db } = await makeApp();
      const seeded = seedBatch(db, { samples: 4 });
      const rater = raterClient(app);
      const first = await rater.startRating(seeded.publicId);
      // A fault in the next lease's write, as a full disk or a damaged index would raise it.
      db.exec("CREATE TRIGGER refuse_leases BEFORE INSERT ON assignments BEGIN SELECT RAISE(ABORT, 'lease refused'); END");
      const posted = await rater.submit(first.res.text, { choice: 'right' });
      expect(posted.status).toBe(303);
      expect(String(posted.headers.location)).toMatch(/\/next\?rt=/);
      expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
      expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'answered'")).toBe(1);
      expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(0);
      expect(count(db, 'SELECT accepted FROM pairs WHERE id = :id', { id: assignmentOf(db, first.url)?.pair_id })).toBe(1);

      const next = await rater.get(String(posted.headers.location));
      expect(next.status).toBe(500);
      expect(next.text).not.toMatch(/lease refused|RAISE|at .*\.ts:/);

      // Once the fault is gone, the rater goes on from where they were; the first answer is not asked again.
      db.exec('DROP TRIGGER refuse_leases');
      const again = await rater.follow(String(posted.headers.location));
      expect(again.res.status).toBe(200);
      expect(again.res.text).toMatch(/Comparison 2 of/);
      expect(assignmentOf(db, again.url)?.pair_id).not.toBe(assignmentOf(db, first.url)?.pair_id);
      expect(count(db, 'SELECT count(*) FROM judgments')).toBe(1);
    });
  }
});

describe('remembered comparison views', () => {
  it('a comparison page shows what it showed for 30 s, then an edited character as edited', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 2, settings: { leaseMinutes: 30, context: 'scenario+profiles' } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const cast = db
      .prepare('SELECT c.character_1_id AS id, ch.first_name AS name FROM assignments a JOIN pairs p ON p.id = a.pair_id JOIN casts c ON c.id = p.cast_id JOIN characters ch ON ch.id = c.character_1_id WHERE a.id = ?')
      .get(assignmentOf(db, page.url)?.id) as { id: number; name: string };
    expect(page.res.text).toContain(cast.name);
    db.prepare("UPDATE characters SET first_name = 'Quillon' WHERE id = ?").run(cast.id);
    advance(10_000);
    const soon = await rater.get(page.url);
    expect(soon.text).toContain(cast.name);
    expect(soon.text).not.toContain('Quillon');
    advance(21_000);
    const later = await rater.get(page.url);
    expect(later.text).toContain('Quillon');
  });

  it('a view made again after 30 s shows an edited scenario, with its dialogues as rendered for five minutes', async () => {
    const { app, db, advance } = testApp();
    const seeded = seedBatch(db, { samples: 2, settings: { leaseMinutes: 30 } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const shown = db
      .prepare('SELECT p.scenario_id AS scenario, t.dialogue_id AS dialogue, t.text FROM assignments a JOIN pairs p ON p.id = a.pair_id JOIN turns t ON t.dialogue_id = p.dialogue_a_id AND t.idx = 0 WHERE a.id = ?')
      .get(assignmentOf(db, page.url)?.id) as { scenario: string; dialogue: number; text: string };
    expect(page.res.text).toContain(shown.text);
    // Neither edit is one the platform makes to a dialogue in a batch (its turns are final); here they show what is kept how long.
    db.prepare("UPDATE scenarios SET title = 'Quarry talk' WHERE id = ?").run(shown.scenario);
    db.prepare("UPDATE turns SET text = 'Zephyrine was here.' WHERE dialogue_id = ? AND idx = 0").run(shown.dialogue);
    advance(31_000);
    const rebuilt = await rater.get(page.url);
    expect(rebuilt.text).toContain('Quarry talk');
    expect(rebuilt.text).toContain(shown.text);
    expect(rebuilt.text).not.toContain('Zephyrine');
    advance(270_000);
    const later = await rater.get(page.url);
    expect(later.text).toContain('Zephyrine was here.');
  });
});
