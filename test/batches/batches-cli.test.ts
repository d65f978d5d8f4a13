import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';

function setUp() {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'cli-run', model: M });
  for (let i = 0; i < 2; i += 1) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M, state: i === 1 ? 'failed' : 'complete' });
  }
  const file = join(tempDir(), 'batch.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'SCRIPT vs AGENTS, gpt-4o-mini',
      runs: ['cli-run'],
      comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]],
      provider: { kind: 'prolific', completionCodes: { completed: 'C1A2B3C4', screenedOut: 'S1A2B3C4', noConsent: 'N1A2B3C4' } },
      consent: 'You agree to take part.',
      instructions: 'Choose the more natural conversation.',
      pay: '£2.00',
    }),
  );
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' }, file };
}

describe('simarena batches', () => {
  it('batches create --from FILE.json makes a draft batch and lists the skipped samples; list --json shows it with an id', async () => {
    const { env, file } = setUp();
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created batch 1 \(draft\) with 1 pair\(s\)\.\nSkipped 1 scenario sample\(s\):\n {2}.* sample 0 \[SCRIPT:gpt-4o-mini vs AGENTS:gpt-4o-mini\]: AGENTS:gpt-4o-mini dialogue is failed/);
    const listed = await cli(['batches', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id: 1, name: 'SCRIPT vs AGENTS, gpt-4o-mini', state: 'draft', provider: 'prolific', pairs: 1, judgments: 0 }),
    ]);
    const table = await cli(['batches', 'list'], env);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+PROVIDER/);
  });

  it('batches open, pause, close move the batch through its states and refuse a forbidden move with one line', async () => {
    const { env, file } = setUp();
    await cli(['batches', 'create', '--from', file], env);
    expect(await cli(['batches', 'open', '1'], env)).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
    expect(await cli(['batches', 'pause', '1'], env)).toMatchObject({ code: 0, stdout: 'Batch 1 is paused.' });
    expect(await cli(['batches', 'close', '1'], env)).toMatchObject({ code: 0, stdout: 'Batch 1 is closed.' });
    expect(await cli(['batches', 'open', '1'], env)).toMatchObject({ code: 1, stderr: 'error: Batch 1 is closed; it cannot be moved to open.' });
    expect(await cli(['batches', 'open', 'abc'], env)).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "abc" (see "simarena batches list").' });
  });

  it('batches link ID prints the provider\'s rater URL with the public token, never the internal id', async () => {
    const { env, file } = setUp();
    await cli(['batches', 'create', '--from', file], env);
    await cli(['batches', 'open', '1'], env);
    const link = await cli(['batches', 'link', '1'], env);
    expect(link.code).toBe(0);
    expect(link.stdout).toMatch(/^https:\/\/rate\.example\.org\/r\/[A-Za-z0-9_-]{20,}\?PROLIFIC_PID=\{\{%PROLIFIC_PID%\}\}&STUDY_ID=\{\{%STUDY_ID%\}\}&SESSION_ID=\{\{%SESSION_ID%\}\}$/);
    expect(await cli(['batches', 'link', '42'], env)).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "42" (see "simarena batches list").' });
  });

  it('batches create, for a comparison no scenario sample has both sides of, exits 1 naming the comparison and the conditions the runs hold, and stores nothing', async () => {
    const { env, file } = setUp();
    const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const typo = join(tempDir(), 'typo.json');
    writeFileSync(typo, JSON.stringify({ ...settings, comparisons: [['SCRIPT:gpt-4o', `AGENTS:${M}`]] }));
    const none = await cli(['batches', 'create', '--from', typo], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: No pairs \(\d+ sample\(s\) skipped\): no scenario sample has a completed dialogue in both conditions of SCRIPT:gpt-4o vs AGENTS:gpt-4o-mini\. The runs cli-run hold these conditions: /);
    expect(none.stderr).toContain(`SCRIPT:${M} (2 completed)`);
    expect(none.stderr).toContain(`AGENTS:${M} (1 completed)`);

    const oneEmpty = join(tempDir(), 'one-empty.json');
    writeFileSync(oneEmpty, JSON.stringify({ ...settings, comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`], [`MINDREADERS:${M}`, `AGENTS:${M}`]] }));
    const some = await cli(['batches', 'create', '--from', oneEmpty], env);
    expect(some.stderr).toMatch(/^error: Some comparisons have no pair: no scenario sample has a completed dialogue in both conditions of MINDREADERS:gpt-4o-mini vs AGENTS:gpt-4o-mini\. The runs cli-run hold these conditions: /);
    expect(JSON.parse((await cli(['batches', 'list', '--json'], env)).stdout)).toEqual([]);
  });

  it('batches create with an invalid file exits 1 with one line naming the field, and stores nothing', async () => {
    const { env } = setUp();
    const bad = join(tempDir(), 'bad.json');
    writeFileSync(bad, JSON.stringify({ name: 'x', runs: ['cli-run'], comparisons: [['SCRIPT', 'AGENTS:m']] }));
    const result = await cli(['batches', 'create', '--from', bad], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: Invalid batch settings: comparisons\.0\.0: must be a condition written MODE:model/);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(JSON.parse((await cli(['batches', 'list', '--json'], env)).stdout)).toEqual([]);
    expect((await cli(['batches', 'create', '--from', '/nonexistent.json'], env)).stderr).toMatch(/^error: \/nonexistent\.json: cannot be read/);
  });

  it('batches create with a file missing a comma exits 1 naming its line and column, not a character offset, and stores nothing', async () => {
    const { env } = setUp();
    const file = join(tempDir(), 'broken.json');
    // The comma after "tour" is missing: V8 says "position 22", an editor shows line 3, column 3.
    writeFileSync(file, '{\n  "name": "tour"\n  "runs": ["cli-run"]\n}\n');
    const result = await cli(['batches', 'create', '--from', file], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: ${file}: is not valid JSON at line 3, column 3: Expected ',' or '}' after property value`);
    writeFileSync(file, '{\n  "name": ');
    expect((await cli(['batches', 'create', '--from', file], env)).stderr).toBe(`error: ${file}: is not valid JSON at line 2, column 11: Unexpected end of JSON input`);
    expect(JSON.parse((await cli(['batches', 'list', '--json'], env)).stdout)).toEqual([]);
  });
});
