import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { createTestDb } from '../helpers/test-db.js';
import { hubFor, makePlayer, manualClock, openRoleplayBatch, recordingSink, scripted } from './live-fixtures.js';

// The relay without HTTP: a real database, the real agent through the fake model server, and a clock the test moves.

const hubs: LiveHub[] = [];
const fakes: FakeLlm[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) hub.stop();
  for (const fake of fakes.splice(0)) await fake.close();
});

function setup(options: Parameters<typeof openRoleplayBatch>[1] = {}, random = scripted(0.3)) {
  const { db } = createTestDb();
  const time = manualClock();
  const batch = openRoleplayBatch(db, options);
  const hub = hubFor(db, time.clock, { random });
  hubs.push(hub);
  return { db, time, hub, ...batch };
}

const player = (db: Db, raterId: number) => db.prepare('SELECT state, character, outcome, dialogue_id, waited_ms, partner_guess, goal_score FROM live_players WHERE rater_id = ?').get(raterId) as Record<string, unknown>;
const say = (text: string, key: string) => ({ key, action: 'speak' as const, text, signals: { keystrokes: text.length, typingMs: 1000, pasteAttempts: 0 } });

describe('the relay: matching', () => {
  it('join, when a second player is present, matches the two into a running HUMANS dialogue of the collection run and sends both pages there', () => {
    const { db, time, hub, runId, batchId } = setup();
    const one = makePlayer(db, batchId);
    const two = makePlayer(db, batchId);
    const pageOne = recordingSink();
    const pageTwo = recordingSink();
    hub.join(one);
    hub.attach(one, pageOne, -1);
    time.advance(5_000);
    hub.join(two);
    expect(player(db, two).state).toBe('lobby');
    hub.attach(two, pageTwo, -1);
    expect(pageOne.of('go')).toEqual([{ type: 'go', to: 'play' }]);
    expect(pageTwo.of('go')).toEqual([{ type: 'go', to: 'play' }]);
    const p1 = player(db, one);
    const p2 = player(db, two);
    expect(p1).toMatchObject({ state: 'playing', waited_ms: 5_000 });
    expect(p2).toMatchObject({ state: 'playing', waited_ms: 0, dialogue_id: p1.dialogue_id });
    expect(new Set([p1.character, p2.character])).toEqual(new Set([1, 2]));
    expect(db.prepare('SELECT run_id, mode, model, origin, state, sample_index FROM dialogues WHERE id = ?').get(p1.dialogue_id)).toEqual({ run_id: runId, mode: 'HUMANS', model: 'human', origin: 'collected', state: 'running', sample_index: 0 });
    expect(db.prepare('SELECT outcome, review, task FROM collected_dialogues WHERE dialogue_id = ?').get(p1.dialogue_id)).toEqual({ outcome: 'collecting', review: 'pending', task: 'roleplay' });
  });

  it('matching, for a player without an open page or two players from one address, matches nobody; with sameAddress it matches them', () => {
    const shared = setup();
    const one = makePlayer(shared.db, shared.batchId, { address: 'same' });
    const two = makePlayer(shared.db, shared.batchId, { address: 'same' });
    const three = makePlayer(shared.db, shared.batchId);
    shared.hub.join(one);
    shared.hub.attach(one, recordingSink(), -1);
    shared.hub.join(two);
    shared.hub.attach(two, recordingSink(), -1);
    shared.hub.join(three);
    expect([player(shared.db, one).state, player(shared.db, two).state, player(shared.db, three).state]).toEqual(['lobby', 'lobby', 'lobby']);
    shared.hub.attach(three, recordingSink(), -1);
    expect([player(shared.db, one).state, player(shared.db, two).state, player(shared.db, three).state]).toEqual(['playing', 'lobby', 'playing']);

    const lab = setup({ partner: { sameAddress: true } });
    const x = makePlayer(lab.db, lab.batchId, { address: 'lab' });
    const y = makePlayer(lab.db, lab.batchId, { address: 'lab' });
    for (const id of [x, y]) {
      lab.hub.join(id);
      lab.hub.attach(id, recordingSink(), -1);
    }
    expect([player(lab.db, x).state, player(lab.db, y).state]).toEqual(['playing', 'playing']);
  });

  it('a player who enters the lobby long after the server started is not taken for away while their page opens its stream', () => {
    const { db, hub, time, batchId } = setup();
    time.advance(120_000);
    const late = makePlayer(db, batchId);
    hub.join(late);
    time.advance(2_000);
    hub.tick();
    expect(player(db, late)).toMatchObject({ state: 'lobby', outcome: null });
    time.advance(9_000);
    hub.tick();
    expect(player(db, late)).toMatchObject({ state: 'done', outcome: 'away' });
  });

  it('a second page of the same player takes over: the first is told and closed', () => {
    const { db, hub, batchId } = setup();
    const one = makePlayer(db, batchId);
    hub.join(one);
    const first = recordingSink();
    const second = recordingSink();
    hub.attach(one, first, -1);
    hub.attach(one, second, -1);
    expect(first.of('elsewhere')).toHaveLength(1);
    expect(first.closed).toBe(true);
    expect(second.closed).toBe(false);
  });
});

/** Two matched players; `first` is the one playing character 1. */
function matched(options: Parameters<typeof openRoleplayBatch>[1] = {}) {
  const s = setup(options);
  const a = makePlayer(s.db, s.batchId);
  const b = makePlayer(s.db, s.batchId);
  const pages = new Map([
    [a, recordingSink()],
    [b, recordingSink()],
  ]);
  for (const id of [a, b]) {
    s.hub.join(id);
    s.hub.attach(id, pages.get(id) as ReturnType<typeof recordingSink>, -1);
  }
  const [first, second] = player(s.db, a).character === 1 ? [a, b] : [b, a];
  return { ...s, first, second, page: (id: number) => pages.get(id) as ReturnType<typeof recordingSink>, dialogueId: player(s.db, a).dialogue_id as number };
}

describe('the relay: turns', () => {
  it('takeTurn stores the speaker\'s turn once per key, refuses the other player and contact details, and the partner\'s page gets it with its index', () => {
    const { db, hub, first, second, page, dialogueId } = matched();
    expect(hub.takeTurn(second, say('Hello there', 'key-second-0001'))).toEqual({ kind: 'refused', status: 409, message: 'It is not your turn yet: please wait for your partner.' });
    expect(hub.takeTurn(first, say('Mail me at ana@example.org', 'key-first-0000'))).toMatchObject({ kind: 'refused', status: 422 });
    expect(hub.takeTurn(first, say('Call me on +44 20 7946 0958', 'key-first-0000'))).toMatchObject({ kind: 'refused', status: 422 });
    expect(db.prepare('SELECT refused_messages FROM live_players WHERE rater_id = ?').pluck().get(first)).toBe(2);
    expect(hub.takeTurn(first, say('Hello, nice to meet you.', 'key-first-0001'))).toEqual({ kind: 'stored', idx: 0 });
    expect(hub.takeTurn(first, say('Hello, nice to meet you.', 'key-first-0001'))).toEqual({ kind: 'duplicate', idx: 0 });
    expect(db.prepare('SELECT idx, speaker, action, text FROM turns WHERE dialogue_id = ?').all(dialogueId)).toEqual([{ idx: 0, speaker: 1, action: 'speak', text: 'Hello, nice to meet you.' }]);
    expect(db.prepare('SELECT rater_id, client_key, keystrokes, timed_out FROM live_turns WHERE dialogue_id = ?').all(dialogueId)).toEqual([{ rater_id: first, client_key: 'key-first-0001', keystrokes: 24, timed_out: 0 }]);
    for (const id of [first, second]) {
      const turn = page(id).events.find((e) => e.event.type === 'turn');
      expect(turn).toMatchObject({ id: 0, event: { type: 'turn', idx: 0, speaker: 1, kind: 'speak', text: 'Hello, nice to meet you.' } });
      expect(page(id).of('state').at(-1)).toMatchObject({ next: 2, taken: 1, max: 6, secondsLeft: 30 });
    }
  });

  it('a dialogue that reaches turns.max ends complete; both players go to the questions, and their answers complete them', () => {
    const { db, hub, first, second, page, dialogueId } = matched();
    for (let i = 0; i < 6; i++) expect(hub.takeTurn(i % 2 === 0 ? first : second, say(`Line number ${i} of ours.`, `key-turn-${i}-000`)).kind).toBe('stored');
    expect(db.prepare('SELECT state, end_reason, words FROM dialogues WHERE id = ?').get(dialogueId)).toEqual({ state: 'complete', end_reason: 'max_turns', words: 30 });
    expect(db.prepare('SELECT outcome, reason FROM collected_dialogues WHERE dialogue_id = ?').get(dialogueId)).toEqual({ outcome: 'complete', reason: 'max_turns after 6 spoken turn(s)' });
    expect(player(db, first)).toMatchObject({ state: 'answering', outcome: 'finished' });
    expect(page(second).of('ended')).toEqual([{ type: 'ended', message: 'The conversation is over. Please answer two short questions to finish.' }]);
    expect(hub.takeTurn(first, say('one more', 'key-late-00001'))).toMatchObject({ kind: 'refused', status: 409 });
    expect(hub.answer(first, { guess: 'person', goalScore: 7 })).toBe(true);
    expect(hub.answer(first, { guess: 'ai', goalScore: 1 })).toBe(false);
    expect(player(db, first)).toMatchObject({ state: 'done', partner_guess: 'person', goal_score: 7 });
    expect(db.prepare('SELECT status FROM raters WHERE id = ?').pluck().get(first)).toBe('completed');
    expect(db.prepare('SELECT status FROM raters WHERE id = ?').pluck().get(second)).toBe('rating');
  });

  it('a turn not taken in time passes to the partner; two missed in a row end the dialogue: the one who missed timed out, the partner left paid', () => {
    const { db, hub, time, first, second, page, dialogueId } = matched();
    time.advance(60_000); // the first turn has twice the turn's time
    hub.tick();
    expect(page(second).of('missed')).toHaveLength(1);
    expect(page(second).of('state').at(-1)).toMatchObject({ next: 2 });
    expect(hub.takeTurn(second, say('Are you there?', 'key-second-001')).kind).toBe('stored');
    time.advance(29_000);
    hub.tick();
    expect(db.prepare('SELECT count(*) FROM turns WHERE dialogue_id = ?').pluck().get(dialogueId)).toBe(2);
    time.advance(1_000);
    hub.tick();
    expect(player(db, first)).toMatchObject({ state: 'answering', outcome: 'timed_out' });
    expect(player(db, second)).toMatchObject({ state: 'answering', outcome: 'partner_left' });
    expect(page(second).of('ended')[0]?.message).toMatch(/your partner is no longer in it\. This is not your fault, and you will be paid in full/);
    expect(db.prepare('SELECT state, end_reason FROM dialogues WHERE id = ?').get(dialogueId)).toEqual({ state: 'failed', end_reason: 'timed_out' });
    expect(db.prepare('SELECT outcome FROM collected_dialogues WHERE dialogue_id = ?').pluck().get(dialogueId)).toBe('incomplete');
    expect(db.prepare('SELECT action, timed_out FROM turns JOIN live_turns USING (dialogue_id, idx) WHERE dialogue_id = ? ORDER BY idx').all(dialogueId)).toEqual([
      { action: 'none', timed_out: 1 },
      { action: 'speak', timed_out: 0 },
      { action: 'none', timed_out: 1 },
    ]);
  });

  it('a player whose page is closed longer than awaySeconds has left: the partner is told at once and paid, the dialogue stored incomplete', () => {
    const { db, hub, time, first, second, page, dialogueId } = matched();
    hub.takeTurn(first, say('Hi!', 'key-first-00001'));
    hub.detach(first, page(first));
    time.advance(10_000);
    hub.tick();
    expect(player(db, first).state).toBe('playing');
    time.advance(1_000);
    hub.tick();
    expect(player(db, first)).toMatchObject({ state: 'done', outcome: 'away' });
    expect(player(db, second)).toMatchObject({ state: 'answering', outcome: 'partner_left' });
    expect(page(second).of('ended')).toHaveLength(1);
    expect(db.prepare('SELECT end_reason, failure_reason FROM dialogues WHERE id = ?').get(dialogueId)).toEqual({ end_reason: 'away', failure_reason: "only 1 spoken turn(s), fewer than the batch's minimum of 4 (away)" });
  });

  it('leave, before turns.min, ends the dialogue early for the leaver; a report ends it flagged with the reason kept', () => {
    const left = matched();
    left.hub.takeTurn(left.first, { key: 'key-leave-0001', action: 'leave', text: 'ignored', signals: null });
    expect(player(left.db, left.first).outcome).toBe('left_early');
    expect(player(left.db, left.second).outcome).toBe('partner_left');
    expect(left.db.prepare('SELECT action, text FROM turns WHERE dialogue_id = ?').get(left.dialogueId)).toEqual({ action: 'leave', text: '' });

    const reported = matched();
    reported.hub.takeTurn(reported.first, say('Something rude', 'key-rude-00001'));
    expect(reported.hub.report(reported.second, 'insulting')).toBe(true);
    expect(reported.hub.report(reported.second, 'again')).toBe(false);
    expect(player(reported.db, reported.second).outcome).toBe('reported');
    expect(player(reported.db, reported.first).outcome).toBe('was_reported');
    expect(reported.db.prepare('SELECT report_reason FROM live_players WHERE rater_id = ?').pluck().get(reported.second)).toBe('insulting');
    expect(reported.db.prepare('SELECT outcome FROM collected_dialogues WHERE dialogue_id = ?').pluck().get(reported.dialogueId)).toBe('reported');
  });
});

describe('the relay: waiting and the agent', () => {
  it('the wait, without a fallback agent, ends with the paid "no partner" outcome and the rater completed', () => {
    const { db, hub, time, batchId } = setup();
    const lone = makePlayer(db, batchId);
    const page = recordingSink();
    hub.join(lone);
    hub.attach(lone, page, -1);
    time.advance(59_000);
    hub.tick();
    expect(player(db, lone).state).toBe('lobby');
    time.advance(1_000);
    hub.tick();
    expect(player(db, lone)).toMatchObject({ state: 'done', outcome: 'no_partner', waited_ms: 60_000 });
    expect(db.prepare('SELECT status FROM raters WHERE id = ?').pluck().get(lone)).toBe('completed');
    expect(page.of('go')).toEqual([{ type: 'go', to: 'done' }]);
  });

  it('the wait, with a fallback agent, starts a HUMAN_AGENT dialogue; the agent\'s turn is asked of the model and shown only at its paced moment, shaped as a person\'s', async () => {
    const fake = await startFakeLlm();
    fakes.push(fake);
    const { db } = createTestDb();
    const time = manualClock();
    const { batchId } = openRoleplayBatch(db, { partner: { fallback: { model: 'fake-model', wordsPerMinute: 60 } } });
    // 0.3: the player plays character 2 (the agent starts); 0: the pace's random factor is 0.75.
    const hub = hubFor(db, time.clock, { random: scripted(0.7, 0), fake });
    hubs.push(hub);
    const lone = makePlayer(db, batchId);
    const page = recordingSink();
    hub.join(lone);
    hub.attach(lone, page, -1);
    time.advance(60_000);
    hub.tick();
    expect(page.of('go')).toEqual([{ type: 'go', to: 'play' }]);
    const me = player(db, lone);
    expect(me).toMatchObject({ state: 'playing', character: 2, waited_ms: 60_000 });
    const dialogue = db.prepare('SELECT mode, model, meta FROM dialogues WHERE id = ?').get(me.dialogue_id) as { mode: string; model: string; meta: string };
    expect(dialogue).toMatchObject({ mode: 'HUMAN_AGENT', model: 'fake-model' });
    expect(JSON.parse(dialogue.meta)).toMatchObject({ human_character: 2 });
    await hub.idle();
    expect(fake.requests).toHaveLength(1);
    const prompt = fake.requests[0]?.body.messages.map((m) => m.content).join('\n') ?? '';
    expect(prompt).toContain('SECRET-ONE');
    expect(prompt).not.toContain('SECRET-TWO');
    expect(prompt).not.toContain('GOAL-TWO');
    hub.tick();
    expect(page.of('turn')).toEqual([]);
    // "Ana Ito speaks at turn 0." is 6 words: (1.5 s + 6 / 60 min) × 0.75 = 5.625 s after the turn began.
    time.advance(5_000);
    hub.tick();
    expect(page.of('turn')).toEqual([]);
    time.advance(700);
    hub.tick();
    expect(page.of('turn')).toEqual([{ type: 'turn', idx: 0, speaker: 1, name: 'The other person', kind: 'speak', text: 'Ana Ito speaks at turn 0.', display: 'Ana Ito speaks at turn 0.' }]);
    const call = db.prepare('SELECT dialogue_id, turn_idx, speaker, status FROM llm_calls').get();
    expect(call).toEqual({ dialogue_id: me.dialogue_id, turn_idx: 0, speaker: 1, status: 'ok' });
    expect(db.prepare('SELECT rater_id, call_id IS NOT NULL AS has_call FROM live_turns JOIN turns USING (dialogue_id, idx) WHERE dialogue_id = ?').get(me.dialogue_id)).toEqual({ rater_id: null, has_call: 1 });
  });

  it('a hub started again on the same database gives the turn under way a whole turn\'s time and sends a returning page only what it missed', () => {
    const { db, hub, time, first, second, dialogueId } = matched();
    hub.takeTurn(first, say('First words.', 'key-first-00001'));
    hub.takeTurn(second, say('Second words.', 'key-second-0001'));
    hub.stop();
    time.advance(25_000);
    const again = hubFor(db, time.clock);
    hubs.push(again);
    expect(db.prepare('SELECT turn_deadline_at FROM live_dialogues WHERE dialogue_id = ?').pluck().get(dialogueId)).toBe(new Date(time.at() + 30_000).toISOString());
    const back = recordingSink();
    again.attach(first, back, 0);
    expect(back.events.map((e) => [e.event.type, e.id])).toEqual([
      ['turn', 1],
      ['state', undefined],
    ]);
    expect(again.takeTurn(first, say('First words.', 'key-first-00001'))).toEqual({ kind: 'duplicate', idx: 0 });
  });
});
