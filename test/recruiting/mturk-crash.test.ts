import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { mturkSetup, walkFromMturk, workerIds } from './mturk-helpers.js';

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

describe('mturk settle killed midway', () => {
  it('mturk settle, when SIGKILLed while an approval and then a bonus are in flight and run again after MTurk forgot the bonus token (24 h), approves and pays each worker once', async () => {
    const setup = await mturkSetup();
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    const hit = [...setup.fake.hits.values()][0];
    if (!hit) throw new Error('no HIT');
    for (const id of workerIds(3)) {
      const { url } = setup.fake.acceptHit(hit.HITId, id);
      await walkFromMturk(setup, url, 'complete');
    }

    // MTurk approves, but its answer never reaches the settle, which is killed meanwhile.
    setup.fake.faults.push({ operation: 'ApproveAssignment', delayMs: 60_000 });
    const first = runChild(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('ApproveAssignment');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').find((o) => o.kind === 'approve')?.state).toBe('sent');

    // The next run reconciles the approval, approves the others and is killed while MTurk pays the first bonus.
    setup.fake.faults.push({ operation: 'SendBonus', delayMs: 60_000 });
    const second = runChild(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('SendBonus');
    second.child.kill('SIGKILL');
    await second.exited;
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').find((o) => o.kind === 'bonus')?.state).toBe('sent');
    expect(setup.fake.bonuses).toHaveLength(1);

    // A day later MTurk no longer remembers the token: only ListBonusPayments keeps the bonus from being paid again.
    setup.fake.advance(25 * 3600);
    const third = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('Checked 1 operation(s) left unconfirmed by an earlier run: 1 done on MTurk, 0 not done.');
    expect(third.stdout).toContain('Sent: approved 0, bonuses paid 2 (1.00 USD).');
    expect(setup.fake.calls('ApproveAssignment')).toBe(3);
    expect(setup.fake.calls('SendBonus')).toBe(3);
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(3));
    expect([...setup.fake.assignments.values()].every((a) => a.AssignmentStatus === 'Approved')).toBe(true);
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').every((o) => o.state === 'confirmed')).toBe(true);
    const output = first.output() + second.output() + third.stdout + third.stderr;
    expect(output).not.toContain(setup.credentials.secretAccessKey);
    expect(output).not.toContain(setup.credentials.sessionToken);
  }, 120_000);

  it('mturk settle, while another settle of the batch has held the lock for over an hour and is still alive, is refused and pays nobody twice', async () => {
    const setup = await mturkSetup();
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    const hit = [...setup.fake.hits.values()][0];
    if (!hit) throw new Error('no HIT');
    for (const id of workerIds(2)) await walkFromMturk(setup, setup.fake.acceptHit(hit.HITId, id).url, 'complete');
    setup.fake.faults.push({ operation: 'ApproveAssignment', delayMs: 6_000 });
    const first = runChild(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('ApproveAssignment');
    setup.db.prepare('UPDATE platform_locks SET acquired_at = ?').run(new Date(Date.now() - 2 * 3600_000).toISOString());
    const second = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Another settle of batch ${setup.seeded.batchId} is sending to MTurk`);
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('Sent: approved 2, bonuses paid 2 (1.00 USD).');
    expect(setup.fake.calls('ApproveAssignment')).toBe(2);
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(2));
    expect(setup.db.prepare('SELECT count(*) FROM platform_locks').pluck().get()).toBe(0);
  }, 120_000);

  it('mturk publish and settle, with a HIT whose answer is lost, a bonus taken in flight and refused on retry, a settle SIGKILLed while paying and another a day later, pay each worker once, every bonus, and create no HIT twice', async () => {
    const setup = await mturkSetup({ settings: { mturk: { hits: 2 } } });
    // MTurk creates the first HIT but the connection drops before its answer: publish finds it by its mark.
    setup.fake.faults.push({ operation: 'CreateHITWithHITType', drop: true, after: true });
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    expect(setup.fake.hits.size).toBe(2);
    const hit = [...setup.fake.hits.values()][0];
    if (!hit) throw new Error('no HIT');
    for (const id of workerIds(4)) await walkFromMturk(setup, setup.fake.acceptHit(hit.HITId, id).url, 'complete');

    // The first bonus is taken by MTurk while its connection drops, and its retry is refused as already processed;
    // the settle goes on, and is killed while MTurk pays the second bonus.
    setup.fake.faults.push({ operation: 'SendBonus', inFlight: true }, { operation: 'SendBonus' }, { operation: 'SendBonus', delayMs: 60_000 });
    const first = runChild(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    for (let i = 0; i < 600 && setup.fake.calls('SendBonus') < 3; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(setup.fake.calls('SendBonus')).toBe(3);
    first.child.kill('SIGKILL');
    await first.exited;
    setup.fake.completeInFlight();
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(2));

    // A day later MTurk has forgotten every token: only its lists keep anything from being done twice.
    setup.fake.advance(25 * 3600);
    const later = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('Checked 2 operation(s) left unconfirmed by an earlier run: 2 done on MTurk, 0 not done.');
    expect(later.stdout).toContain('Sent: approved 0, bonuses paid 2 (1.00 USD).');
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    expect((await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv)).stdout).toContain('Sent: approved 0, bonuses paid 0 (0.00 USD).');
    expect(setup.fake.hits.size).toBe(2);
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(4));
    expect([...setup.fake.assignments.values()].map((a) => a.AssignmentStatus)).toEqual(Array(4).fill('Approved'));
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').every((o) => o.state === 'confirmed')).toBe(true);
    // Each paid once, from $10,000: four $2.00 rewards + 40% (HITs of 10 assignments) and four $0.50 bonuses + 20%.
    expect(setup.fake.balanceCents()).toBe(1_000_000 - 4 * 280 - 4 * 60);
  }, 180_000);
});
