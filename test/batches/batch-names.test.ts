// Issue 49, item 3: two batches with one name. `batches create --from study.json` run twice made a second "tour", and
// every command that names a batch by its name then refused it. A name another batch has is refused everywhere a batch
// is named (CLI create and edit, the console's forms, clones); databases that already hold such twins keep them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cloneBatch, getBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { launchReady, makeBatch, makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { createTestDb, createTestDbUpgradedAt, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';
const NOW = new Date('2026-03-01T10:00:00.000Z');
const deps = { actor: 'test', now: NOW };

function seedRun(db: Db): void {
  const runId = makeRun(db, { name: 'tour-run', model: M });
  for (let i = 0; i < 2; i += 1) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M });
  }
}

const settings = (name: string) => launchReady({ name, runs: ['tour-run'], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], provider: { kind: 'link' } });
const names = (db: Db) => db.prepare('SELECT name FROM batches ORDER BY id').pluck().all();

describe('batch names in the CLI', () => {
  it('batches create --from, run twice with one file, exits 1 with one line naming the batch that has the name, stores nothing, and --name NEW creates it', async () => {
    const { db, path } = createTestDb();
    seedRun(db);
    const file = join(tempDir(), 'study.json');
    writeFileSync(file, JSON.stringify(settings('tour')));
    const env = { DATABASE_PATH: path };
    expect(await cli(['batches', 'create', '--from', file], env)).toMatchObject({ code: 0 });
    const again = await cli(['batches', 'create', '--from', file], env);
    expect(again).toEqual({ code: 1, stdout: '', stderr: 'error: The name "tour" is taken by batch 1; give this batch another name with --name NEW.' });
    expect(names(db)).toEqual(['tour']);
    expect(db.prepare('SELECT count(*) FROM pairs').pluck().get()).toBe(2);

    const renamed = await cli(['batches', 'create', '--from', file, '--name', 'tour, second round'], env);
    expect(renamed).toMatchObject({ code: 0, stdout: expect.stringContaining('Created batch 2 (draft)') });
    expect(names(db)).toEqual(['tour', 'tour, second round']);
    // Each name is now one batch's, so the commands that take a name find it.
    expect(await cli(['batches', 'open', 'tour, second round'], env)).toMatchObject({ code: 0, stdout: 'Batch 2 is open.' });
  });

  it('batches edit --name, to a name another batch has, exits 1 with one line and keeps the batch\'s own name; its own name again is no change', async () => {
    const { db, path } = createTestDb();
    seedRun(db);
    createBatch(db, settings('tour'), deps);
    createBatch(db, settings('pilot'), deps);
    const env = { DATABASE_PATH: path };
    expect(await cli(['batches', 'edit', 'pilot', '--name', 'tour'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: The name "tour" is taken by batch 1; give this batch another name with --name NEW.',
    });
    expect(names(db)).toEqual(['tour', 'pilot']);
    expect(await cli(['batches', 'edit', 'pilot', '--name', 'pilot'], env)).toMatchObject({ code: 0, stdout: 'Batch 2 (pilot) is updated: 2 pair(s).' });
  });
});

describe('batch names in the core and the schema', () => {
  it('cloneBatch, twice, names the clones "NAME (copy)" and "NAME (copy 2)"; a clone given a name another batch has is refused and stores nothing', () => {
    const { db } = createTestDb();
    seedRun(db);
    const tour = createBatch(db, settings('tour'), deps);
    expect(getBatch(db, cloneBatch(db, tour.batchId, deps).batchId)?.name).toBe('tour (copy)');
    expect(getBatch(db, cloneBatch(db, tour.batchId, deps).batchId)?.name).toBe('tour (copy 2)');
    expect(() => cloneBatch(db, tour.batchId, { ...deps, overrides: { name: 'tour' } })).toThrow('The name "tour" is taken by batch 1; give this batch another name.');
    expect(names(db)).toEqual(['tour', 'tour (copy)', 'tour (copy 2)']);
  });

  it('migration 046, on a database that already holds two batches of one name, applies and keeps both; the schema then refuses a third and a rename to it', () => {
    let twins: number[] = [];
    const { db } = createTestDbUpgradedAt(46, (old) => {
      twins = [makeBatch(old, { settings: { name: 'tour' } }).batchId, makeBatch(old, { settings: { name: 'tour' } }).batchId];
    });
    expect(names(db)).toEqual(['tour', 'tour']);
    // The twins still take settings changes that keep their name (an update writes the name with the settings).
    db.prepare("UPDATE batches SET name = 'tour', settings = settings WHERE id = ?").run(twins[1]);
    const other = makeBatch(db, { settings: { name: 'pilot' } }).batchId;
    expect(() => makeBatch(db, { settings: { name: 'tour' } })).toThrow('another batch already has this name');
    expect(() => db.prepare("UPDATE batches SET name = 'tour' WHERE id = ?").run(other)).toThrow('another batch already has this name');
    expect(names(db)).toEqual(['tour', 'tour', 'pilot']);
  });
});

describe('batch names in the console', () => {
  const form = (name: string) => ({
    name,
    runs: 'tour-run',
    comparisons: `SCRIPT:${M} vs AGENTS:${M}`,
    scenarios: 'all',
    judgmentsPerPair: '3',
    question: 'Which one sounds more natural?',
    context: 'scenario+profiles+goals',
    reason: 'optional',
    perRaterCap: '10',
    leaseMinutes: '20',
    providerKind: 'link',
    codeCompleted: 'C0DE1234',
  });

  it('POST /console/batches/new, with a name another batch has, answers 409 with the message under the name field and stores no batch', async () => {
    const t = buildTestApp();
    seedRun(t.db);
    createBatch(t.db, settings('tour'), deps);
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post('/console/batches/new').type('form').send({ _csrf: admin.csrf, intent: 'create', ...form('tour') });
    expect(res.status).toBe(409);
    expect(res.text).toMatch(/<input type="text" id="name" name="name" value="tour" required maxlength="200" aria-invalid="true" aria-describedby="name-error">/);
    expect(res.text).toMatch(/id="name-error"[^>]*>The name &#34;tour&#34; is taken by batch 1; give this batch another name\.</);
    expect(names(t.db)).toEqual(['tour']);
  });

  it('POST /console/batches/:id/edit, renaming to a name another batch has, answers 409 with the message under the name field and keeps the old name', async () => {
    const t = buildTestApp();
    seedRun(t.db);
    createBatch(t.db, settings('tour'), deps);
    const pilot = createBatch(t.db, settings('pilot'), deps);
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post(`/console/batches/${pilot.batchId}/edit`).type('form').send({ _csrf: admin.csrf, ...form('tour') });
    expect(res.status).toBe(409);
    expect(res.text).toMatch(/id="name-error"[^>]*>The name &#34;tour&#34; is taken by batch 1; give this batch another name\.</);
    expect(names(t.db)).toEqual(['tour', 'pilot']);
  });
});
