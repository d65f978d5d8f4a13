import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { mturkSetup, publishedWithWorkers, workerIds } from './mturk-helpers.js';

describe('mturk settle when MTurk fails, throttles or refuses', () => {
  it('mturk settle, when MTurk answers 500 before and after approving and throttles a bonus and a read, approves and pays each worker once', async () => {
    const setup = await mturkSetup();
    const { hit, assignments } = await publishedWithWorkers(setup, 3);
    const stranger = setup.fake.acceptHit(hit.HITId, 'A0STRANGER99').assignment;
    setup.fake.submitAssignment(stranger.AssignmentId);
    setup.fake.faults.push(
      { operation: 'ApproveAssignment', status: 500 },
      { operation: 'ApproveAssignment', status: 500, after: true },
      { operation: 'SendBonus', status: 400, type: 'ThrottlingException', message: 'Rate exceeded' },
      { operation: 'ListAssignmentsForHIT', status: 400, type: 'ThrottlingException', message: 'Rate exceeded' },
    );
    const settled = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.stderr).not.toContain('rror:');
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain(`mismatch: A0STRANGER99 (${stranger.AssignmentId}): assignment Submitted whose worker never reached simarena: not approved`);
    // The first 500 did nothing and was sent again; the second came after MTurk approved, which GetAssignment showed.
    expect(setup.fake.calls('ApproveAssignment')).toBe(4);
    expect(setup.fake.calls('SendBonus')).toBe(4);
    expect(setup.fake.calls('ListAssignmentsForHIT')).toBeGreaterThanOrEqual(2);
    expect(assignments.map((a) => setup.fake.assignments.get(a.AssignmentId)?.AssignmentStatus)).toEqual(['Approved', 'Approved', 'Approved']);
    expect(setup.fake.assignments.get(stranger.AssignmentId)?.AssignmentStatus).toBe('Submitted');
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(3));
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').every((o) => o.state === 'confirmed')).toBe(true);
  }, 60_000);

  it('mturk settle, when MTurk approves the assignments by itself (their auto-approval delay runs out) between listing and approving them, takes them as approved and pays each bonus once', async () => {
    const setup = await mturkSetup();
    const { assignments } = await publishedWithWorkers(setup, 2);
    // autoApprovalDelayHours is 72 by default: MTurk's clock passes it right after settle has listed the assignments.
    setup.fake.faults.push({ operation: 'ListAssignmentsForHIT', then: () => setup.fake.advance(73 * 3600) });
    const settled = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.stderr).not.toContain('rror');
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain('Sent: approved 2, bonuses paid 2 (1.00 USD).');
    expect(assignments.map((a) => setup.fake.assignments.get(a.AssignmentId)?.RequesterFeedback)).toEqual([null, null]);
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(2));
    const approvals = listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').filter((o) => o.kind === 'approve');
    expect(approvals.map((o) => [o.state, JSON.parse(o.answer ?? '{}')])).toEqual(Array(2).fill(['confirmed', { status: 'Approved', byMturk: true }]));
  }, 60_000);

  it('mturk publish and settle, for a batch without pay in dollars, are refused before any call to MTurk', async () => {
    for (const pay of ['', '£2.00']) {
      const setup = await mturkSetup({ settings: { pay }, open: false });
      const published = await cli(['mturk', 'publish', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
      expect(published.code).toBe(1);
      expect(published.stderr).toContain('has no pay MTurk can use');
      const settled = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
      expect(settled.code).toBe(1);
      expect(settled.stderr).toContain('has no pay MTurk can use');
      expect(setup.fake.requests).toEqual([]);
    }
  });

  it('mturk publish, when MTurk refuses the credentials, stops with its message and never shows the secret', async () => {
    const setup = await mturkSetup();
    const wrong = { ...setup.cliEnv, AWS_ACCESS_KEY_ID: 'AKIAWRONGKEY0000' };
    const published = await cli(['mturk', 'publish', String(setup.seeded.batchId)], wrong);
    expect(published.code).toBe(1);
    expect(published.stderr).toContain('The security token included in the request is invalid.');
    expect(published.stdout + published.stderr).not.toContain(setup.credentials.secretAccessKey);
    expect(listBatchOperations(setup.db, setup.seeded.batchId)[0]).toMatchObject({ kind: 'hit_type_create', state: 'failed' });
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(setup.dbPath).includes(Buffer.from(setup.credentials.secretAccessKey))).toBe(false);
  });
});
