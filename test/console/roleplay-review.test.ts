import { describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { endCollected, insertCollected } from '../../src/batches/collected.queries.js';
import { insertDialogue, replaceTurns } from '../../src/generation/dialogue.queries.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { launchReady, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { csrfFrom, signIn } from '../auth/session-helpers.js';

const NOW = new Date('2026-04-03T09:00:00.000Z');

function seed() {
  const t = buildTestApp({ clock: () => NOW });
  const scenario = makeScenario(t.db);
  const created = createBatch(t.db, launchReady({ name: 'Role-play console', task: 'roleplay', run: 'console-live' }), { actor: 'test', now: NOW });
  transitionBatch(t.db, created.batchId, 'open', 'test', NOW);
  const dialogue = (sampleIndex: number, state: 'complete' | 'failed', outcome: 'complete' | 'incomplete' | 'reported') => {
    const id = insertDialogue(t.db, { runId: created.run?.id ?? 0, scenarioId: scenario.scenarioId, castId: scenario.castId, sampleIndex, mode: 'HUMANS', model: 'human', origin: 'collected', state }, NOW);
    replaceTurns(t.db, id, makeTurns(state === 'complete' ? 8 : 2));
    insertCollected(t.db, { dialogueId: id, batchId: created.batchId, task: 'roleplay' }, NOW);
    endCollected(t.db, id, { outcome, reason: `${outcome} reason` }, NOW);
    return id;
  };
  return { t, batchId: created.batchId, dialogue, complete: dialogue(0, 'complete', 'complete'), short: dialogue(1, 'failed', 'incomplete'), reported: dialogue(2, 'complete', 'reported') };
}

const listed = (page: string) => [...page.matchAll(/<tr data-dialogue="(\d+)">/g)].map((m) => Number(m[1]));

describe('the console for role-play batches', () => {
  it('GET /console/batches/:id of a role-play batch shows its participants, its collected dialogues and the link to review them', async () => {
    const { t, batchId } = seed();
    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${batchId}`).expect(200)).text;
    expect(page).toContain('collects into run <strong>console-live</strong>');
    expect(page).toContain('1 complete, 1 incomplete, 1 reported, 0 under way; <strong>3 to review</strong>');
    expect(page).toContain(`/console/batches/${batchId}/collected?review=pending`);
    const list = (await researcher.agent.get('/console/batches').expect(200)).text;
    expect(list).toContain('Role-play console');
    await researcher.agent.get(`/console/batches/${batchId}/raters`).expect(200);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.get(`/console/batches/${batchId}/participants`).expect(200);
    (t.app.locals.liveHub as LiveHub).stop();
  });

  it('POST /console/batches/:id/collected/:dialogueId accepts or rejects (admin only), refuses to accept a dialogue too short to rate, and lists the review', async () => {
    const { t, batchId, complete, short, reported } = seed();
    const researcher = await signIn(t.app, t.db, 'researcher');
    const list = (await researcher.agent.get(`/console/batches/${batchId}/collected`).expect(200)).text;
    expect(list).toContain(`Dialogue ${complete}`);
    expect(list).not.toContain('value="accept"');
    await researcher.agent.post(`/console/batches/${batchId}/collected/${complete}`).type('form').send({ _csrf: csrfFrom(list), decision: 'accept' }).expect(403);
    const admin = await signIn(t.app, t.db, 'admin');
    const adminList = (await admin.agent.get(`/console/batches/${batchId}/collected`).expect(200)).text;
    const csrf = csrfFrom(adminList);
    await admin.agent.post(`/console/batches/${batchId}/collected/${complete}`).type('form').send({ _csrf: csrf, decision: 'accept', note: 'good' }).expect(303);
    const refused = await admin.agent.post(`/console/batches/${batchId}/collected/${short}`).type('form').send({ _csrf: csrf, decision: 'accept' }).expect(409);
    expect(refused.text).toContain('it cannot be rated, so it cannot be accepted');
    await admin.agent.post(`/console/batches/${batchId}/collected/${reported}`).type('form').send({ _csrf: csrf, decision: 'reject' }).expect(303);
    await admin.agent.post(`/console/batches/${batchId}/collected/999999`).type('form').send({ _csrf: csrf, decision: 'reject' }).expect(404);
    expect(t.db.prepare('SELECT dialogue_id, review, reviewed_by, review_note FROM collected_dialogues ORDER BY dialogue_id').all()).toEqual([
      { dialogue_id: complete, review: 'accepted', reviewed_by: admin.email, review_note: 'good' },
      { dialogue_id: short, review: 'pending', reviewed_by: null, review_note: null },
      { dialogue_id: reported, review: 'rejected', reviewed_by: admin.email, review_note: null },
    ]);
    const pending = (await admin.agent.get(`/console/batches/${batchId}/collected?review=pending`).expect(200)).text;
    expect(pending).toContain(`Dialogue ${short}`);
    expect(pending).not.toContain(`Dialogue ${complete}`);
    (t.app.locals.liveHub as LiveHub).stop();
  });

  it('GET /console/batches/:id/collected, for a batch of 63 collected dialogues, lists 50 a page, newest first, paging within the filter; a review sends the admin back to the page and filter it came from', async () => {
    const { t, batchId, dialogue, complete, short, reported } = seed();
    const more = Array.from({ length: 60 }, (_, i) => dialogue(3 + i, 'complete', 'complete'));
    const newestFirst = [...more].reverse().concat([reported, short, complete]);
    const admin = await signIn(t.app, t.db, 'admin');
    const first = (await admin.agent.get(`/console/batches/${batchId}/collected`).expect(200)).text;
    expect(listed(first)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('href="?page=2&amp;per_page=50"');
    const second = (await admin.agent.get(`/console/batches/${batchId}/collected?page=2`).expect(200)).text;
    expect(listed(second)).toEqual(newestFirst.slice(50));
    expect(second).not.toContain('Older →');

    // The pending ones, 10 a page: the pager keeps the filter, and a review from page 2 comes back to it.
    const pending = (await admin.agent.get(`/console/batches/${batchId}/collected?review=pending&per_page=10&page=2`).expect(200)).text;
    expect(listed(pending)).toEqual(newestFirst.slice(10, 20));
    expect(pending).toContain('href="?review=pending&amp;page=3&amp;per_page=10"');
    const target = newestFirst[12] as number;
    expect(pending).toContain(`action="/console/batches/${batchId}/collected/${target}?review=pending&amp;page=2&amp;per_page=10"`);
    const reviewed = await admin.agent.post(`/console/batches/${batchId}/collected/${target}?review=pending&page=2&per_page=10`).type('form').send({ _csrf: csrfFrom(pending), decision: 'accept' }).expect(303);
    expect(reviewed.headers.location).toBe(`/console/batches/${batchId}/collected?review=pending&page=2&per_page=10`);
    expect(t.db.prepare('SELECT review FROM collected_dialogues WHERE dialogue_id = ?').pluck().get(target)).toBe('accepted');
    const bad = await admin.agent.get(`/console/batches/${batchId}/collected?page=0`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('page');
    (t.app.locals.liveHub as LiveHub).stop();
  });
});
