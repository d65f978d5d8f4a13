import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { CODES, excludeWorker, type MturkSetup, mturkSetup, walkFromMturk, workerIds } from './mturk-helpers.js';

async function publish(setup: MturkSetup) {
  const published = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
  expect(published.stderr).not.toContain('rror');
  expect(published.code).toBe(0);
  const hit = [...setup.fake.hits.values()][0];
  if (!hit) throw new Error('no HIT created');
  return hit;
}

/** Ten workers take the HIT: eight complete, one is screened out by the onboarding, one completes and is excluded. */
async function tenWorkers(setup: MturkSetup, hitId: string) {
  const ids = workerIds(10);
  const walks = ['complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'screen-out', 'complete'] as const;
  const assignments = [];
  for (const [i, walk] of walks.entries()) {
    const { assignment, url } = setup.fake.acceptHit(hitId, ids[i] as string);
    const code = await walkFromMturk(setup, url, walk);
    assignments.push({ assignment, code });
  }
  excludeWorker(setup, ids[9] as string);
  return { ids, assignments };
}

describe('mturk publish, settle and status against the fake MTurk', () => {
  it('mturk publish, settle and status, for ten workers walking the rater pages from the HIT, create the HIT with its ExternalQuestion, approve the completed ones, pay each bonus once and leave the screened-out and excluded untouched', async () => {
    const setup = await mturkSetup();
    const dry = await cli(['mturk', 'publish', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('CreateHITType');
    expect(dry.stdout).toContain('"Reward": "2.00"');
    expect(dry.stdout).toContain("MTurk's fees: 8.00 USD");
    expect(dry.stdout).toContain('total 28.00 USD before bonuses');
    expect(dry.stdout).toContain('Account balance on MTurk: 10000.00 USD.');
    expect(setup.fake.calls('CreateHITType') + setup.fake.calls('CreateHITWithHITType')).toBe(0);

    const hit = await publish(setup);
    expect(hit.Question).toContain(`<ExternalURL>https://simarena.example/r/${setup.seeded.publicId}</ExternalURL>`);
    expect(hit.Question).toContain('<FrameHeight>800</FrameHeight>');
    expect(hit).toMatchObject({ MaxAssignments: 10, Reward: '2.00', AssignmentDurationInSeconds: 3600, AutoApprovalDelayInSeconds: 72 * 3600 });
    expect(hit.Expiration - hit.CreationTime).toBe(3 * 86_400);
    expect(hit.QualificationRequirements).toEqual([
      { QualificationTypeId: '000000000000000000L0', Comparator: 'GreaterThanOrEqualTo', IntegerValues: [98], ActionsGuarded: 'Accept' },
      { QualificationTypeId: '00000000000000000071', Comparator: 'In', LocaleValues: [{ Country: 'US' }, { Country: 'GB' }], ActionsGuarded: 'Accept' },
    ]);
    expect(setup.db.prepare("SELECT platform_id FROM batch_platform_links WHERE platform = 'mturk' AND kind = 'hit'").pluck().all()).toEqual([hit.HITId]);
    // Publishing again creates nothing more.
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    expect(setup.fake.hits.size).toBe(1);

    const { ids, assignments } = await tenWorkers(setup, hit.HITId);
    expect(assignments.map((a) => a.code)).toEqual([...Array(8).fill(CODES.completed), CODES.screenedOut, CODES.completed]);

    const status = await cli(['mturk', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('MTurk assignments: Submitted 10.');
    expect(status.stdout).toContain('simarena outcomes: completed 9, screened out 1.');
    expect(status.stdout).toContain('No mismatch.');

    const planned = await cli(['mturk', 'settle', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('approve: 8 assignment(s)');
    expect(planned.stdout).toContain('bonus: 8 worker(s), 4.00 USD');
    expect(planned.stdout).toContain(`review: ${ids[8]}`);
    expect(planned.stdout).toContain(`review: ${ids[9]}`);
    expect(setup.fake.calls('ApproveAssignment') + setup.fake.calls('SendBonus')).toBe(0);

    const settled = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain('Sent: approved 8, bonuses paid 8 (4.00 USD).');
    const statusOf = (i: number) => setup.fake.assignments.get(assignments[i]?.assignment.AssignmentId ?? '')?.AssignmentStatus;
    for (let i = 0; i < 8; i++) expect(statusOf(i)).toBe('Approved');
    expect([statusOf(8), statusOf(9)]).toEqual(['Submitted', 'Submitted']);
    expect(setup.fake.calls('RejectAssignment')).toBe(0);
    expect(setup.fake.bonuses.map((b) => [b.WorkerId, b.BonusAmount]).sort()).toEqual(ids.slice(0, 8).map((w) => [w, '0.50']));

    // Run again, and again after MTurk has forgotten the bonus tokens (24 hours): nobody is approved or paid twice.
    const again = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.stdout).toContain('Sent: approved 0, bonuses paid 0 (0.00 USD).');
    setup.fake.advance(25 * 3600);
    const later = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('Sent: approved 0, bonuses paid 0 (0.00 USD).');
    expect(setup.fake.calls('ApproveAssignment')).toBe(8);
    expect(setup.fake.bonuses).toHaveLength(8);
    const ops = listBatchOperations(setup.db, setup.seeded.batchId, 'mturk');
    expect(ops.filter((o) => o.kind === 'bonus').map((o) => [o.state, o.amount_minor, o.currency])).toEqual(Array(8).fill(['confirmed', 50, 'USD']));

    const after = await cli(['mturk', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(after.stdout).toContain('MTurk assignments: Approved 8, Submitted 2.');
    expect(after.stdout).toContain('No mismatch.');

    const closed = await cli(['batches', 'close', String(setup.seeded.batchId), '--on-platform'], setup.cliEnv);
    expect(closed.code).toBe(0);
    expect(closed.stdout).toContain('Expired 1 MTurk HIT(s)');
    expect(() => setup.fake.acceptHit(hit.HITId, 'A999WORKER7Q')).toThrow(/not assignable/);

    // The AWS secrets appear nowhere simarena writes: output, the ledger, the database file.
    const everything = [dry, planned, settled, again, later, status, after, closed].map((r) => r.stdout + r.stderr).join('\n');
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    const file = readFileSync(setup.dbPath);
    for (const secret of [setup.credentials.secretAccessKey, setup.credentials.sessionToken]) {
      expect(everything).not.toContain(secret);
      expect(file.includes(Buffer.from(secret))).toBe(false);
    }
    expect(setup.fake.requests.every((r) => String(r.headers.authorization).startsWith(`AWS4-HMAC-SHA256 Credential=${setup.credentials.accessKeyId}/`))).toBe(true);
  }, 120_000);
});
