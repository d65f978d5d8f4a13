import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { participantIds, prolificSetup, walkFromProlific } from './prolific-helpers.js';

const root = new URL('../../', import.meta.url).pathname;

/** The real `simarena` command in a child process, with its output kept. */
function runChild(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['bin/simarena.js', ...args], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (chunk) => (text += chunk));
  child.stderr?.on('data', (chunk) => (text += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

describe('prolific settle killed midway', () => {
  it('prolific settle, when SIGKILLed while a bulk approve and then a bonus pay are in flight, approves and pays each participant once when run again', async () => {
    const setup = await prolificSetup();
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(0);
    const study = [...setup.fake.studies.values()][0];
    if (!study) throw new Error('no study');
    for (const id of participantIds(3)) {
      const { submission, url } = setup.fake.startSubmission(study.id, id);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    }

    // Prolific carries out the bulk approve but its answer never reaches the settle, which is killed meanwhile.
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, delayMs: 60_000 });
    const first = runChild(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('POST', /bulk-approve/);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(listBatchOperations(setup.db, setup.seeded.batchId).find((o) => o.kind === 'approve')?.state).toBe('sent');

    // The next run reconciles the approval, sets up the bonus and is killed while its pay is in flight.
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, delayMs: 60_000 });
    const second = runChild(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('POST', /\/pay\/$/);
    second.child.kill('SIGKILL');
    await second.exited;
    const pay = listBatchOperations(setup.db, setup.seeded.batchId).find((o) => o.kind === 'bonus_pay');
    expect(pay?.state).toBe('sent');
    expect(pay?.platform_object_id).toBe([...setup.fake.bonuses.keys()][0]);

    const third = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('Checked 1 operation(s) left unconfirmed by an earlier run: 1 done on Prolific, 0 not done.');
    expect(third.stdout).toContain('Sent: approved 0, screened out 0, asked to return 0, bonuses paid 0 (0.00 GBP).');
    const posts = (path: RegExp) => setup.fake.requests.filter((r) => r.method === 'POST' && path.test(r.path)).length;
    expect(posts(/bulk-approve/)).toBe(1);
    expect(posts(/\/pay\/$/)).toBe(1);
    expect([...setup.fake.bonuses.values()].map((b) => b.payCalls)).toEqual([1]);
    expect([...setup.fake.submissions.values()].map((s) => [s.status, s.bonus_payments])).toEqual(Array(3).fill(['APPROVED', [50]]));
    expect(listBatchOperations(setup.db, setup.seeded.batchId).every((o) => o.state === 'confirmed')).toBe(true);
    expect(first.output() + second.output() + third.stdout + third.stderr).not.toContain(setup.token);
  }, 120_000);
});
