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
  it('prolific settle, SIGKILLed while a bulk approve and then a bonus pay are in flight, with an answer lost, string bodies and approvals made later, ends with everyone completed APPROVED, paid once and every bonus paid', async () => {
    const setup = await prolificSetup();
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(0);
    const study = [...setup.fake.studies.values()][0];
    if (!study) throw new Error('no study');
    const ids = participantIds(3);
    const submissions = [];
    for (const id of ids) {
      const { submission, url } = setup.fake.startSubmission(study.id, id);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
      submissions.push(submission);
    }
    const ops = () => listBatchOperations(setup.db, setup.seeded.batchId);
    const posts = (path: RegExp) => setup.fake.requests.filter((r) => r.method === 'POST' && path.test(r.path)).length;

    // Prolific takes the bulk approve (to do later) but its answer never reaches the settle, which is killed meanwhile.
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, delayMs: 60_000 });
    const first = runChild(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('POST', /bulk-approve/);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(ops().find((o) => o.kind === 'approve')?.state).toBe('sent');

    // The next run finds them still awaiting review (Prolific has not done it yet), approves them again (answered with
    // a JSON string), sets up the bonus, and is killed while its pay is in flight.
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, delayMs: 60_000 });
    const second = runChild(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('POST', /\/pay\/$/);
    second.child.kill('SIGKILL');
    await second.exited;
    const pay = ops().find((o) => o.kind === 'bonus_pay');
    expect(pay?.state).toBe('sent');
    expect(pay?.platform_object_id).toBe([...setup.fake.bonuses.keys()][0]);
    expect(ops().filter((o) => o.kind === 'approve').map((o) => o.state)).toEqual(['failed', 'confirmed']);

    // Prolific does what it took, minutes later, but leaves one submission awaiting review.
    const left = submissions[2] as (typeof submissions)[number];
    setup.fake.dropFromApproval(left.id);
    setup.fake.process();
    expect(submissions.map((s) => s.status)).toEqual(['APPROVED', 'APPROVED', 'AWAITING REVIEW']);

    // The pay shows on every submission: confirmed, never sent again. The one left is approved again, and that answer
    // is lost after Prolific took it: read back (still awaiting review, as Prolific approves later) and sent again.
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, lose: true });
    const third = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('Checked 1 operation(s) left unconfirmed by an earlier run: 1 done on Prolific, 0 not done.');
    expect(third.stdout).toContain('Sent: approved 1, asked to return 0, bonuses paid 0 (0.00 GBP).');
    setup.fake.process();

    const last = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(last.code).toBe(0);
    expect(last.stdout).toContain('Sent: approved 0, asked to return 0, bonuses paid 0 (0.00 GBP).');
    expect(last.stdout).not.toContain('in flight');
    expect(posts(/\/pay\/$/)).toBe(1);
    expect([...setup.fake.bonuses.values()].map((b) => b.payCalls)).toEqual([1]);
    expect(submissions.map((s) => [s.status, s.bonus_payments])).toEqual(Array(3).fill(['APPROVED', [50]]));
    // Nobody paid twice: one reward and one bonus each.
    for (const id of ids) expect(setup.fake.payments.filter((p) => p.participantId === id).map((p) => `${p.kind} ${p.cents}`).sort()).toEqual(['bonus 50', 'reward 200']);
    expect(ops().every((o) => o.state === 'confirmed' || o.state === 'failed')).toBe(true);
    expect(first.output() + second.output() + third.stdout + third.stderr + last.stdout + last.stderr).not.toContain(setup.token);
  }, 180_000);
});
