import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { signIn } from '../auth/session-helpers.js';
import { serve } from '../helpers/browser.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { DRAFT_CONFLICT, HAND_IN_CONFLICT } from '../../src/live/write-session.js';
import { eightTurns, enterWriter } from './write-http.js';

// The writing pages of issue 53 over real HTTP: what the writer is shown, saves, the hand-in, and what is stored.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MARKERS = { secret1: 'SECRET-FIRST in debt', secret2: 'SECRET-SECOND failed', goal1: 'GOAL-FIRST borrow', goal2: 'GOAL-SECOND keep' };

async function writeApp(options: { secrets?: [string, string] } = {}) {
  const t = buildTestApp();
  makeScenario(t.db, { relationship: 'stranger', goals: [MARKERS.goal1, MARKERS.goal2], secrets: options.secrets ?? [MARKERS.secret1, MARKERS.secret2] });
  const now = new Date();
  const created = createBatch(
    t.db,
    launchReady({ name: 'Writing test', task: 'write', run: 'collect-xq7', consent: 'We study conversations.', instructions: 'Write it.', provider: { kind: 'link', completionCodes: { completed: 'WRITE-DONE' } }, writing: { minTurns: 8, maxTurns: 10 } }),
    { actor: 'test', now },
  );
  transitionBatch(t.db, created.batchId, 'open', 'test', now);
  const server = await serve(t.app);
  cleanups.push(() => server.close(), () => (t.app.locals.liveHub as LiveHub).stop());
  const publicId = t.db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string;
  return { ...t, base: server.url, publicId, batchId: created.batchId, runId: created.run?.id ?? 0 };
}

describe('writing pages', () => {
  it('GET /r/:batch/write, after consent and instructions, shows the scenario with both characters\' goals and secrets and draws the writer a cast', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    expect(writer.consent).toContain('you write the conversation they have, turn by turn, for both of them');
    expect(writer.writeUrl).toMatch(/\/write\?rt=/);
    const html = await writer.page();
    for (const marker of Object.values(MARKERS)) expect(html).toContain(marker);
    expect(html).toContain('Ana Ito (begins)');
    expect(html).not.toMatch(/HUMAN_SCRIPT|Writing test|collect-xq7/);
    expect(env.db.prepare("SELECT state, version, draft FROM write_drafts").get()).toEqual({ state: 'writing', version: 0, draft: '[]' });
    expect(env.db.prepare('SELECT status FROM raters').pluck().get()).toBe('rating');
  });

  it('POST /r/:batch/write/draft stores the draft for a reload, and a save older than the stored one changes nothing', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    const turns = eightTurns().slice(0, 3);
    expect(await writer.save(2, turns)).toEqual({ status: 200, body: { ok: true, version: 2, stale: false } });
    expect(await writer.save(1, [{ speaker: 1, action: 'speak', text: 'an older save' }])).toEqual({ status: 200, body: { ok: true, version: 2, stale: true } });
    const html = await writer.page();
    expect(html).toContain('Line 3 of the talk.');
    expect(html).not.toContain('an older save');
    const stored = JSON.parse(env.db.prepare('SELECT draft FROM write_drafts').pluck().get() as string) as { text: string; keys: number; pastes: number }[];
    expect(stored.map((t) => [t.text, t.keys])).toEqual([
      ['Line 1 of the talk.', 20],
      ['Line 2 of the talk.', 21],
      ['Line 3 of the talk.', 22],
    ]);
    expect((await writer.save(3, eightTurns().concat(eightTurns()))).status).toBe(400);
  });

  it('a save from a second tab that did not see the stored draft is refused (409), saved once its writer keeps it, and a hand-in from it hands in nothing', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    const stored = () => env.db.prepare('SELECT version, tab, draft FROM write_drafts').get() as { version: number; tab: string | null; draft: string };
    const texts = () => (JSON.parse(stored().draft) as { text: string }[]).map((t) => t.text);
    const [a, b] = ['tab-aaaaaaaa', 'tab-bbbbbbbb'];
    // Both pages were loaded at version 0; the second saves first.
    expect(await writer.save(1, eightTurns('B').slice(0, 2), {}, { tab: b, base: 0 })).toEqual({ status: 200, body: { ok: true, version: 1, stale: false } });
    const refused = await writer.save(1, eightTurns('A').slice(0, 3), {}, { tab: a, base: 0 });
    expect(refused).toEqual({ status: 409, body: { error: DRAFT_CONFLICT, conflict: true, version: 1 } });
    expect(stored()).toMatchObject({ version: 1, tab: b });
    expect(texts()).toEqual(['B 1 of the talk.', 'B 2 of the talk.']);
    // Its writer keeps the first page's turns: saved as based on the stored version, its counter past it.
    expect((await writer.save(2, eightTurns('A').slice(0, 3), {}, { tab: a, base: 1 })).body).toEqual({ ok: true, version: 2, stale: false });
    expect(await writer.save(4, eightTurns('A').slice(0, 4), {}, { tab: a, base: 2 })).toMatchObject({ status: 200, body: { version: 4, stale: false } });
    // Its own older save arriving late is only stale, whatever base it carries.
    expect(await writer.save(3, eightTurns('A').slice(0, 1), {}, { tab: a, base: 1 })).toEqual({ status: 200, body: { ok: true, version: 4, stale: true } });
    expect(stored()).toMatchObject({ version: 4, tab: a });
    expect(texts()).toHaveLength(4);
    // The second page, behind now, can neither save nor hand in over it.
    expect((await writer.save(2, eightTurns('B'), {}, { tab: b, base: 1 })).status).toBe(409);
    const handIn = await writer.submit(3, eightTurns('B'), { tab: b, base: 1 });
    expect(handIn.status).toBe(409);
    const page = await handIn.text();
    expect(page).toContain(HAND_IN_CONFLICT.replace(/'/g, '&#39;'));
    expect(page).toContain('B 8 of the talk.');
    expect(page).toContain('data-version="4"');
    expect(env.db.prepare("SELECT count(*) FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get()).toBe(0);
    expect(texts()).toEqual(['A 1 of the talk.', 'A 2 of the talk.', 'A 3 of the talk.', 'A 4 of the talk.']);
    // The page that came back, based on version 4, hands its turns in.
    const again = await writer.submit(5, eightTurns('B'), { tab: 'tab-cccccccc', base: 4 });
    expect(again.status).toBe(303);
    const dialogue = env.db.prepare("SELECT id FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get() as number;
    expect(env.db.prepare('SELECT text FROM turns WHERE dialogue_id = ? ORDER BY idx').pluck().all(dialogue)).toEqual(eightTurns('B').map((t) => t.text));
  });

  it('POST /r/:batch/write/draft without the form token saves nothing and refuses', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    expect((await writer.save(5, eightTurns(), { _csrf: 'forged' })).status).toBe(403);
    expect(env.db.prepare('SELECT version FROM write_drafts').pluck().get()).toBe(0);
  });

  it('POST /r/:batch/write/submit, below the minimum of turns, shows the page again with what is missing and stores no dialogue', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    const res = await writer.submit(1, eightTurns().slice(0, 5));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('The conversation needs at least 8 turns in which someone says or does something; it has 5.');
    expect(env.db.prepare("SELECT count(*) FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get()).toBe(0);
    expect(env.db.prepare('SELECT status FROM raters').pluck().get()).toBe('rating');
  });

  it('POST /r/:batch/write/submit, with eight turns, stores a collected HUMAN_SCRIPT:human dialogue with each turn\'s provenance and shows the code', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    const res = await writer.submit(1, eightTurns());
    expect(res.status).toBe(303);
    const done = await (await fetch(`${env.base}${res.headers.get('location') ?? ''}`)).text();
    expect(done).toContain('WRITE-DONE');
    const dialogue = env.db.prepare("SELECT id, run_id, mode, model, origin, state, end_reason, sample_index, meta FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").get() as Record<string, unknown>;
    expect(dialogue).toMatchObject({ run_id: env.runId, mode: 'HUMAN_SCRIPT', model: 'human', origin: 'collected', state: 'complete', end_reason: 'written', sample_index: 0 });
    const meta = JSON.parse(dialogue.meta as string) as { writer: { judge: string }; signals: Record<string, number> };
    expect(meta.writer.judge).toMatch(/.+/);
    expect(meta.signals).toEqual({ keystrokes: 8 * 20 + 28, typing_ms: 8 * 4000 + 28, paste_attempts: 1 });
    const raterId = env.db.prepare('SELECT id FROM raters').pluck().get();
    expect(env.db.prepare('SELECT t.speaker, t.text, lt.rater_id, lt.keystrokes, lt.paste_attempts FROM turns t JOIN live_turns lt USING (dialogue_id, idx) WHERE t.dialogue_id = ? ORDER BY t.idx').all(dialogue.id)).toEqual(
      eightTurns().map((t) => ({ speaker: t.speaker, text: t.text, rater_id: raterId, keystrokes: t.keys, paste_attempts: t.pastes })),
    );
    expect(env.db.prepare('SELECT task, outcome, review FROM collected_dialogues').get()).toEqual({ task: 'write', outcome: 'complete', review: 'pending' });
    expect(env.db.prepare('SELECT status FROM raters').pluck().get()).toBe('completed');
    // A second hand-in (a double click) stores nothing more.
    expect((await writer.submit(2, eightTurns())).status).toBe(303);
    expect(env.db.prepare("SELECT count(*) FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get()).toBe(1);
  });

  it('POST /r/:batch/write/submit, once the batch is closed, still takes the conversation of a writer already writing, and the link takes nobody new', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    transitionBatch(env.db, env.batchId, 'close', 'test', new Date());
    expect((await writer.submit(1, eightTurns())).status).toBe(303);
    expect(env.db.prepare('SELECT task, outcome FROM collected_dialogues').get()).toEqual({ task: 'write', outcome: 'complete' });
    const entry = await fetch(`${env.base}/r/${env.publicId}`);
    expect(await entry.text()).not.toContain('I agree, continue');
    expect(env.db.prepare('SELECT count(*) FROM raters').pluck().get()).toBe(1);
  });

  it('GET /r/:batch/write escapes scenario text and the writer\'s own saved turns', async () => {
    const env = await writeApp({ secrets: ['<script>alert("s1")</script>', '<b>bold secret</b>'] });
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    await writer.save(1, [{ speaker: 1, action: 'speak', text: '<img src=x onerror="alert(1)">' }]);
    const html = await writer.page();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>bold secret</b>');
    expect(html).toContain('&lt;script&gt;alert(&#34;s1&#34;)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=&#34;alert(1)&#34;&gt;');
  });

  it('the console review of a writing batch lists its dialogues to researchers, and only an admin may accept one', async () => {
    const env = await writeApp();
    const writer = await enterWriter(env.base, env.publicId);
    await writer.page();
    await writer.submit(1, eightTurns());
    const dialogueId = env.db.prepare("SELECT id FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get() as number;
    const researcher = await signIn(env.app, env.db, 'researcher');
    const list = await researcher.agent.get(`/console/batches/${env.batchId}/collected`);
    expect(list.status).toBe(200);
    expect(list.text).toContain('HUMAN_SCRIPT');
    const page = await researcher.agent.get(`/console/batches/${env.batchId}`);
    expect(page.text).toContain('Writing batch');
    expect(await researcher.agent.post(`/console/batches/${env.batchId}/collected/${dialogueId}`).type('form').send({ _csrf: researcher.csrf, decision: 'accept' })).toHaveProperty('status', 403);
    expect(env.db.prepare('SELECT review FROM collected_dialogues').pluck().get()).toBe('pending');
    const admin = await signIn(env.app, env.db, 'admin');
    expect((await admin.agent.post(`/console/batches/${env.batchId}/collected/${dialogueId}`).type('form').send({ _csrf: admin.csrf, decision: 'accept' })).status).toBe(303);
    expect(env.db.prepare('SELECT review, reviewed_by FROM collected_dialogues').get()).toMatchObject({ review: 'accepted' });
    expect((await request(env.app).get(`/console/batches/${env.batchId}/collected`)).status).toBe(303);
  });
});

describe('a writer who withdraws, and the payment list', () => {
  it('POST /r/:batch/write/withdraw ends the draft unused; the participants page approves the writer who handed in and sends the one who withdrew to review', async () => {
    const env = await writeApp();
    const done = await enterWriter(env.base, env.publicId);
    await done.page();
    await done.submit(1, eightTurns());
    const gone = await enterWriter(env.base, env.publicId);
    await gone.page();
    await gone.save(1, eightTurns().slice(0, 2));
    const res = await fetch(`${env.base}/r/${env.publicId}/write/withdraw`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ rt: gone.rt, _csrf: gone.csrf }).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(await (await fetch(`${env.base}${res.headers.get('location') ?? ''}`)).text()).toContain('What you wrote will not be used.');
    expect(env.db.prepare('SELECT w.state, r.status FROM write_drafts w JOIN raters r ON r.id = w.rater_id ORDER BY r.id').all()).toEqual([
      { state: 'submitted', status: 'completed' },
      { state: 'withdrawn', status: 'withdrew' },
    ]);
    expect((await gone.submit(2, eightTurns())).status).toBe(303);
    expect(env.db.prepare("SELECT count(*) FROM dialogues WHERE mode = 'HUMAN_SCRIPT'").pluck().get()).toBe(1);
    const admin = await signIn(env.app, env.db, 'admin');
    const page = await admin.agent.get(`/console/batches/${env.batchId}/participants`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/approve[\s\S]*completed/);
    expect(page.text).toContain('withdrew (asked to return the study)');
  });
});
