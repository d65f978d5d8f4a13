// Issue 10, point 2: the capacity check — whether every regular pair can reach K judgments under the settings — with
// its numbers, refusing at creation (CLI and console) and before opening (CLI and the console's Open button).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { updateBatchSettings } from '../../src/batches/batch.commands.js';
import { checkBatchCapacity } from '../../src/batches/batch-capacity.js';
import { computeCapacity, fewestRaters } from '../../src/batches/capacity-check.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { launchReady, makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';
const NOW = new Date('2026-02-01T09:00:00.000Z');

/** `samples` scenario samples with SCRIPT, AGENTS and MINDREADERS dialogues in run `cap-run`. */
function seed(db: Db, samples: number) {
  const runId = makeRun(db, { name: 'cap-run', model: M, modes: ['SCRIPT', 'AGENTS', 'MINDREADERS'] });
  for (let i = 0; i < samples; i += 1) {
    const scenario = makeScenario(db);
    for (const mode of ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const) makeDialogue(db, { runId, scenario, mode, model: M });
  }
}

const settings = (extra: Record<string, unknown> = {}) =>
  launchReady({
  name: 'capacity',
  runs: ['cap-run'],
  comparisons: [
    [`SCRIPT:${M}`, `AGENTS:${M}`],
    [`SCRIPT:${M}`, `MINDREADERS:${M}`],
  ],
  judgmentsPerPair: 3,
  perRaterCap: 4,
  ...extra,
  });

const gold = { onboardingWanted: 0, onboardingPairs: 0, attentionRate: null, attentionPairs: 0, fromRatedSamples: 0 };

describe('capacity check', () => {
  it('fewestRaters, for demands and a per-rater limit, gives the Gale–Ryser minimum', () => {
    expect(fewestRaters([3, 3, 3, 3], 4)).toBe(3); // 12 judgments, 4 per rater
    expect(fewestRaters([3, 3, 3, 3], 1)).toBe(12);
    expect(fewestRaters([6, 1], 10)).toBe(6); // one unit needs 6 different raters
    expect(fewestRaters([], 3)).toBe(0);
  });

  it('computeCapacity, with two comparisons per sample and no allowSameSample, needs 2·K raters per sample and counts the cap right', () => {
    const pairSamples = ['s1', 's1', 's2', 's2', 's3', 's3', 's4', 's4', 's5', 's5'];
    const base = { judgmentsPerPair: 3, perRaterCap: 4, allowSameSample: false, plannedRaters: null, pairSamples, gold };
    // 5 samples × 2 pairs × 3 = 30 judgments; a rater does at most one pair per sample and 4 in all: 8 raters.
    expect(computeCapacity(base)).toMatchObject({ ok: true, pairs: 10, samples: 5, judgmentsNeeded: 30, perRater: 4, ratersNeeded: 8, problems: [] });
    // A cap above the number of samples only limits how many raters are needed: each still does one pair per sample.
    expect(computeCapacity({ ...base, perRaterCap: 100 })).toMatchObject({ perRater: 5, ratersNeeded: 6 });
    expect(computeCapacity({ ...base, perRaterCap: 100, allowSameSample: true })).toMatchObject({ perRater: 10, ratersNeeded: 3 });
    const refused = computeCapacity({ ...base, plannedRaters: 7 });
    expect(refused.ok).toBe(false);
    expect(refused.problems).toEqual([
      expect.objectContaining({ level: 'error', numbers: { pairs: 10, judgmentsPerPair: 3, judgmentsNeeded: 30, perRater: 4, ratersNeeded: 8, plannedRaters: 7 } }),
    ]);
    expect(refused.problems[0]?.message).toContain('need at least 8 raters');
    expect(computeCapacity({ ...base, plannedRaters: 8 }).ok).toBe(true);
  });

  it('computeCapacity, with a small attention pool, too few onboarding pairs and gold from rated samples, warns with the numbers but passes', () => {
    const result = computeCapacity({
      judgmentsPerPair: 1,
      perRaterCap: 50,
      allowSameSample: true,
      plannedRaters: null,
      pairSamples: Array.from({ length: 60 }, (_, i) => `s${i}`),
      gold: { onboardingWanted: 4, onboardingPairs: 2, attentionRate: 0.2, attentionPairs: 6, fromRatedSamples: 8 },
    });
    expect(result.ok).toBe(true);
    expect(result.problems.map((p) => [p.level, p.numbers])).toEqual([
      ['warning', { onboardingWanted: 4, onboardingPairs: 2 }],
      ['warning', { perRater: 50, attentionChecksDue: 13, attentionPairs: 6 }],
      ['warning', { goldFromRatedSamples: 8 }],
    ]);
  });

  it('createBatch, when plannedRaters cannot fill every pair, refuses with the numbers and stores nothing', () => {
    const { db } = createTestDb();
    seed(db, 5);
    expect(() => createBatch(db, settings({ plannedRaters: 7 }), { actor: 'test', now: NOW })).toThrow(/need at least 8 raters.*plannedRaters is 7/);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM pairs').pluck().get()).toBe(0);
    const created = createBatch(db, settings({ plannedRaters: 8 }), { actor: 'test', now: NOW });
    expect(checkBatchCapacity(db, created.batchId)).toMatchObject({ ok: true, ratersNeeded: 8, pairs: 10 });
  });

  it('simarena batches create --from, when the planned raters are too few, exits 1 with the numbers; a feasible file prints what it needs', async () => {
    const { db, path } = createTestDb();
    seed(db, 5);
    const env = { DATABASE_PATH: path };
    const dir = tempDir();
    const tooFew = join(dir, 'too-few.json');
    writeFileSync(tooFew, JSON.stringify(settings({ plannedRaters: 5 })));
    const refused = await cli(['batches', 'create', '--from', tooFew], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: This batch was not created: Capacity: 10 pairs × 3 = 30 judgments need at least 8 raters/);
    expect(refused.stderr).toContain('plannedRaters is 5');
    expect(JSON.parse((await cli(['batches', 'list', '--json'], env)).stdout)).toEqual([]);

    const enough = join(dir, 'enough.json');
    writeFileSync(enough, JSON.stringify(settings({ plannedRaters: 8 })));
    const created = await cli(['batches', 'create', '--from', enough], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('Capacity: 10 pairs × 3 = 30 judgments need at least 8 raters (each judges at most 4).');
    const json = await cli(['batches', 'create', '--from', enough, '--name', 'enough, again', '--json'], env);
    expect(JSON.parse(json.stdout).capacity).toMatchObject({ ok: true, ratersNeeded: 8 });
  });

  it('simarena batches open, when the settings were changed so the planned raters are too few, refuses with the numbers and leaves the batch a draft', async () => {
    const { db, path } = createTestDb();
    seed(db, 5);
    const created = createBatch(db, settings({ plannedRaters: 8 }), { actor: 'test', now: NOW });
    updateBatchSettings(db, created.batchId, settings({ plannedRaters: 6 }), { actor: 'test', now: NOW });
    const env = { DATABASE_PATH: path };
    const refused = await cli(['batches', 'open', String(created.batchId)], env);
    expect(refused.code).toBe(1);
    // The launch checklist names the capacity item as blocking, with its numbers, and the batch is not opened.
    expect(refused.stderr).toMatch(/^blocking: Capacity — .*need at least 8 raters.*plannedRaters is 6/m);
    expect(refused.stderr).toMatch(/^error: Batch 1 was not opened/m);
    expect(db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(created.batchId)).toBe('draft');
    updateBatchSettings(db, created.batchId, settings({ plannedRaters: null }), { actor: 'test', now: NOW });
    expect(await cli(['batches', 'open', String(created.batchId)], env)).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
  });

  it('POST /console/batches/new, with Preview pairs, shows the capacity with its numbers; Create is refused (400) when it cannot be filled', async () => {
    const t = buildTestApp();
    seed(t.db, 5);
    const admin = await signIn(t.app, t.db, 'admin');
    const form = {
      _csrf: admin.csrf,
      name: 'capacity',
      runs: 'cap-run',
      comparisons: `SCRIPT:${M} vs AGENTS:${M}\nSCRIPT:${M} vs MINDREADERS:${M}`,
      judgmentsPerPair: '3',
      perRaterCap: '4',
      plannedRaters: '7',
    };
    const preview = await admin.agent.post('/console/batches/new').type('form').send({ ...form, intent: 'preview' }).expect(200);
    expect(preview.text).toContain('data-testid="capacity" data-ok="no"');
    expect(preview.text).toContain('<strong data-testid="raters-needed">8</strong>');
    expect(preview.text).toContain('plannedRaters is 7');
    const refused = await admin.agent.post('/console/batches/new').type('form').send({ ...form, intent: 'create' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('This batch was not created');
    expect(refused.text).toContain('need at least 8 raters');
    expect(t.db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);

    const ok = await admin.agent.post('/console/batches/new').type('form').send({ ...form, plannedRaters: '8', intent: 'preview' }).expect(200);
    expect(ok.text).toContain('data-testid="capacity" data-ok="yes"');
    const created = await admin.agent.post('/console/batches/new').type('form').send({ ...form, plannedRaters: '8', intent: 'create' }).expect(303);
    const batchId = Number(/\/console\/batches\/(\d+)/.exec(String(created.headers.location))?.[1]);
    expect(t.db.prepare("SELECT json_extract(settings, '$.plannedRaters') FROM batches WHERE id = ?").pluck().get(batchId)).toBe(8);
  });

  it('POST /console/batches/:id/open, when the batch cannot be filled, answers 409 with the numbers; the batch page shows the capacity', async () => {
    const t = buildTestApp();
    seed(t.db, 5);
    const created = createBatch(t.db, settings({ plannedRaters: 8 }), { actor: 'test', now: NOW });
    updateBatchSettings(t.db, created.batchId, settings({ plannedRaters: 3 }), { actor: 'test', now: NOW });
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/batches/${created.batchId}`).expect(200);
    expect(page.text).toContain('data-testid="capacity" data-ok="no"');
    expect(page.text).toContain('plannedRaters is 3');
    const refused = await admin.agent.post(`/console/batches/${created.batchId}/open`).type('form').send({ _csrf: admin.csrf });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('need at least 8 raters');
    expect(t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(created.batchId)).toBe('draft');
    updateBatchSettings(t.db, created.batchId, settings({ plannedRaters: 8 }), { actor: 'test', now: NOW });
    await admin.agent.post(`/console/batches/${created.batchId}/open`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(created.batchId)).toBe('open');
  });
});
