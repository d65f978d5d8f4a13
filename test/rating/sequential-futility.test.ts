import { describe, expect, it } from 'vitest';
import { signIn } from '../auth/session-helpers.js';
import { cli } from '../helpers/run-cli.js';
import { chooseCondition, count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

// A batch with futility stopping, rated through the real rater pages by simulated raters who cannot tell the two
// conditions apart (their choices alternate): the comparison stops for futility at its first look (no more pairs were
// handed out than that look needed: issue 51), everyone who consented gets the comparisons they were promised and their
// code, and the batch closes itself.

type Page = { url: string; res: { text: string } };


describe('sequential futility stopping over HTTP', () => {
  it('POST /r/:batch/c/:assignment, when two indistinguishable conditions fall inside the futility bound, stops the comparison for futility, honours every promise and closes the batch', async () => {
    const { app, db, dbPath } = testApp();
    const seeded = seedBatch(db, {
      samples: 40,
      settings: {
        judgmentsPerPair: 1,
        perRaterCap: 5,
        stopping: { lookEvery: 10, alpha: 0.05, spending: 'pocock', futility: { beta: 0.2, effect: 0.75, binding: false } },
        provider: { kind: 'link', completionCodes: { completed: 'DONE-FUT', partial: 'PARTIAL-FUT' } },
      },
    });
    // Two raters are promised the ten pairs the first look needs; nobody else is let in before it.
    const raters = [raterClient(app), raterClient(app)];
    const pages: Page[] = [];
    for (const rater of raters) pages.push(await rater.startRating(seeded.publicId));
    expect((await raterClient(app).follow(`/r/${seeded.publicId}`)).res.text).toContain('This study is full');

    // Choices alternate a, b, a, b, ...: the first ten completed pairs (the first look, 10 of 40) split 5 to 5.
    let answered = 0;
    for (let round = 0; round < 5; round++) {
      for (const [i, rater] of raters.entries()) {
        pages[i] = await chooseCondition(db, rater, pages[i] as Page, answered % 2 === 0 ? 'a' : 'b');
        answered++;
      }
    }
    expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b').pluck().get({ b: seeded.batchId })).toBe('futility');
    expect((await raterClient(app).follow(`/r/${seeded.publicId}`)).res.text).toContain('This study is closed');

    // Nobody with promised work is left with it undone: five comparisons each and the completed code.
    for (const page of pages) {
      expect(page.url).toMatch(/\/done\?rt=/);
      expect(page.res.text).toContain('DONE-FUT');
      expect(page.res.text).not.toContain('PARTIAL-FUT');
    }
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed' AND regular_judged = 5")).toBe(2);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(10);

    // The look, with both bounds: Pocock-type beta spending at the drift of a 0.75 win rate over 40 pairs puts a
    // futility bound at the first look (|z| below about 0.31), and a 5-5 split has z = 0.
    const looks = db.prepare('SELECT look, completed_pairs, wins_a, wins_b, critical_z, futility_z, p_value, z, decision FROM sequential_looks').all() as {
      look: number; completed_pairs: number; wins_a: number; wins_b: number; critical_z: number; futility_z: number; p_value: number; z: number; decision: string;
    }[];
    expect(looks).toHaveLength(1);
    expect(looks[0]).toMatchObject({ look: 1, completed_pairs: 10, wins_a: 5, wins_b: 5, p_value: 1, z: 0, decision: 'futility' });
    expect(looks[0]?.futility_z).toBeGreaterThan(0.2);
    expect(looks[0]?.futility_z).toBeLessThan(looks[0]?.critical_z as number);

    // 30 pairs never served; the batch closed itself, with the stop's reason in the audit log.
    expect(count(db, 'SELECT count(*) FROM pairs WHERE batch_id = :b AND stopped_at IS NOT NULL AND accepted = 0', { b: seeded.batchId })).toBe(30);
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: seeded.batchId })).toBe('closed');
    const stop = db.prepare("SELECT details FROM audit_log WHERE action = 'comparison.stop'").pluck().get() as string;
    expect(JSON.parse(stop)).toMatchObject({ reason: 'futility', look: 1 });

    // `batches show`, the analysis report and the console show where it stopped and both bounds.
    const env = { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' };
    const shown = await cli(['batches', 'show', String(seeded.batchId)], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('stopped at look 1 of 4 (futility: a difference of the planned size is unlikely to be shown)');
    expect(shown.stdout).toMatch(/bounds at look 1: efficacy \|z\| >= 2\.\d{3}, futility \|z\| < 0\.\d{3}; observed \|z\| = 0\.000/);
    const analysis = await cli(['analyze', '--batch', String(seeded.batchId), '--format', 'md', '--bootstrap', '0'], env);
    expect(analysis.code).toBe(0);
    expect(analysis.stdout).toContain('futility |z| <');
    expect(analysis.stdout).toContain('The futility bounds were non-binding');
    const researcher = await signIn(app, db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${seeded.batchId}`).expect(200)).text;
    expect(page).toContain('stopped at look 1 of 4 (futility');
    expect(page).toContain('futility |z| &lt; 0.');
  });
});
