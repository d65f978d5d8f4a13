import { describe, expect, it } from 'vitest';
import { BatchError } from '../../src/batches/batch-error.js';
import { checkBatchCapacity } from '../../src/batches/batch-capacity.js';
import { editDraftBatch, transitionBatch, updateBatchSettings, getBatch } from '../../src/batches/batch.commands.js';
import { batchLaunchChecklist } from '../../src/batches/batch-launch.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { endCollected, getCollected, insertCollected } from '../../src/batches/collected.queries.js';
import { reviewCollectedDialogue } from '../../src/batches/collection.js';
import { insertDialogue, replaceTurns } from '../../src/generation/dialogue.queries.js';
import { markInterruptedRuns } from '../../src/generation/run.queries.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { hitTypeRequest } from '../../src/recruiting/mturk-plan.js';
import { prolificStudyRequest } from '../../src/recruiting/prolific-plan.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns, type MadeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb } from '../helpers/test-db.js';
import type { Db } from '../../src/db/connection.js';

const NOW = new Date('2026-03-01T09:00:00.000Z');
const deps = { actor: 'test', now: NOW };
const M = 'test-model';

const roleplay = (extra: Record<string, unknown> = {}) =>
  launchReady({ name: 'Live role-play', task: 'roleplay', run: 'live-1', consent: 'Your partner may be a person or an AI.', ...extra });

/** A dialogue the role-play batch collected, ended as given. */
function collected(db: Db, batchId: number, runId: number, scenario: MadeScenario, options: { sampleIndex?: number; state?: 'complete' | 'failed'; turns?: number } = {}) {
  const id = insertDialogue(
    db,
    { runId, scenarioId: scenario.scenarioId, castId: scenario.castId, sampleIndex: options.sampleIndex ?? 0, mode: 'HUMANS', model: 'human', origin: 'collected', state: options.state ?? 'complete' },
    NOW,
  );
  replaceTurns(db, id, makeTurns(options.turns ?? 8));
  insertCollected(db, { dialogueId: id, batchId, task: 'roleplay' }, NOW);
  return id;
}

describe('role-play batches', () => {
  it('hitTypeRequest and prolificStudyRequest, for a role-play batch, say the worker chats live (never the rating title or the conditions)', () => {
    const mturk = batchSettingsSchema.parse(roleplay({ provider: { kind: 'mturk' }, pay: '$3.00' }));
    expect(hitTypeRequest({ settings: mturk }, '3.00', null).Title).toBe('Chat live with a partner in a short role-play');
    const prolific = batchSettingsSchema.parse(roleplay({ provider: { kind: 'prolific', completionCodes: { completed: 'C', screenedOut: 'S', noConsent: 'N', noPartner: 'P' } } }));
    expect(prolificStudyRequest({ publicId: 'p1', settings: prolific }, { studyUrl: 'https://study.example.org/r/p1', places: 10, minutes: 20, rewardMinor: 300 }).name).toBe('Chat live with a partner in a short role-play');
  });

  it('createBatch, for "task": "roleplay", makes the collection run, links it, fills in partner and turns, and forms no pairs', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const result = createBatch(db, roleplay({ partner: { waitSeconds: 30, fallback: { model: M } } }), deps);
    expect(result.pairs).toEqual([]);
    expect(result.run?.name).toBe('live-1');
    const run = db.prepare("SELECT id, kind, state, model, modes FROM runs WHERE name = 'live-1'").get() as { id: number; kind: string; state: string; model: string; modes: string };
    expect(run).toMatchObject({ kind: 'collection', state: 'running', model: M, modes: '["HUMANS","HUMAN_AGENT"]' });
    expect(db.prepare('SELECT run_id FROM batch_runs WHERE batch_id = ?').pluck().all(result.batchId)).toEqual([run.id]);
    const batch = getBatch(db, result.batchId);
    expect(batch?.settings).toMatchObject({
      task: 'roleplay',
      run: 'live-1',
      runs: [],
      comparisons: [],
      partner: { waitSeconds: 30, fallback: { model: M, endpoint: 'default', temperature: 0.7, wordsPerMinute: 40 }, waitBonus: null, awaySeconds: 20, sameAddress: false },
      turns: { max: 20, min: 6, turnSeconds: 90 },
    });
    expect(db.prepare('SELECT count(*) FROM pairs').pluck().get()).toBe(0);
    expect(checkBatchCapacity(db, result.batchId)).toMatchObject({ ok: true, samples: 1 });
  });

  it('createBatch, for a role-play batch with rating settings or without a run, and a rating batch with partner settings, refuses naming each field', () => {
    const { db } = createTestDb();
    makeScenario(db);
    expect(() => createBatch(db, roleplay({ comparisons: [[`AGENTS:${M}`, `SCRIPT:${M}`]] }), deps)).toThrow(/comparisons: a roleplay batch has no comparisons/);
    expect(() => createBatch(db, roleplay({ run: undefined }), deps)).toThrow(/run: is required/);
    expect(() => createBatch(db, roleplay({ attentionChecks: { rate: 0.1 } }), deps)).toThrow(/attentionChecks: is a rating batch's setting/);
    expect(() => createBatch(db, roleplay({ turns: { min: 30, max: 20 } }), deps)).toThrow(/turns.min: min must not exceed max/);
    expect(() => createBatch(db, launchReady({ name: 'r', runs: ['x'], comparisons: [[`AGENTS:${M}`, `SCRIPT:${M}`]], partner: { waitSeconds: 60 } }), deps)).toThrow(
      /partner: belongs to a role-play batch/,
    );
    expect(() => createBatch(db, launchReady({ name: 'r' }), deps)).toThrow(/runs: needs at least one run/);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
    expect(db.prepare("SELECT count(*) FROM runs WHERE kind = 'collection'").pluck().get()).toBe(0);
  });

  it('createBatch, when the run name belongs to a generation run, refuses; a second batch into the same collection run shares it', () => {
    const { db } = createTestDb();
    makeScenario(db);
    makeRun(db, { name: 'taken' });
    expect(() => createBatch(db, roleplay({ run: 'taken' }), deps)).toThrow(/"taken" already names a run of kind import/);
    const first = createBatch(db, roleplay(), deps);
    const second = createBatch(db, roleplay({ name: 'Round 2' }), deps);
    expect(second.run?.id).toBe(first.run?.id);
    expect(db.prepare("SELECT count(*) FROM runs WHERE kind = 'collection'").pluck().get()).toBe(1);
  });

  it('createBatch, when no selected scenario has a cast, refuses with the capacity problem', () => {
    const { db } = createTestDb();
    expect(() => createBatch(db, roleplay(), deps)).toThrow(/None of the batch's scenarios has a cast/);
  });

  it('a Prolific role-play batch, without planned places, is not created; without its "no partner" code, is refused at open; with both, opens', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const provider = { kind: 'prolific', completionCodes: { completed: 'C1', screenedOut: 'S1', noConsent: 'N1' } };
    expect(() => createBatch(db, roleplay({ provider }), deps)).toThrow('A roleplay batch on Prolific needs plannedRaters: the places to publish.');
    const { batchId } = createBatch(db, roleplay({ provider, plannedRaters: 10 }), deps);
    const item = batchLaunchChecklist(db, batchId).find((i) => i.key === 'completionCodes');
    expect(item).toMatchObject({ ok: false, blocking: true, setting: 'provider.completionCodes.noPartner' });
    expect(() => transitionBatch(db, batchId, 'open', 'test', NOW)).toThrow(/noPartner/);
    const fixed = createBatch(db, roleplay({ name: 'b', plannedRaters: 10, provider: { ...provider, completionCodes: { ...provider.completionCodes, noPartner: 'NP1' } } }), deps);
    expect(transitionBatch(db, fixed.batchId, 'open', 'test', NOW).state).toBe('open');
    expect(batchLaunchChecklist(db, fixed.batchId).find((i) => i.key === 'capacity')?.detail).toBe('1 scenario casts to play; each dialogue takes the next sample of one.');
  });

  it('updateBatchSettings, asked to change the task or the run of a role-play batch, refuses', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const { batchId } = createBatch(db, roleplay(), deps);
    const settings = getBatch(db, batchId)?.settings;
    expect(() => updateBatchSettings(db, batchId, { ...settings, run: 'other' }, deps)).toThrow(/collects into run "live-1"/);
    expect(() => updateBatchSettings(db, batchId, { ...settings, task: 'rate', runs: ['live-1'], comparisons: [[`HUMANS:human`, `AGENTS:${M}`]], partner: null, turns: null, run: undefined }, deps)).toThrow(
      /is a roleplay batch; its task cannot change/,
    );
  });

  it('markInterruptedRuns, at the start of a server, leaves a collection run running and its live dialogues as they are', () => {
    const { db } = createTestDb();
    const scenario = makeScenario(db);
    const { batchId, run } = createBatch(db, roleplay(), deps);
    const id = insertDialogue(db, { runId: run?.id ?? 0, scenarioId: scenario.scenarioId, castId: scenario.castId, sampleIndex: 0, mode: 'HUMANS', model: 'human', origin: 'collected', state: 'running' }, NOW);
    insertCollected(db, { dialogueId: id, batchId, task: 'roleplay' }, NOW);
    expect(markInterruptedRuns(db, NOW, { atStart: true })).toEqual([]);
    expect(db.prepare('SELECT state FROM dialogues WHERE id = ?').pluck().get(id)).toBe('running');
    expect(db.prepare("SELECT state FROM runs WHERE name = 'live-1'").pluck().get()).toBe('running');
  });
});

describe('review before rating', () => {
  it('a fallback agent added to a draft, or brought by a second round, adds HUMAN_AGENT and its model to the collection run', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const runOf = () => db.prepare("SELECT model, modes FROM runs WHERE name = 'live-1'").get() as { model: string; modes: string };
    const { batchId } = createBatch(db, roleplay({ name: 'Alone' }), deps);
    expect(runOf()).toEqual({ model: 'human', modes: '["HUMANS"]' });
    const settings = getBatch(db, batchId)?.settings as { partner: Record<string, unknown> };
    editDraftBatch(db, batchId, { partner: { ...settings.partner, fallback: { model: M } } }, deps);
    expect(runOf()).toEqual({ model: M, modes: '["HUMANS","HUMAN_AGENT"]' });
    editDraftBatch(db, batchId, { partner: { ...settings.partner, fallback: null } }, deps);
    expect(runOf()).toEqual({ model: M, modes: '["HUMANS","HUMAN_AGENT"]' });

    const second = createTestDb().db;
    makeScenario(second);
    createBatch(second, roleplay({ name: 'Round 1' }), deps);
    createBatch(second, roleplay({ name: 'Round 2', partner: { waitSeconds: 30, fallback: { model: M } } }), deps);
    expect(second.prepare("SELECT model, modes FROM runs WHERE name = 'live-1'").get()).toEqual({ model: M, modes: '["HUMANS","HUMAN_AGENT"]' });
  });

  it('batches show, for a role-play batch, counts the dialogues collected and their review rather than pairs', async () => {
    const { db, path } = createTestDb();
    const scenarios = [makeScenario(db), makeScenario(db), makeScenario(db)];
    const { batchId, run } = createBatch(db, roleplay(), deps);
    const ids = scenarios.map((scenario, i) => collected(db, batchId, run?.id ?? 0, scenario as MadeScenario, { sampleIndex: i }));
    endCollected(db, ids[0] as number, { outcome: 'complete', reason: null }, NOW);
    endCollected(db, ids[1] as number, { outcome: 'reported', reason: 'reported' }, NOW);
    reviewCollectedDialogue(db, ids[0] as number, 'accepted', { actor: 'r@x', note: null, now: NOW });
    const shown = await cli(['batches', 'show', String(batchId)], { DATABASE_PATH: path });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('1 dialogue under way; 2 collected (1 complete, 0 incomplete, 1 reported): 1 accepted, 0 rejected, 1 to review, 0 participants');
    expect(shown.stdout).not.toContain('pairs complete');
    const json = JSON.parse((await cli(['batches', 'show', String(batchId), '--json'], { DATABASE_PATH: path })).stdout) as { collected: Record<string, number> };
    expect(json.collected).toMatchObject({ collecting: 1, complete: 1, reported: 1, accepted: 1, pending: 1 });
  });

  it('a rating batch over the collection run pairs only the accepted collected dialogues with the AGENTS ones of the same sample', () => {
    const { db } = createTestDb();
    const scenarios = [makeScenario(db), makeScenario(db)];
    const { batchId, run } = createBatch(db, roleplay(), deps);
    const runId = run?.id ?? 0;
    const accepted = collected(db, batchId, runId, scenarios[0] as MadeScenario);
    const pending = collected(db, batchId, runId, scenarios[1] as MadeScenario);
    for (const id of [accepted, pending]) endCollected(db, id, { outcome: 'complete', reason: null }, NOW);
    reviewCollectedDialogue(db, accepted, 'accepted', { actor: 'r@x', note: null, now: NOW });
    const agentsRun = makeRun(db, { name: 'agents', model: M });
    const agents = scenarios.map((scenario) => makeDialogue(db, { runId: agentsRun, scenario, mode: 'AGENTS', model: M }));
    const rating = createBatch(db, launchReady({ name: 'Humans vs agents', runs: ['live-1', 'agents'], comparisons: [['HUMANS:human', `AGENTS:${M}`]] }), deps);
    expect(rating.pairs.map((p) => [p.dialogueA, p.dialogueB])).toEqual([[accepted, agents[0]]]);
    expect(rating.skipped.map((s) => s.reason)).toEqual(['HUMANS:human has no dialogue']);
    expect(getCollected(db, accepted)).toMatchObject({ review: 'accepted', reviewed_by: 'r@x', reviewed_at: NOW.toISOString() });
    expect(db.prepare("SELECT target_id FROM audit_log WHERE action = 'dialogue.accept'").pluck().all()).toEqual([String(accepted)]);
  });

  it('reviewCollectedDialogue refuses a dialogue still collecting, accepting one below the minimum of turns, and changing one already paired', () => {
    const { db } = createTestDb();
    const scenario = makeScenario(db);
    const { batchId, run } = createBatch(db, roleplay(), deps);
    const runId = run?.id ?? 0;
    const live = collected(db, batchId, runId, scenario);
    expect(() => reviewCollectedDialogue(db, live, 'accepted', { actor: 'r', note: null, now: NOW })).toThrow(/still being collected/);
    const short = collected(db, batchId, runId, scenario, { sampleIndex: 1, state: 'failed', turns: 2 });
    endCollected(db, short, { outcome: 'incomplete', reason: 'partner_left after 2 spoken turns' }, NOW);
    expect(() => reviewCollectedDialogue(db, short, 'accepted', { actor: 'r', note: null, now: NOW })).toThrow(BatchError);
    reviewCollectedDialogue(db, short, 'rejected', { actor: 'r', note: 'too short', now: NOW });
    expect(getCollected(db, short)).toMatchObject({ review: 'rejected', review_note: 'too short' });
    endCollected(db, live, { outcome: 'complete', reason: null }, NOW);
    reviewCollectedDialogue(db, live, 'accepted', { actor: 'r', note: null, now: NOW });
    const agentsRun = makeRun(db, { name: 'agents', model: M });
    makeDialogue(db, { runId: agentsRun, scenario, mode: 'AGENTS', model: M });
    createBatch(db, launchReady({ name: 'rate', runs: ['live-1', 'agents'], comparisons: [['HUMANS:human', `AGENTS:${M}`]] }), deps);
    expect(() => reviewCollectedDialogue(db, live, 'rejected', { actor: 'r', note: null, now: NOW })).toThrow(/already paired in rating batch/);
    expect(getCollected(db, live)?.review).toBe('accepted');
  });
});

describe('the launch checklist of a role-play batch and its promised time', () => {
  const prolific = { kind: 'prolific', completionCodes: { completed: 'C1', screenedOut: 'S1', noConsent: 'N1', noPartner: 'NP1' } };
  const timed = (extra: Record<string, unknown>) =>
    roleplay({ provider: prolific, plannedRaters: 10, estimatedMinutes: 10, partner: { waitSeconds: 120 }, turns: { max: 20, min: 6, turnSeconds: 90 }, ...extra });

  it('batchLaunchChecklist, when estimatedMinutes is below the wait plus max/2 turns of turnSeconds, warns and judges Prolific pay at that time, blocking open', () => {
    const { db } = createTestDb();
    makeScenario(db);
    // 120 s + 10 turns × 90 s = 1,020 s: 17 minutes. £1.50 for 10 minutes is £9.00 an hour; for 17, £5.29 (Prolific's floor is £6).
    const { batchId } = createBatch(db, timed({ pay: '£1.50' }), deps);
    const items = batchLaunchChecklist(db, batchId);
    expect(items.find((i) => i.key === 'minimumTime')).toMatchObject({
      ok: false,
      blocking: false,
      detail: expect.stringMatching(/^estimatedMinutes is 10, less than the 17 minutes a role-play session can take \(a wait of up to 120 s, then 10 turns of one's own of up to 90 s each\): participants are promised 17 minutes/),
    });
    expect(items.find((i) => i.key === 'platformPay')).toMatchObject({ ok: false, blocking: true, detail: expect.stringContaining('£1.50 for 17 minutes, what a role-play session can take, is £5.29 per hour') });
    expect(() => transitionBatch(db, batchId, 'open', 'test', NOW)).toThrow(/Pay per hour on Prolific/);
    expect(getBatch(db, batchId)?.state).toBe('draft');
    // MTurk: $1.80 for 10 minutes is $10.80 an hour; for 17, $6.35, below the $7.25 federal minimum the checklist holds it to.
    const mturk = createBatch(db, timed({ name: 'mturk', pay: '$1.80', provider: { kind: 'mturk' } }), deps);
    expect(batchLaunchChecklist(db, mturk.batchId).find((i) => i.key === 'platformPay')).toMatchObject({ ok: false, blocking: true, detail: expect.stringContaining('$1.80 for 17 minutes, what a role-play session can take, is $6.35 per hour') });
    expect(() => transitionBatch(db, mturk.batchId, 'open', 'test', NOW)).toThrow(/Pay per hour on MTurk/);
  });

  it('batchLaunchChecklist, for a role-play batch that promises enough time and pays the floor at it, passes both and opens; an odd max gives character 1 the extra turn', () => {
    const { db } = createTestDb();
    makeScenario(db);
    const { batchId } = createBatch(db, timed({ pay: '£2.00', estimatedMinutes: 17 }), deps);
    const items = batchLaunchChecklist(db, batchId);
    expect(items.find((i) => i.key === 'minimumTime')).toMatchObject({ ok: true, detail: expect.stringContaining('is at least the 17 minutes a role-play session can take') });
    expect(items.find((i) => i.key === 'platformPay')?.ok).toBe(true);
    expect(transitionBatch(db, batchId, 'open', 'test', NOW).state).toBe('open');
    // 30 s + ceil(5 / 2) = 3 turns × 60 s = 210 s: 4 minutes (rounded up).
    const odd = createBatch(db, timed({ name: 'odd', estimatedMinutes: 3, partner: { waitSeconds: 30 }, turns: { max: 5, min: 2, turnSeconds: 60 } }), deps);
    expect(batchLaunchChecklist(db, odd.batchId).find((i) => i.key === 'minimumTime')?.detail).toMatch(/less than the 4 minutes .*then 3 turns of one's own of up to 60 s/);
  });
});
