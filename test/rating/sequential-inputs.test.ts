import { describe, expect, it } from 'vitest';
import { updateBatchSettings } from '../../src/batches/batch.commands.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { cli } from '../helpers/run-cli.js';
import { assignmentOf, chooseCondition, count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

// Frozen inputs of a sequential batch (issue 51): once a look is taken, K and the quality thresholds cannot change (a
// look stands as taken, and the next must count pairs and raters as it did), and a rater excluded after a look leaves
// only the later looks, recorded as such.

type Page = { url: string; res: { text: string } };


/**
 * Two raters answer two comparisons each (alternating a, b): the first look (at 4 of 18 pairs) is taken, no bound
 * crossed. Two each, as no more pairs are handed out before a look than it needs (issue 51 item 8). A batch designed
 * for 9 raters, fewer than a rater-clustered look needs, so no rater's share is held back (src/rating/look-room.ts).
 */
async function afterFirstLook() {
  const built = testApp();
  const seeded = seedBatch(built.db, { samples: 18, settings: { judgmentsPerPair: 1, perRaterCap: 2, stopping: { lookEvery: 4, alpha: 0.05, spending: 'obrien-fleming' }, provider: { kind: 'link' } } });
  const raters = [raterClient(built.app), raterClient(built.app)];
  const pages: Page[] = [];
  for (const rater of raters) pages.push(await rater.startRating(seeded.publicId));
  let answered = 0;
  for (let round = 0; round < 2; round++) {
    for (const [i, rater] of raters.entries()) pages[i] = await chooseCondition(built.db, rater, pages[i] as Page, answered++ % 2 === 0 ? 'a' : 'b');
  }
  expect(count(built.db, 'SELECT count(*) FROM sequential_looks')).toBe(1);
  return { ...built, seeded, raters, pages };
}

const settingsOf = (db: Parameters<typeof getBatchRow>[0], id: number) => db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id) as string;

describe('a sequential batch after its first look', () => {
  it('POST /console/batches/:id/edit, after a look, refuses a changed K with a plain message and keeps the rule, the thresholds and the look', async () => {
    const { app, db, seeded } = await afterFirstLook();
    const admin = await signIn(app, db, 'admin');
    const edit = await admin.agent.get(`/console/batches/${seeded.batchId}/edit`).expect(200);
    expect(edit.text).toContain('frozen: a sequential look was taken');
    const before = settingsOf(db, seeded.batchId);
    const current = JSON.parse(before) as { name: string; runs: string[]; question: string };
    const base = { _csrf: admin.csrf, name: current.name, runs: current.runs, comparisons: 'SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b', scenarios: 'all', question: current.question, providerKind: 'link' };
    const refused = await admin.agent.post(`/console/batches/${seeded.batchId}/edit`).type('form').send({ ...base, judgmentsPerPair: '2' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('has taken 1 sequential look, which counted pairs complete at 1 judgments and raters by its quality thresholds; these settings are frozen: judgmentsPerPair. Clone the batch to change them.');
    expect(settingsOf(db, seeded.batchId)).toBe(before);

    // A setting the look does not read still changes; what the form does not show (the rule, the thresholds) stays.
    await admin.agent.post(`/console/batches/${seeded.batchId}/edit`).type('form').send({ ...base, judgmentsPerPair: '1', perRaterCap: '6' }).expect(303);
    const after = readBatchSettings(getBatchRow(db, seeded.batchId) as NonNullable<ReturnType<typeof getBatchRow>>);
    expect(after.perRaterCap).toBe(6);
    expect(after.stopping).toEqual(JSON.parse(before).stopping);
    expect(after.quality).toEqual(JSON.parse(before).quality);
    expect(count(db, 'SELECT count(*) FROM sequential_looks')).toBe(1);
  });

  it('updateBatchSettings, after a look, refuses changed quality thresholds and leaves the settings as they were', async () => {
    const { db, seeded } = await afterFirstLook();
    const before = settingsOf(db, seeded.batchId);
    const settings = JSON.parse(before) as { quality: Record<string, number> };
    expect(() => updateBatchSettings(db, seeded.batchId, { ...settings, quality: { ...settings.quality, raterShare: 0.2 } }, { actor: 'a@example.org', now: new Date() })).toThrow(
      'these settings are frozen: quality',
    );
    expect(settingsOf(db, seeded.batchId)).toBe(before);
  });

  it('POST /console/batches/:id/raters/:raterId/exclude, after a look, keeps the look as taken, records the exclusion, and the next look leaves the rater out', async () => {
    const { app, db, dbPath, seeded } = await afterFirstLook();
    const look = db.prepare('SELECT * FROM sequential_looks').get();
    const first = db.prepare('SELECT id FROM raters ORDER BY id LIMIT 1').pluck().get() as number;
    const admin = await signIn(app, db, 'admin');
    await admin.agent.post(`/console/batches/${seeded.batchId}/raters/${first}/exclude`).type('form').send({ _csrf: admin.csrf, reason: 'careless' }).expect(303);
    expect(db.prepare('SELECT * FROM sequential_looks').get()).toEqual(look);
    expect(db.prepare('SELECT action, reason, after_look, judgments_in_looks FROM sequential_exclusions').all()).toEqual([{ action: 'exclude', reason: 'careless', after_look: 1, judgments_in_looks: 2 }]);

    // Others go on; the next look (at 8 completed pairs) counts only valid judgments: the excluded rater's pairs are
    // served again and their judgments are not in it.
    const other = raterClient(app);
    let page = await other.startRating(seeded.publicId);
    for (let i = 0; i < 2; i++) page = await chooseCondition(db, other, page, 'a');
    while (count(db, 'SELECT count(*) FROM sequential_looks') < 2) {
      const newcomer = raterClient(app);
      let next: Page = await newcomer.startRating(seeded.publicId);
      while (assignmentOf(db, next.url) && count(db, 'SELECT count(*) FROM sequential_looks') < 2) next = await chooseCondition(db, newcomer, next, 'b');
    }
    const second = db.prepare('SELECT completed_pairs, wins_a, wins_b FROM sequential_looks WHERE look = 2').get() as { completed_pairs: number; wins_a: number; wins_b: number };
    const valid = (winner: string) =>
      count(db, `SELECT count(*) FROM judgments j JOIN raters r ON r.id = j.rater_id JOIN pairs p ON p.id = j.pair_id WHERE r.excluded = 0 AND p.kind = 'regular' AND p.accepted >= 1 AND j.winner = '${winner}' AND j.batch_id = :b`, { b: seeded.batchId });
    expect([second.wins_a, second.wins_b]).toEqual([valid('a'), valid('b')]);
    const withExcluded = count(db, "SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE p.kind = 'regular' AND j.batch_id = :b", { b: seeded.batchId });
    expect(second.completed_pairs).toBeLessThan(withExcluded);
    // The pairs look 1 counted keep that look as the one they entered.
    expect(count(db, 'SELECT count(*) FROM pairs WHERE sequential_look = 1')).toBe(4);

    // batches show says what happened, in those words.
    const shown = await cli(['batches', 'show', String(seeded.batchId)], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(shown.stdout).toMatch(/rater [0-9a-f]{16} excluded after look 1 of SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b \(careless\): looks 1-1 stand as taken with their 2 judgments; later looks leave them out/);
  });
});
