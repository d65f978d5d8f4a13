import { describe, expect, it } from 'vitest';
import { signIn } from '../auth/session-helpers.js';
import { cli } from '../helpers/run-cli.js';
import { makeJudgment } from '../helpers/factories.js';
import { closeStoppedBatches } from '../../src/rating/sequential-stopping.js';
import { assignmentOf, chooseCondition, count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

// A batch with a stopping rule, rated through the real rater pages by simulated raters who all prefer SCRIPT (the
// comparison's condition a): no more pairs are handed out than the first look needs (issue 51), the comparison stops
// at that look, nobody new is let in, everyone who consented gets every comparison they were promised and their
// completion code, and the batch closes itself.

type Client = ReturnType<typeof raterClient>;

/** Answers the comparison on the page for SCRIPT (dialogue a), wherever it is shown; returns the next page. */
const preferScript = (db: Parameters<typeof assignmentOf>[0], rater: Client, page: { url: string; res: { text: string } }) => chooseCondition(db, rater, page, 'a');

describe('sequential stopping over HTTP', () => {
  it('POST /r/:batch/c/:assignment, when a strongly preferred condition crosses the first bound, stops the comparison early, serves nothing after the stop and closes the batch', async () => {
    const { app, db, dbPath } = testApp();
    const seeded = seedBatch(db, {
      samples: 40,
      settings: {
        judgmentsPerPair: 1,
        perRaterCap: 5,
        stopping: { lookEvery: 10, alpha: 0.05, spending: 'pocock' },
        provider: { kind: 'link', completionCodes: { completed: 'DONE-SEQ', partial: 'PARTIAL-SEQ' } },
      },
    });
    // Two raters consent before anyone answers: five pairs are promised (reserved) to each, the ten the first look
    // needs. A third finds the study full: nothing more is handed out until that look is taken.
    const raters = [raterClient(app), raterClient(app)];
    const pages = [];
    for (const rater of raters) pages.push(await rater.startRating(seeded.publicId));
    expect(count(db, 'SELECT count(*) FROM pair_reservations') + count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(10);
    expect((await raterClient(app).follow(`/r/${seeded.publicId}`)).res.text).toContain('This study is full');

    // They answer in turn; the tenth completed pair is the first look (10 of 40 pairs, all won by SCRIPT).
    for (let round = 0; round < 5; round++) {
      for (const [i, rater] of raters.entries()) pages[i] = await preferScript(db, rater, pages[i] as { url: string; res: { text: string } });
      if (round === 3) {
        // Before the look: the comparison is open, and still nobody new is let in.
        expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b').pluck().get({ b: seeded.batchId })).toBeNull();
        const waiting = await raterClient(app).follow(`/r/${seeded.publicId}`);
        expect(waiting.res.text).toContain('This study is full');
      }
    }
    expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b').pluck().get({ b: seeded.batchId })).toBe('efficacy');

    // Every rater did the five comparisons promised and got the completion code, not the partial one.
    for (const page of pages) {
      expect(page.url).toMatch(/\/done\?rt=/);
      expect(page.res.text).toContain('DONE-SEQ');
      expect(page.res.text).not.toContain('PARTIAL-SEQ');
    }
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed' AND finish_reason = 'cap' AND regular_judged = 5")).toBe(2);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(10);

    // The look that stopped it, stored with its bound and statistic.
    const look = db.prepare('SELECT look, planned_looks, max_pairs, completed_pairs, ties, wins_a, wins_b, information_fraction, critical_z, nominal_alpha, p_value, decision FROM sequential_looks').all();
    expect(look).toHaveLength(1);
    expect(look[0]).toMatchObject({ look: 1, planned_looks: 4, max_pairs: 40, completed_pairs: 10, ties: 0, wins_a: 10, wins_b: 0, information_fraction: 0.25, decision: 'efficacy' });
    const stored = look[0] as { critical_z: number; nominal_alpha: number; p_value: number };
    // 10 of 10: exact two-sided p = 2 / 2^10; Pocock-type spending at t = 0.25 of alpha 0.05 spends 0.05 ln(1 + (e - 1)/4).
    expect(stored.p_value).toBeCloseTo(2 / 1024, 12);
    expect(stored.nominal_alpha).toBeCloseTo(0.05 * Math.log(1 + (Math.E - 1) / 4), 10);
    expect(stored.p_value).toBeLessThan(stored.nominal_alpha);

    // 30 pairs were never served; the batch closed itself with the answer that stopped it (nothing was left held),
    // with an audit entry.
    expect(count(db, 'SELECT count(*) FROM pairs WHERE batch_id = :b AND stopped_at IS NOT NULL AND accepted = 0', { b: seeded.batchId })).toBe(30);
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: seeded.batchId })).toBe('closed');
    const audit = db.prepare("SELECT action, actor, details FROM audit_log WHERE action IN ('comparison.stop', 'batch.close') ORDER BY id").all() as { action: string; actor: string; details: string }[];
    expect(audit.map((a) => [a.action, a.actor])).toEqual([
      ['comparison.stop', 'system'],
      ['batch.close', 'system'],
    ]);
    expect(JSON.parse(audit[1]?.details ?? '{}')).toMatchObject({ reason: 'sequential-stopping' });

    // The researcher is told: `batches show` says the batch closed itself and where the comparison stopped.
    const shown = await cli(['batches', 'show', String(seeded.batchId)], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('closed (closed itself: every comparison stopped under its sequential rule)');
    expect(shown.stdout).toContain('stopped at look 1 of 4 (a bound was crossed: the conditions differ); 10 of 40 pairs completed, 0 tied');
    expect(shown.stdout).toContain('naive win rate of pair majorities for SCRIPT:blindcheck-model-7b: 100.0%');
    expect(shown.stdout).toContain('sequential p-value (stage-wise ordering): 0.0020');
    // Two raters are too few for a variance clustered by rater: the look said so, and what it used instead.
    expect(shown.stdout).toContain('statistic: pair majorities (exact test) (only 2 raters over 10 pairs, too few for a clustered variance (10 needed): the test of pair majorities, conditional on these raters)');
    // No more was handed out than the look needed, so nothing came after the stop.
    expect(shown.stdout).not.toContain('after the stop:');

    // The analysis report leads with the sequential result (where it stopped and why, its p-value and repeated
    // interval), before the summary over all judgments, which says it ignores the design; methods cite the design.
    const analysis = await cli(['analyze', '--batch', String(seeded.batchId), '--format', 'md', '--bootstrap', '0'], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(analysis.code).toBe(0);
    const md = analysis.stdout;
    expect(md).toContain('## Sequential result');
    expect(md).toContain('- SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b: stopped at look 1 of 4');
    expect(md.indexOf('## Sequential result')).toBeLessThan(md.indexOf('## Summary over all judgments (ignores the sequential design, counts judgments after a stop)'));
    expect(md).toContain('sequential p-value (stage-wise ordering): 0.0020');
    expect(md).toContain('repeated confidence interval');
    expect(md).not.toContain('after the stop:');
    expect(md).toContain('Lan-DeMets alpha-spending function (Lan & DeMets 1983; Pocock 1977)');
    const json = JSON.parse((await cli(['analyze', '--batch', String(seeded.batchId), '--format', 'json', '--bootstrap', '0'], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' })).stdout) as { sequential: { comparisons: Record<string, unknown>[] } };
    expect(json.sequential.comparisons[0]).toMatchObject({ state: 'stopped', stop_reason: 'efficacy', look: 1, statistic: 'pair-majorities', raters: 2, pairs_used: 10 });
    expect(json.sequential.comparisons[0]?.sequential_p).toBeCloseTo(2 / 1024, 10);

    // And on the console's batch page.
    const researcher = await signIn(app, db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${seeded.batchId}`).expect(200)).text;
    expect(page).toContain('This batch closed itself: every comparison stopped under its sequential rule.');
    expect(page).toContain('stopped at look 1 of 4');
    // Its capacity box says the batch's 40 pairs, not only the 10 the rule did not stop (issue 49).
    expect(count(db, 'SELECT count(*) FROM pairs WHERE batch_id = :b AND stopped_at IS NOT NULL', { b: seeded.batchId })).toBe(30);
    expect(page).toContain('The batch has 40 pairs: its sequential rule stopped 30 of them (they take no new rater and need no more judgments), so what follows counts the other 10.');

    // A late answer (a page held open from before the stop, stored after it) is reported apart, never in the looks.
    const stoppedPair = db.prepare('SELECT id FROM pairs WHERE batch_id = :b AND stopped_at IS NOT NULL ORDER BY id LIMIT 1').pluck().get({ b: seeded.batchId }) as number;
    const firstRater = db.prepare('SELECT id FROM raters WHERE batch_id = :b ORDER BY id LIMIT 1').pluck().get({ b: seeded.batchId }) as number;
    makeJudgment(db, { pairId: stoppedPair, raterId: firstRater, winner: 'a' });
    const late = await cli(['analyze', '--batch', String(seeded.batchId), '--format', 'json', '--bootstrap', '0'], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    const lateJson = JSON.parse(late.stdout) as { sequential: { comparisons: Record<string, unknown>[] } };
    expect(lateJson.sequential.comparisons[0]).toMatchObject({ pairs_used: 10, after_stop: { judgments: 1, pairs: 1, a: 1, b: 0, ties: 0 } });
    const lateShown = await cli(['batches', 'show', String(seeded.batchId)], { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' });
    expect(lateShown.stdout).toContain('after the stop: 1 judgment on 1 pair promised before it (1 for SCRIPT:blindcheck-model-7b, 0 for the other, 0 ties), not used by the sequential inference');
    expect(db.prepare('SELECT count(*) FROM sequential_looks').pluck().get()).toBe(1);
  });

  it('batches show and the console batch page, for an open sequential batch before its first look, give the plan instead of "0 of 0 looks"', async () => {
    const { app, db, dbPath } = testApp();
    const seeded = seedBatch(db, { samples: 40, settings: { judgmentsPerPair: 1, perRaterCap: 5, stopping: { lookEvery: 10, alpha: 0.05, spending: 'pocock' } } });
    const rater = raterClient(app);
    await preferScript(db, rater, await rater.startRating(seeded.publicId));
    const plan = 'SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b: running, no look yet; 4 looks planned at 10, 20, 30 and 40 completed pairs (pocock spending, alpha 0.05 for this comparison); at most 40 pairs, 1 completed so far';
    const env = { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' };
    const shown = await cli(['batches', 'show', String(seeded.batchId)], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`  ${plan}`);
    expect(shown.stdout).not.toContain('0 of 0');
    const json = JSON.parse((await cli(['batches', 'show', String(seeded.batchId), '--json'], env)).stdout);
    expect(json.plans).toEqual([{ comparison: 'SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b', looksAt: [10, 20, 30, 40], maxPairs: 40, completedPairs: 1, alpha: 0.05 }]);
    const researcher = await signIn(app, db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${seeded.batchId}`).expect(200)).text;
    expect(page).toContain(plan);
    expect(page).not.toContain('0 of 0');
  });

  it('batches show says when the first look of a batch designed for ten raters or more will wait for its tenth rater, and about where', async () => {
    const { db, dbPath } = testApp();
    // 40 pairs × 1 judgment at 2 a rater: 20 raters in all, but the first look's 10 pairs would have only 5.
    const seeded = seedBatch(db, { samples: 40, settings: { judgmentsPerPair: 1, perRaterCap: 2, stopping: { lookEvery: 10, alpha: 0.05, spending: 'pocock' } } });
    const env = { DATABASE_PATH: dbPath, PUBLIC_URL: 'https://rate.example.org' };
    const shown = await cli(['batches', 'show', String(seeded.batchId)], env);
    expect(shown.stdout).toContain('4 looks planned at 10, 20, 30 and 40 completed pairs (pocock spending, alpha 0.05 for this comparison); the first waits for its tenth rater, at about 20 completed pairs instead of 10; at most 40 pairs, 0 completed so far');
    const json = JSON.parse((await cli(['batches', 'show', String(seeded.batchId), '--json'], env)).stdout);
    expect(json.plans).toEqual([{ comparison: 'SCRIPT:blindcheck-model-7b vs AGENTS:blindcheck-model-7b', looksAt: [10, 20, 30, 40], maxPairs: 40, completedPairs: 0, alpha: 0.05, firstLookWaitsUntil: 20 }]);
  });

  /**
   * With nothing handed out beyond the first look, a comparison can still stop with a pair held, through a late
   * answer: a rater whose lease lapsed answers it after its place went to someone else. The first rater leaves their
   * fifth comparison on screen past its lease; a new rater is given that place; the first then answers it late, which
   * completes the tenth pair and stops the comparison while the new rater holds it. The new rater walks away.
   */
  async function stopWithOneWalkingAway() {
    const built = testApp();
    const { db } = built;
    const seeded = seedBatch(db, {
      samples: 40,
      settings: {
        judgmentsPerPair: 1,
        perRaterCap: 5,
        leaseMinutes: 20,
        stopping: { lookEvery: 10, alpha: 0.05, spending: 'pocock' },
        provider: { kind: 'link', completionCodes: { completed: 'DONE-SEQ', partial: 'PARTIAL-SEQ' } },
      },
    });
    const late = raterClient(built.app);
    const steady = raterClient(built.app);
    let latePage = await late.startRating(seeded.publicId);
    let steadyPage = await steady.startRating(seeded.publicId);
    for (let i = 0; i < 5; i++) steadyPage = await preferScript(db, steady, steadyPage);
    for (let i = 0; i < 4; i++) latePage = await preferScript(db, late, latePage);
    built.advance(21 * 60_000);
    const walker = raterClient(built.app);
    const walkerPage = await walker.startRating(seeded.publicId);
    expect(assignmentOf(db, walkerPage.url)?.pair_id).toBe(assignmentOf(db, latePage.url)?.pair_id);
    latePage = await preferScript(db, late, latePage);
    expect(latePage.res.text).toContain('DONE-SEQ');
    expect(count(db, 'SELECT count(*) FROM judgments WHERE late = 1')).toBe(1);
    return { ...built, seeded, walker: { client: walker as Client, page: walkerPage } };
  }

  it('GET /r/:batch, when every comparison stopped and the last promised comparison lapsed unanswered, closes the batch and the walker still gets a code', async () => {
    const { app, db, seeded, walker, advance } = await stopWithOneWalkingAway();
    const state = () => db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: seeded.batchId });
    expect(db.prepare('SELECT stop_reason FROM comparisons WHERE batch_id = :b').pluck().get({ b: seeded.batchId })).toBe('efficacy');
    // The walker's lease holds the batch open while it lasts.
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(1);
    expect(state()).toBe('open');
    await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(state()).toBe('open');

    // Past the lease, the next request to the batch notices the lapse and the batch closes itself.
    advance(21 * 60_000);
    const visitor = await raterClient(app).follow(`/r/${seeded.publicId}`);
    expect(visitor.res.status).toBe(200);
    expect(state()).toBe('closed');
    expect(count(db, "SELECT count(*) FROM assignments WHERE state = 'leased'")).toBe(0);
    const audit = db.prepare("SELECT actor, details FROM audit_log WHERE action = 'batch.close'").all() as { actor: string; details: string }[];
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toBe('system');
    expect(JSON.parse(audit[0]?.details ?? '{}')).toMatchObject({ from: 'open', reason: 'sequential-stopping' });

    // Nobody is left with unpaid work: the two who finished had their completed code; the walker, coming back, is
    // sent to the done page with the partial code (the comparison they were given was answered by another).
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed' AND finish_reason = 'cap' AND regular_judged = 5")).toBe(2);
    const back = await walker.client.follow(walker.page.url);
    expect(back.url).toMatch(/\/done\?rt=/);
    expect(back.res.text).toContain('PARTIAL-SEQ');
    expect(count(db, "SELECT count(*) FROM raters WHERE status = 'completed' AND finish_reason = 'closed' AND regular_judged = 0")).toBe(1);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(10);
  });

  it('closeStoppedBatches, when nobody visits a stopped batch after its last promised comparison lapsed, closes it once', async () => {
    const { db, seeded, advance } = await stopWithOneWalkingAway();
    const at = (ms: number) => new Date(advance(ms).getTime());
    expect(closeStoppedBatches(db, at(0))).toEqual([]);
    expect(closeStoppedBatches(db, at(21 * 60_000))).toEqual([seeded.batchId]);
    expect(db.prepare('SELECT state FROM batches WHERE id = :b').pluck().get({ b: seeded.batchId })).toBe('closed');
    expect(closeStoppedBatches(db, at(60_000))).toEqual([]);
    expect(count(db, "SELECT count(*) FROM audit_log WHERE action = 'batch.close'")).toBe(1);
  });
});
