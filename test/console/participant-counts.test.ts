import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { createApp } from '../../src/app.js';
import { makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';

// The participants page keeps its counts while nothing they depend on changed (migration 029): after every kind of
// change, the counts it shows must be those a server that never counted before shows for the same stored analysis.

describe('participants page counts', () => {
  it('GET /console/batches/:id/participants, after exclusion, inclusion, a new and a finished rater, deleted data, a removed pair, new times and a new analysis, shows what a fresh server counts', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['b', 'b', 'a'], ['a', 'a', 'b'], ['b', 'a', 'a']] });
    const done = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-DONE-1', status: 'completed' });
    for (const pairId of batch.pairIds.slice(0, 2)) makeJudgment(t.db, { pairId, raterId: done, winner: 'a', activeMs: 30_000 });
    const working = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-WIP-2', status: 'rating' });
    const admin = await signIn(t.app, t.db, 'admin');
    const fresh = async () => awaitBatchAnalysis(t.db, batch.batchId, { now: () => new Date(), fresh: true });
    const countsOn = async (agent: typeof admin.agent) => {
      const page = (await agent.get(`/console/batches/${batch.batchId}/participants`).expect(200)).text;
      return Object.fromEntries([...page.matchAll(/data-testid="count-(\w+)">(\d+)</g)].map((m) => [m[1], Number(m[2])]));
    };
    const check = async (what: string) => {
      const shown = await countsOn(admin.agent);
      // A second app on the same database, its counts never kept: what counting anew gives now.
      const other = createApp({ db: t.db, config: t.config, logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET });
      expect(shown, what).toEqual(await countsOn((await signIn(other, t.db, 'admin')).agent));
      return shown;
    };
    await fresh();
    const first = await check('first view');
    expect(await check('again, nothing changed')).toEqual(first);

    await admin.agent.post(`/console/batches/${batch.batchId}/raters/${done}/exclude`).type('form').send({ _csrf: admin.csrf, reason: 'copied' }).expect(303);
    await check('a rater excluded');
    await admin.agent.post(`/console/batches/${batch.batchId}/raters/${done}/include`).type('form').send({ _csrf: admin.csrf, reason: 'mistake' }).expect(303);
    await check('included again');
    t.db.prepare("UPDATE raters SET status = 'completed', finish_reason = 'cap', finished_at = ? WHERE id = ?").run(new Date().toISOString(), working);
    await check('a working rater finished (no figures yet)');
    const added = makeRater(t.db, { batchId: batch.batchId, provider: 'prolific', participantId: 'PID-NEW-3', status: 'completed' });
    makeJudgment(t.db, { pairId: batch.pairIds[0] as number, raterId: added, winner: 'b', activeMs: 1_000 });
    await check('a new completed rater');
    await fresh();
    await check('a new analysis with their figures');
    // Much longer times elsewhere move the batch's median: the new rater's 1 s becomes "too fast" beside it.
    for (const raterId of batch.raterIds) t.db.prepare('UPDATE judgments SET active_ms = 120000 WHERE rater_id = ?').run(raterId);
    await check('the median time moved');
    await admin.agent.post(`/console/batches/${batch.batchId}/pairs/${batch.pairIds[1]}/remove`).type('form').send({ _csrf: admin.csrf, reason: 'broken' }).expect(303);
    await check('a pair removed');
    await admin.agent.post(`/console/batches/${batch.batchId}/raters/${added}/delete`).type('form').send({ _csrf: admin.csrf, reason: 'asked', confirm: 'delete' }).expect(303);
    await check('a participant deleted');
  });
});
