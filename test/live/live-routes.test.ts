import { afterEach, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { serve } from '../helpers/browser.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { enter, type Participant } from './live-http.js';

// The role-play pages over real HTTP (the app listening on 127.0.0.1, its event streams read as a browser reads them).

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MARKERS = { secret1: 'SECRET-FIRST in debt', secret2: 'SECRET-SECOND failed', goal1: 'GOAL-FIRST borrow', goal2: 'GOAL-SECOND keep' };

async function liveApp(settings: Record<string, unknown> = {}) {
  const t = buildTestApp();
  makeScenario(t.db, { relationship: 'stranger', goals: [MARKERS.goal1, MARKERS.goal2], secrets: [MARKERS.secret1, MARKERS.secret2] });
  const now = new Date();
  const created = createBatch(
    t.db,
    launchReady({ name: 'Live test', task: 'roleplay', run: 'live-run', consent: 'We study conversations.', partner: { waitSeconds: 30, awaySeconds: 5, sameAddress: true }, turns: { max: 4, min: 2, turnSeconds: 60 }, ...settings }),
    { actor: 'test', now },
  );
  transitionBatch(t.db, created.batchId, 'open', 'test', now);
  const server = await serve(t.app);
  cleanups.push(() => server.close(), () => (t.app.locals.liveHub as LiveHub).stop());
  const publicId = t.db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string;
  return { ...t, base: server.url, publicId, batchId: created.batchId };
}

const characterOf = (html: string) => Number(/data-character="(\d)"/.exec(html)?.[1]);

async function matchedPair(env: Awaited<ReturnType<typeof liveApp>>) {
  const a = await enter(env.base, env.publicId);
  const b = await enter(env.base, env.publicId);
  const streams = [a.events(), b.events()];
  cleanups.push(() => streams.forEach((s) => s.close()));
  await Promise.all(streams.map((s) => s.next((d) => d.type === 'go')));
  const pages = await Promise.all([a.page(), b.page()]);
  const [first, second] = characterOf(pages[0] as string) === 1 ? [a, b] : [b, a];
  const [firstStream, secondStream] = characterOf(pages[0] as string) === 1 ? streams : [streams[1], streams[0]];
  return { first, second, firstStream: firstStream as ReturnType<Participant['events']>, secondStream: secondStream as ReturnType<Participant['events']>, pages };
}

describe('role-play pages', () => {
  it('the link shows a consent page saying the partner may be a person or an AI; agreeing and reading the instructions leads to the lobby', async () => {
    const env = await liveApp();
    const entry = await fetch(`${env.base}/r/${env.publicId}`);
    const html = await entry.text();
    expect(entry.status).toBe(200);
    expect(html).toContain('Your partner may be another participant or an AI.');
    expect(html).toContain('including up to 1 minute of waiting for your partner. Waiting counts as time in the study.');
    expect(env.db.prepare('SELECT count(*) FROM raters').pluck().get()).toBe(0);
    const player = await enter(env.base, env.publicId);
    expect(player.playUrl).toMatch(/\/live\?rt=/);
    const lobby = await player.page();
    expect(lobby).toContain('We are finding you a partner. This takes at most 1 minute.');
    expect(env.db.prepare('SELECT r.status, p.state FROM raters r JOIN live_players p ON p.rater_id = r.id').get()).toEqual({ status: 'rating', state: 'lobby' });
  });

  it('the consent page, when estimatedMinutes is below what a session can take, promises the wait plus one\'s own turns', async () => {
    // 30 s of waiting + 2 own turns of 60 s = 150 s: 3 minutes, above the 2 stated.
    const env = await liveApp({ estimatedMinutes: 2 });
    const html = await (await fetch(`${env.base}/r/${env.publicId}`)).text();
    expect(html).toContain('About 3 minutes, including up to 1 minute of waiting for your partner.');
    expect(env.db.prepare('SELECT count(*) FROM raters').pluck().get()).toBe(0);
  });

  it('two players with their pages open are matched; each page shows its own goal and secret and never the partner\'s, nor the mode', async () => {
    const env = await liveApp();
    const { pages } = await matchedPair(env);
    for (const html of pages) {
      const mine = characterOf(html) === 1 ? [MARKERS.secret1, MARKERS.goal1] : [MARKERS.secret2, MARKERS.goal2];
      const theirs = characterOf(html) === 1 ? [MARKERS.secret2, MARKERS.goal2] : [MARKERS.secret1, MARKERS.goal1];
      for (const text of mine) expect(html).toContain(text);
      for (const text of theirs) expect(html).not.toContain(text);
      expect(html).not.toMatch(/HUMANS|HUMAN_AGENT|live-run|collected/);
      expect(html).toContain('Your partner plays someone you do not know');
    }
  });

  it('POST live/turn stores the turn once per key, delivers it to both streams with its index, and answers refusals in JSON', async () => {
    const env = await liveApp();
    const { first, second, secondStream } = await matchedPair(env);
    expect(await second.turn({ key: 'k-second-0001', text: 'Hello?' })).toEqual({ status: 409, body: { error: 'It is not your turn yet: please wait for your partner.' } });
    expect(await first.turn({ key: 'k-first-00001', text: 'Visit www.example.com' })).toMatchObject({ status: 422 });
    expect(await first.turn({ key: 'bad', text: 'Hello' })).toMatchObject({ status: 400 });
    expect(await first.turn({ key: 'k-first-00002', text: '   ' })).toEqual({ status: 400, body: { error: 'write something before you send it' } });
    expect(await first.turn({ key: 'k-first-00003', text: 'Good afternoon.', signals: '{"keys":15,"typing_ms":2100,"pastes":1}' })).toEqual({ status: 200, body: { ok: true, idx: 0, duplicate: false } });
    expect(await first.turn({ key: 'k-first-00003', text: 'Good afternoon.' })).toEqual({ status: 200, body: { ok: true, idx: 0, duplicate: true } });
    const delivered = await secondStream.next((d) => d.type === 'turn');
    expect(delivered).toMatchObject({ id: '0', data: { type: 'turn', idx: 0, speaker: 1, kind: 'speak', text: 'Good afternoon.' } });
    const stored = env.db.prepare('SELECT t.text, l.keystrokes, l.typing_ms, l.paste_attempts FROM turns t JOIN live_turns l USING (dialogue_id, idx)').all();
    expect(stored).toEqual([{ text: 'Good afternoon.', keystrokes: 15, typing_ms: 2100, paste_attempts: 1 }]);
  });

  it('a stream opened again with Last-Event-ID gets only the turns after it', async () => {
    const env = await liveApp();
    const { first, second } = await matchedPair(env);
    await first.turn({ key: 'k-first-00001', text: 'One.' });
    await second.turn({ key: 'k-second-0001', text: 'Two.' });
    const again = first.events('0');
    cleanups.push(() => again.close());
    await again.next((d) => d.type === 'state');
    expect(again.events.filter((e) => (e.data as { type: string }).type === 'turn').map((e) => e.id)).toEqual(['1']);
    expect(again.headers()['content-type']).toBe('text/event-stream; charset=utf-8');
  });

  it('a player whose page never opened its stream leaves the lobby after awaySeconds; their pages end on the done page, which says so', async () => {
    const env = await liveApp();
    const gone = await enter(env.base, env.publicId);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const play = await fetch(gone.playUrl, { redirect: 'manual' });
    expect(play.status).toBe(303);
    const done = await fetch(`${env.base}${play.headers.get('location') ?? ''}`, { redirect: 'manual' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Your page was closed for too long during the study, so your part of it has ended.');
    expect(env.db.prepare('SELECT p.state, p.outcome, r.status FROM live_players p JOIN raters r ON r.id = p.rater_id').get()).toEqual({ state: 'done', outcome: 'away', status: 'rating' });
  });

  it('the rating pages of a role-play batch answer 404; the questions and the done page give the completion code', async () => {
    const env = await liveApp({ provider: { kind: 'link', completionCodes: { completed: 'LIVE-DONE' } } });
    const { first, second } = await matchedPair(env);
    expect((await fetch(`${env.base}/r/${env.publicId}/next?rt=${encodeURIComponent(first.rt)}`)).status).toBe(404);
    for (let i = 0; i < 4; i++) await (i % 2 === 0 ? first : second).turn({ key: `k-turn-${i}-0000`, text: `Turn ${i}.` });
    const questions = await first.page();
    expect(questions).toContain('Was your partner a person or an AI?');
    const refused = await first.post('answers', { guess: 'maybe', goal: '5' });
    expect(refused.status).toBe(400);
    const answered = await first.post('answers', { guess: 'person', goal: '8' });
    expect(answered.status).toBe(303);
    const done = await (await fetch(`${env.base}${answered.headers.get('location') ?? ''}`)).text();
    expect(done).toContain('Your completion code: <strong>LIVE-DONE</strong>');
    expect(env.db.prepare('SELECT partner_guess, goal_score FROM live_players WHERE partner_guess IS NOT NULL').get()).toEqual({ partner_guess: 'person', goal_score: 8 });
  });
});
