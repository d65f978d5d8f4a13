// `simarena batches open` runs the launch checklist first (issue 14 point 3).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';

function setUp(settings: Record<string, unknown>) {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'cli-run', model: M });
  for (let i = 0; i < 2; i += 1) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M });
  }
  const file = join(tempDir(), 'batch.json');
  writeFileSync(file, JSON.stringify({ name: 'checklist', runs: ['cli-run'], comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]], ...settings }));
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' }, file };
}

describe('simarena batches open and the launch checklist', () => {
  it('simarena batches open, for a Prolific batch without consent, instructions, two codes or pay, exits 1 listing each item with its setting and leaves a draft', async () => {
    const { db, env, file } = setUp({ provider: { kind: 'prolific', completionCodes: { completed: 'C1A2B3C4' } } });
    expect((await cli(['batches', 'create', '--from', file], env)).code).toBe(0);
    const open = await cli(['batches', 'open', '1'], env);
    expect(open.code).toBe(1);
    const lines = open.stderr.split('\n');
    expect(lines.filter((l) => l.startsWith('blocking: ')).map((l) => /\(setting: ([^)]+)\)$/.exec(l)?.[1])).toEqual([
      'consent',
      'instructions',
      'provider.completionCodes.screenedOut',
      'pay',
    ]);
    expect(open.stderr).toContain('Missing for Prolific: screenedOut, noConsent.');
    expect(lines.at(-1)).toBe('error: Batch 1 was not opened: fix the blocking items of the launch checklist above.');
    expect(open.stdout).toBe('');
    expect(db.prepare('SELECT state FROM batches WHERE id = 1').pluck().get()).toBe('draft');
  });

  it('simarena batches open, for a plain-link batch with consent and instructions but pay under the floor, opens it and prints the warnings', async () => {
    const { db, env, file } = setUp({ consent: 'You agree.', instructions: 'Choose one.', pay: '£1.00', estimatedMinutes: 30 });
    await cli(['batches', 'create', '--from', file], env);
    const open = await cli(['batches', 'open', '1'], { ...env, MIN_PAY_PER_HOUR: '7.50' });
    expect(open).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
    expect(open.stderr.split('\n')).toEqual([
      'warning: Completion codes — No completion code: raters finish without a code to show (fine for volunteers; set one if they must prove completion). (setting: provider.completionCodes.completed)',
      'warning: Pay per hour — £2.00 per hour at 30 minutes is below the floor of £7.50 per hour (MIN_PAY_PER_HOUR). (setting: pay)',
      // A plain link's per-address limit, said before it opens (issue 49).
      'note: One internet address may have 5 raters working at once and start 20 in 60 minutes: colleagues behind one office network share an address, and the next one is told so before consenting (raise addressLimits for such a pilot).',
    ]);
    expect(db.prepare('SELECT state FROM batches WHERE id = 1').pluck().get()).toBe('open');
  });
});
