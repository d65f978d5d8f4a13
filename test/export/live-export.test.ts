import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatch } from '../../src/batches/create-batch.js';
import { reviewCollectedDialogue } from '../../src/batches/collection.js';
import type { Db } from '../../src/db/connection.js';
import { writeExport } from '../../src/export/export-batch.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { judgePseudonym } from '../../src/rating/judge-pseudonym.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { launchReady, makeDialogue, makeRun } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';
import { hubFor, makePlayer, manualClock, openRoleplayBatch, recordingSink, scripted } from '../live/live-fixtures.js';

// The dialogue exports of collected dialogues (issue 52): who played which character and every turn's clock, from
// a live dialogue played through the real relay on a clock the test moves.

const hubs: LiveHub[] = [];
const fakes: FakeLlm[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) hub.stop();
  for (const fake of fakes.splice(0)) await fake.close();
});

async function exportText(db: Db, input: { batch: string; format: 'dialogues' | 'sotopia'; withProviderIds?: boolean }): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  await writeExport(db, input, sink);
  return Buffer.concat(chunks).toString('utf8');
}

const lines = (text: string) => text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown> & { live: Record<string, unknown> | null });
const say = (text: string, key: string) => ({ key, action: 'speak' as const, text, signals: { keystrokes: text.length, typingMs: 900, pasteAttempts: 1 } });

/** Two people play six turns, taking 2, 3, ... 7 s each; they answer; the dialogue is accepted and paired with an AGENTS one. */
function playedAndPaired() {
  const { db } = createTestDb();
  const time = manualClock();
  const live = openRoleplayBatch(db);
  const hub = hubFor(db, time.clock, { random: scripted(0.3) });
  hubs.push(hub);
  const a = makePlayer(db, live.batchId);
  const b = makePlayer(db, live.batchId);
  for (const id of [a, b]) {
    hub.join(id);
    hub.attach(id, recordingSink(), -1);
  }
  const character = (id: number) => db.prepare('SELECT character FROM live_players WHERE rater_id = ?').pluck().get(id) as number;
  const [first, second] = character(a) === 1 ? [a, b] : [b, a];
  for (let i = 0; i < 6; i++) {
    time.advance((i + 2) * 1000);
    expect(hub.takeTurn(i % 2 === 0 ? first : second, say(`Line ${i} of ours.`, `key-turn-${i}-000`)).kind).toBe('stored');
  }
  hub.answer(first, { guess: 'person', goalScore: 7 });
  hub.answer(second, { guess: 'ai', goalScore: 4 });
  const dialogueId = db.prepare('SELECT dialogue_id FROM live_players WHERE rater_id = ?').pluck().get(first) as number;
  reviewCollectedDialogue(db, dialogueId, 'accepted', { actor: 'r@x', note: null, now: time.clock() });
  const agentsRun = makeRun(db, { name: 'agents', model: 'm' });
  makeDialogue(db, { runId: agentsRun, scenario: live.scenario, mode: 'AGENTS', model: 'm' });
  const rating = createBatch(db, launchReady({ name: 'rate', runs: ['live', 'agents'], comparisons: [['HUMANS:human', 'AGENTS:m']] }), { actor: 'test', now: time.clock() });
  const identity = (id: number) => db.prepare('SELECT public_id, participant_id FROM raters WHERE id = ?').get(id) as { public_id: string; participant_id: string };
  const salt = db.prepare('SELECT judge_salt FROM batches WHERE id = ?').pluck().get(live.batchId) as string;
  const pseudonym = (id: number) => judgePseudonym(salt, { provider: 'link', participantId: identity(id).participant_id, raterPublicId: identity(id).public_id });
  return { db, live, rating, dialogueId, first, second, identity, pseudonym };
}

describe('dialogue exports of collected dialogues', () => {
  it('export --format dialogues, of a rating batch pairing a HUMANS dialogue, names who played each character by pseudonym and every turn\'s clock, without platform ids', async () => {
    const s = playedAndPaired();
    const text = await exportText(s.db, { batch: String(s.rating.batchId), format: 'dialogues' });
    const records = lines(text);
    expect(records.map((r) => r.mode).sort()).toEqual(['AGENTS', 'HUMANS']);
    expect(records.find((r) => r.mode === 'AGENTS')?.live).toBeNull();
    const live = records.find((r) => r.mode === 'HUMANS')?.live;
    expect(live).toMatchObject({ collected_by_batch: s.live.batchId, outcome: 'complete', review: 'accepted' });
    expect(live?.players).toEqual([
      { character: 1, played_by: 'person', player: s.pseudonym(s.first), provider: 'link', outcome: 'finished', waited_s: 0, partner_guess: 'person', goal_score: 7 },
      { character: 2, played_by: 'person', player: s.pseudonym(s.second), provider: 'link', outcome: 'finished', waited_s: 0, partner_guess: 'ai', goal_score: 4 },
    ]);
    const turns = live?.turns as Record<string, unknown>[];
    expect(turns.map((t) => t.time_taken_ms)).toEqual([2000, 3000, 4000, 5000, 6000, 7000]);
    expect(turns[0]).toEqual({ idx: 0, played_by: 'person', turn_started_at: '2026-04-01T10:00:00.000Z', sent_at: '2026-04-01T10:00:02.000Z', time_taken_ms: 2000, timed_out: false, keystrokes: 15, typing_ms: 900, paste_attempts: 1 });
    // The turns' times are the stored ones, read back: the export computes nothing the database does not hold.
    const stored = s.db.prepare('SELECT turn_started_at, sent_at FROM live_turns WHERE dialogue_id = ? ORDER BY idx').all(s.dialogueId);
    expect(turns.map((t) => ({ turn_started_at: t.turn_started_at, sent_at: t.sent_at }))).toEqual(stored);
    for (const id of [s.first, s.second]) {
      expect(text).not.toContain(s.identity(id).participant_id);
      expect(text).not.toContain(s.identity(id).public_id);
    }
  });

  it('export --with-provider-ids, of the same dialogue, adds each person\'s platform ids; sotopia carries the same record under simarena.live', async () => {
    const s = playedAndPaired();
    const withIds = lines(await exportText(s.db, { batch: String(s.rating.batchId), format: 'dialogues', withProviderIds: true })).find((r) => r.mode === 'HUMANS')?.live;
    expect((withIds?.players as Record<string, unknown>[])[0]).toMatchObject({ character: 1, participant_id: s.identity(s.first).participant_id, study_id: null });
    const sotopia = JSON.parse(await exportText(s.db, { batch: String(s.rating.batchId), format: 'sotopia' })) as { episodes: { simarena: { mode: string; live: unknown } }[] };
    const episode = sotopia.episodes.find((e) => e.simarena.mode === 'HUMANS');
    const plain = lines(await exportText(s.db, { batch: String(s.rating.batchId), format: 'dialogues' })).find((r) => r.mode === 'HUMANS')?.live;
    expect(episode?.simarena.live).toEqual(plain);
    expect(sotopia.episodes.find((e) => e.simarena.mode === 'AGENTS')?.simarena.live).toBeNull();
  });

  it('export of a role-play batch itself holds its ended collected dialogues: a HUMAN_AGENT one names the agent\'s model for its character and its turns as the agent\'s', async () => {
    const fake = await startFakeLlm();
    fakes.push(fake);
    const { db } = createTestDb();
    const time = manualClock();
    const live = openRoleplayBatch(db, { partner: { fallback: { model: 'fake-model', wordsPerMinute: 60 } } });
    // 0.7: the person plays character 2, the agent starts; 0: the agent's pace factor is 0.75 (its turn shows after 5.625 s).
    const hub = hubFor(db, time.clock, { random: scripted(0.7, 0), fake });
    hubs.push(hub);
    const lone = makePlayer(db, live.batchId);
    hub.join(lone);
    hub.attach(lone, recordingSink(), -1);
    time.advance(60_000);
    hub.tick();
    await hub.idle();
    time.advance(6_000);
    hub.tick();
    time.advance(2_500);
    // A dialogue still being played is not exported.
    expect(await exportText(db, { batch: String(live.batchId), format: 'dialogues' })).toBe('');
    expect(hub.takeTurn(lone, say('Hello to you.', 'key-lone-00001')).kind).toBe('stored');
    hub.report(lone, 'rude');
    const [record, ...others] = lines(await exportText(db, { batch: String(live.batchId), format: 'dialogues' }));
    expect(others).toEqual([]);
    expect(record).toMatchObject({ mode: 'HUMAN_AGENT', model: 'fake-model', metrics: { calls: 1 } });
    expect(record?.live).toMatchObject({ collected_by_batch: live.batchId, outcome: 'reported', review: 'pending' });
    expect(record?.live?.players).toEqual([
      { character: 1, played_by: 'agent', model: 'fake-model', endpoint: 'default' },
      expect.objectContaining({ character: 2, played_by: 'person', outcome: 'reported', waited_s: 60 }),
    ]);
    expect((record?.live?.turns as Record<string, unknown>[]).map((t) => [t.played_by, t.time_taken_ms, t.keystrokes])).toEqual([
      ['agent', 6000, null],
      ['person', 2500, 13],
    ]);
  });
});
