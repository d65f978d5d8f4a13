import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';

function batchFile(comparisons: [string, string][], stopping: unknown) {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'cli-run', model: M, modes: ['SCRIPT', 'AGENTS', 'MINDREADERS'] });
  const scenario = makeScenario(db);
  for (const mode of ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const) makeDialogue(db, { runId, scenario, mode, model: M });
  const file = join(tempDir(), 'batch.json');
  writeFileSync(file, JSON.stringify({ name: 'sequential', runs: ['cli-run'], comparisons, stopping }));
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' }, file };
}

const TWO: [string, string][] = [
  [`SCRIPT:${M}`, `AGENTS:${M}`],
  [`AGENTS:${M}`, `MINDREADERS:${M}`],
];

describe('simarena batches create with stopping.reallocate', () => {
  it('batches create --from FILE.json, with reallocate over two comparisons, stores it', async () => {
    const { db, env, file } = batchFile(TWO, { looks: 4, reallocate: true });
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const settings = JSON.parse(db.prepare('SELECT settings FROM batches').pluck().get() as string);
    expect(settings.stopping).toMatchObject({ looks: 4, reallocate: true });
  });

  it.each([
    [TWO, { looks: 4, reallocate: 'yes' }, 'stopping.reallocate: reallocate must be true or false'],
    [TWO.slice(0, 1), { looks: 4, reallocate: true }, 'stopping.reallocate: needs at least two comparisons'],
  ])('batches create --from FILE.json, with comparisons %j and stopping %j, refuses it in one line naming the problem', async (comparisons, stopping, message) => {
    const { db, env, file } = batchFile(comparisons, stopping);
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(message);
    expect(created.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
  });
});
