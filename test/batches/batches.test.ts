import { describe, expect, it } from 'vitest';
import { BatchError } from '../../src/batches/batch-error.js';
import { cloneBatch, getBatch, listBatches, transitionBatch, updateBatchSettings } from '../../src/batches/batch.commands.js';
import { createBatch, previewPairs } from '../../src/batches/create-batch.js';
import { DEMO_BATCH_NAME, ensureDemoBatch } from '../../src/batches/demo-batch.js';
import { deriveGoldVariant } from '../../src/batches/derive-gold-variant.js';
import { raterLinks } from '../../src/batches/rater-links.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import type { Db } from '../../src/db/connection.js';
import { seedDemoDialogues } from '../../src/demo/seed-demo.js';
import { demoBatchLinks } from '../../src/demo/demo-links.js';
import { prepareFirstStart } from '../../src/first-start.js';
import { loadConfig } from '../../src/config.js';
import { builtInLibraryDir, installLibrary, readLibrary } from '../../src/scenarios/load-library.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { launchReady, makeDialogue, makeJudgment, makeRater, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

const NOW = new Date('2026-02-01T09:00:00.000Z');
const deps = { actor: 'test', now: NOW, random: seededRandom(7) };
const M = 'gpt-4o-mini';

/** Three samples with SCRIPT and AGENTS dialogues; in the third, AGENTS failed. */
function seedRun(db: Db, name = 'run-a') {
  makeRun(db, { name, model: M });
  const runId = db.prepare('SELECT id FROM runs WHERE name = :name').pluck().get({ name }) as number;
  const scenarios = [makeScenario(db, { category: 'cooperative' }), makeScenario(db, { category: 'competitive' }), makeScenario(db, { category: 'cooperative' })];
  const ids = scenarios.map((scenario, i) => ({
    script: makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M, turns: makeTurns(6) }),
    agents: makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M, turns: makeTurns(6), state: i === 2 ? 'failed' : 'complete' }),
  }));
  return { runId, scenarios, ids };
}

const settings = (extra: Record<string, unknown> = {}) => launchReady({ name: 'SCRIPT vs AGENTS', runs: ['run-a'], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], ...extra });

describe('createBatch', () => {
  it('createBatch forms a pair per scenario sample with both sides completed, condition a first, and lists the skipped samples', () => {
    const { db } = createTestDb();
    const { ids, scenarios } = seedRun(db);
    const result = createBatch(db, settings(), deps);
    expect(result.pairs.map((p) => [p.dialogueA, p.dialogueB])).toEqual([
      [ids[0]?.script, ids[0]?.agents],
      [ids[1]?.script, ids[1]?.agents],
    ]);
    expect(result.skipped).toEqual([
      { scenarioId: scenarios[2]?.scenarioId, castId: scenarios[2]?.castId, sampleIndex: 0, comparison: [`SCRIPT:${M}`, `AGENTS:${M}`], reason: `AGENTS:${M} dialogue is failed` },
    ]);
    const batch = getBatch(db, result.batchId);
    expect(batch).toMatchObject({ state: 'draft', name: 'SCRIPT vs AGENTS', counts: { pairs: 2, judgments: 0 } });
    expect(batch?.publicId).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(db.prepare('SELECT condition_a, condition_b FROM comparisons WHERE batch_id = :id').all({ id: result.batchId })).toEqual([
      { condition_a: `SCRIPT:${M}`, condition_b: `AGENTS:${M}` },
    ]);
    expect(db.prepare('SELECT count(*) FROM batch_runs WHERE batch_id = :id').pluck().get({ id: result.batchId })).toBe(1);
    expect(db.prepare("SELECT action FROM audit_log WHERE action = 'batch.create'").pluck().all()).toEqual(['batch.create']);
  });

  it('previewPairs returns the pairs a batch would contain and writes nothing', () => {
    const { db } = createTestDb();
    seedRun(db);
    const preview = previewPairs(db, settings({ scenarios: 'competitive' }));
    expect(preview.pairs).toHaveLength(1);
    expect(preview.skipped).toHaveLength(0);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
  });

  it('createBatch, with an unknown run, an unknown scenario, bad settings or no pairs, throws a BatchError naming the problem and writes nothing', () => {
    const { db } = createTestDb();
    seedRun(db);
    expect(() => createBatch(db, settings({ runs: ['nope'] }), deps)).toThrow('Unknown run(s): nope');
    expect(() => createBatch(db, settings({ scenarios: ['missing-scenario'] }), deps)).toThrow('Unknown scenario(s): missing-scenario');
    expect(() => createBatch(db, settings({ judgmentsPerPair: 0 }), deps)).toThrow(/judgmentsPerPair/);
    expect(() => createBatch(db, settings({ comparisons: [[`SCRIPT:${M}`, `MINDREADERS:${M}`]] }), deps)).toThrow(BatchError);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
  });

  it('createBatch, with onboarding and attention checks, makes gold pairs of a coherent dialogue against a derived variant, the expected answer naming the coherent one', () => {
    const { db } = createTestDb();
    seedRun(db);
    const result = createBatch(db, settings({ onboarding: { pairs: 1 }, attentionChecks: { rate: 0.2, maxFailures: 2 } }), deps);
    expect(result.goldPairs).toBeGreaterThanOrEqual(2);
    const gold = db
      .prepare<{ id: number }, { kind: string; expected: 'a' | 'b'; a_origin: string; b_origin: string; a_from: number | null; b_from: number | null; a_id: number; b_id: number }>(
        `SELECT p.kind, p.expected, da.origin AS a_origin, db.origin AS b_origin, da.derived_from AS a_from, db.derived_from AS b_from, da.id AS a_id, db.id AS b_id
         FROM pairs p JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id
         WHERE p.batch_id = :id AND p.kind <> 'regular'`,
      )
      .all({ id: result.batchId });
    expect(gold.map((g) => g.kind).sort()[0]).toBe('attention');
    expect(gold.some((g) => g.kind === 'onboarding')).toBe(true);
    for (const g of gold) {
      const coherent = g.expected === 'a' ? { origin: g.a_origin, id: g.a_id } : { origin: g.b_origin, id: g.b_id };
      const variant = g.expected === 'a' ? { origin: g.b_origin, from: g.b_from } : { origin: g.a_origin, from: g.a_from };
      expect(coherent.origin).not.toBe('derived');
      expect(variant).toEqual({ origin: 'derived', from: coherent.id });
    }
    // Derived dialogues are never compared as a condition in later batches.
    expect(createBatch(db, settings({ name: 'again' }), deps).pairs).toHaveLength(2);
  });

  it('deriveGoldVariant shuffles a long dialogue out of order and repeats the opening of a short one', () => {
    const turns = makeTurns(8);
    const shuffled = deriveGoldVariant(turns, seededRandom(3));
    expect(shuffled.variant).toBe('shuffled');
    expect([...shuffled.turns].map((t) => t.text).sort()).toEqual(turns.map((t) => t.text).sort());
    expect(shuffled.turns.map((t) => t.text)).not.toEqual(turns.map((t) => t.text));
    const short = deriveGoldVariant(makeTurns(3), seededRandom(3));
    expect(short.variant).toBe('repeated');
    expect(short.turns.length).toBeGreaterThan(3);
  });
});

describe('batch lifecycle and settings', () => {
  it('transitionBatch allows draft→open→paused→open→closed and refuses moving a closed batch', () => {
    const { db } = createTestDb();
    seedRun(db);
    const { batchId } = createBatch(db, settings(), deps);
    expect(() => transitionBatch(db, batchId, 'pause', 'test', NOW)).toThrow('is draft; it cannot be moved to paused');
    expect(transitionBatch(db, batchId, 'open', 'test', NOW).state).toBe('open');
    expect(transitionBatch(db, batchId, 'pause', 'test', NOW).state).toBe('paused');
    expect(transitionBatch(db, batchId, 'open', 'test', NOW).state).toBe('open');
    const closed = transitionBatch(db, batchId, 'close', 'test', NOW);
    expect(closed).toMatchObject({ state: 'closed', openedAt: NOW.toISOString(), closedAt: NOW.toISOString() });
    expect(() => transitionBatch(db, batchId, 'open', 'test', NOW)).toThrow('is closed');
    expect(() => transitionBatch(db, 999, 'open', 'test', NOW)).toThrow('No batch with id 999');
  });

  it('updateBatchSettings, once judgments exist, refuses the frozen keys (question, pair set) and still allows the others', () => {
    const { db } = createTestDb();
    seedRun(db);
    const { batchId } = createBatch(db, settings(), deps);
    const current = getBatch(db, batchId)?.settings;
    // Before judgments a new question is a new question version.
    expect(updateBatchSettings(db, batchId, { ...current, question: 'Which conversation is more natural?' }, deps).questionVersion).toBe(2);
    const pairId = db.prepare('SELECT id FROM pairs WHERE batch_id = :id LIMIT 1').pluck().get({ id: batchId }) as number;
    makeJudgment(db, { pairId, raterId: makeRater(db, { batchId }), winner: 'a' });
    const now = getBatch(db, batchId)?.settings;
    expect(() => updateBatchSettings(db, batchId, { ...now, question: 'Something else entirely?' }, deps)).toThrow('these settings are frozen: question');
    expect(() => updateBatchSettings(db, batchId, { ...now, scenarios: 'cooperative' }, deps)).toThrow('frozen: scenarios');
    const updated = updateBatchSettings(db, batchId, { ...now, perRaterCap: 25, pay: '£4.00' }, deps);
    expect(updated.settings).toMatchObject({ perRaterCap: 25, pay: '£4.00', question: 'Which conversation is more natural?' });
    expect(updated.questionVersion).toBe(2);
  });

  it('updateBatchSettings, before judgments, raises the question version when a later question of several changes, and not for other settings', () => {
    const { db } = createTestDb();
    seedRun(db);
    const questions = [
      { id: 'natural', text: 'Which one sounds more natural?' },
      { id: 'goals', text: 'Which one pursues its goals better?', allowTie: true, reason: 'off' },
    ];
    const { batchId } = createBatch(db, settings({ questions }), deps);
    const current = getBatch(db, batchId)?.settings;
    expect(getBatch(db, batchId)?.questionVersion).toBe(1);
    expect(updateBatchSettings(db, batchId, { ...current, pay: '£5.00' }, deps).questionVersion).toBe(1);
    const second = { ...questions[1], text: 'Which character pursues their goal more clearly?' };
    const updated = updateBatchSettings(db, batchId, { ...getBatch(db, batchId)?.settings, questions: [questions[0], second] }, deps);
    expect(updated.settings.questions?.[1]?.text).toBe('Which character pursues their goal more clearly?');
    expect(updated.questionVersion).toBe(2);
  });

  it('updateBatchSettings, before judgments, forms the pair set again when the scenarios change', () => {
    const { db } = createTestDb();
    seedRun(db);
    const { batchId } = createBatch(db, settings(), deps);
    const current = getBatch(db, batchId)?.settings;
    expect(updateBatchSettings(db, batchId, { ...current, scenarios: 'competitive' }, deps).counts.pairs).toBe(1);
  });

  it('cloneBatch makes a new draft with the same settings, its own link, and a fresh pair set', () => {
    const { db } = createTestDb();
    seedRun(db);
    const original = createBatch(db, settings({ perRaterCap: 7 }), deps);
    transitionBatch(db, original.batchId, 'open', 'test', NOW);
    const clone = cloneBatch(db, original.batchId, deps);
    const view = getBatch(db, clone.batchId);
    expect(view).toMatchObject({ state: 'draft', clonedFrom: original.batchId, name: 'SCRIPT vs AGENTS (copy)', counts: { pairs: 2 } });
    expect(view?.settings.perRaterCap).toBe(7);
    expect(view?.publicId).not.toBe(original.publicId);
    expect(listBatches(db).map((b) => b.id)).toEqual([original.batchId, clone.batchId]);
  });
});

describe('raterLinks', () => {
  const base = (provider: unknown) => ({ publicId: 'PUB123', settings: batchSettingsSchema.parse({ ...settings(), provider }) });

  it('raterLinks, per provider, gives the plain entry link, Prolific\'s study URL with its placeholders under the batch\'s names, and MTurk\'s ExternalQuestion', () => {
    expect(raterLinks(base({ kind: 'link' }), 'https://rate.example.org/')).toEqual({
      provider: 'link',
      entryUrl: 'https://rate.example.org/r/PUB123',
      providerUrl: 'https://rate.example.org/r/PUB123',
    });
    expect(raterLinks(base({ kind: 'prolific' }), 'https://rate.example.org').providerUrl).toBe(
      'https://rate.example.org/r/PUB123?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}',
    );
    expect(raterLinks(base({ kind: 'prolific', params: { participant: 'pid' } }), 'https://rate.example.org').providerUrl).toContain('?pid={{%PROLIFIC_PID%}}&STUDY_ID=');
    const mturk = raterLinks(base({ kind: 'mturk' }), 'https://rate.example.org');
    expect(mturk.providerUrl).toBe('https://rate.example.org/r/PUB123');
    expect(mturk.externalQuestionXml).toContain('<ExternalURL>https://rate.example.org/r/PUB123</ExternalURL>');
  });
});

describe('demo batch', () => {
  it('ensureDemoBatch, after the demo dialogues are seeded, opens a link batch of SCRIPT vs AGENTS made by system, once', () => {
    const { db } = createTestDb();
    installLibrary(db, readLibrary(builtInLibraryDir), 'simarena', NOW.toISOString());
    seedDemoDialogues(db, NOW);
    const id = ensureDemoBatch(db, NOW);
    expect(id).not.toBeNull();
    const batch = getBatch(db, id ?? 0);
    expect(batch).toMatchObject({ name: DEMO_BATCH_NAME, state: 'open', createdBy: 'system', settings: { provider: { kind: 'link' } } });
    expect(batch?.counts.pairs).toBeGreaterThan(0);
    expect(batch?.settings.comparisons).toEqual([['SCRIPT:handwritten-demo', 'AGENTS:handwritten-demo']]);
    expect(ensureDemoBatch(db, NOW)).toBeNull();
  });

  it('prepareFirstStart, on an empty database with SEED_DEMO on, leaves an open demo batch whose rater link the banner prints', async () => {
    const { db, path } = createTestDb();
    await prepareFirstStart(db, loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' }), NOW);
    const links = demoBatchLinks(db, 'http://127.0.0.1:3000');
    expect(links).toEqual([{ name: DEMO_BATCH_NAME, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/r\/[A-Za-z0-9_-]{20,}$/) }]);
    await prepareFirstStart(db, loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' }), NOW);
    expect(demoBatchLinks(db, 'http://x')).toHaveLength(1);
  });
});
