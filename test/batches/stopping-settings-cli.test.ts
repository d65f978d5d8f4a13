import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';

/** The batch file: SCRIPT vs AGENTS over the run, with this stopping rule. */
const writeBatchFile = (file: string, stopping: unknown) =>
  writeFileSync(file, JSON.stringify({ name: 'sequential', runs: ['cli-run'], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], stopping }));

function batchFile(stopping: unknown, scenarios = 1) {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'cli-run', model: M });
  for (let i = 0; i < scenarios; i++) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M });
  }
  const file = join(tempDir(), 'batch.json');
  writeBatchFile(file, stopping);
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' }, file };
}

describe('simarena batches create with a stopping rule', () => {
  it('batches create --from FILE.json, with a stopping rule, stores it with its defaults', async () => {
    const { db, env, file } = batchFile({ looks: 4 });
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const settings = JSON.parse(db.prepare('SELECT settings FROM batches').pluck().get() as string);
    expect(settings.stopping).toEqual({ looks: 4, alpha: 0.05, spending: 'obrien-fleming', futility: null });
  });

  it('batches create --from FILE.json, with futility stopping, stores it with binding off by default', async () => {
    const { db, env, file } = batchFile({ looks: 4, futility: { beta: 0.2, effect: 0.65 } });
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const settings = JSON.parse(db.prepare('SELECT settings FROM batches').pluck().get() as string);
    expect(settings.stopping.futility).toEqual({ beta: 0.2, effect: 0.65, binding: false });
  });

  it.each([
    [{ looks: 4, lookEvery: 10 }, 'give either looks (a number of looks) or lookEvery (pairs between looks), not both'],
    [{ looks: 4, futility: { beta: 0.6, effect: 0.65 } }, 'stopping.futility.beta: must be below 0.5'],
    [{ looks: 4, futility: { beta: 0, effect: 0.65 } }, 'stopping.futility.beta: must be above 0'],
    [{ looks: 4, futility: { beta: 0.2, effect: 0.5 } }, 'stopping.futility.effect: must be the win rate of pair majorities under the alternative, above 0.5'],
    [{ looks: 4, futility: { beta: 0.2, effect: 1 } }, 'stopping.futility.effect: must be below 1'],
    [{ looks: 4, spending: null, futility: { beta: 0.2, effect: 0.65 } }, 'stopping.spending: must be obrien-fleming or pocock (futility spends beta by the same family)'],
    [{ looks: 4, spending: 'linear' }, 'stopping.spending'],
  ])('batches create --from FILE.json, with stopping %j, refuses it in one line naming the problem', async (stopping, message) => {
    const { db, env, file } = batchFile(stopping);
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(message);
    expect(created.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
  });

  it('batches create --from FILE.json, with a lookEvery that gives a comparison more than 20 looks, refuses it and says the smallest that fits', async () => {
    const { db, env, file } = batchFile({ lookEvery: 1 }, 21);
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(`stopping.lookEvery 1 gives 21 looks over the 21 pairs of SCRIPT:${M} vs AGENTS:${M} (set lookEvery to at least 2)`);
    expect(created.stderr).toContain('at most 20 looks');
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
    writeBatchFile(file, { lookEvery: 2 });
    expect((await cli(['batches', 'create', '--from', file], env)).code).toBe(0);
  });

  it('batches edit --from FILE.json, giving a draft a lookEvery of more than 20 looks, refuses it and keeps the rule it had', async () => {
    const { db, env, file } = batchFile({ looks: 4 }, 21);
    expect((await cli(['batches', 'create', '--from', file], env)).code).toBe(0);
    writeBatchFile(file, { lookEvery: 1 });
    const edited = await cli(['batches', 'edit', '1', '--from', file], env);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('gives 21 looks over the 21 pairs');
    expect(JSON.parse(db.prepare('SELECT settings FROM batches').pluck().get() as string).stopping.looks).toBe(4);
  });
});
