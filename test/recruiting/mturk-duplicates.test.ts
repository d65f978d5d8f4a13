import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { type MturkSetup, mturkSetup, publishedWithWorkers, workerIds } from './mturk-helpers.js';

// MTurk refuses a repeated UniqueRequestToken for 24 hours and forgets it after (fake-mturk.ts, RequestTokens): a
// refusal as a duplicate says the write may be done, never that it was not; and past the 24 hours only MTurk's own
// lists (ListBonusPayments, ListHITs) keep a write from being done twice.

const DAY_AND_AN_HOUR = 25 * 3600;

/** A copy of the database as it is now (a backup to restore later), and the CLI's environment pointed at it. */
function backup(setup: MturkSetup): Record<string, string> {
  const path = join(mkdtempSync(join(tmpdir(), 'simarena-backup-')), 'restored.db');
  setup.db.exec(`VACUUM INTO '${path}'`);
  return { ...setup.cliEnv, DATABASE_PATH: path };
}

const opsOf = (env: Record<string, string>, batchId: number) => {
  const db = openDatabase(env.DATABASE_PATH as string);
  try {
    return listBatchOperations(db, batchId, 'mturk');
  } finally {
    db.close();
  }
};

describe('mturk settle and publish when MTurk refuses a repeat as a duplicate', () => {
  it('mturk settle, when MTurk takes a bonus whose answer is lost and refuses its retry as already processed, holds the worker and a day later confirms the bonus from ListBonusPayments, paying nobody twice', async () => {
    const setup = await mturkSetup();
    await publishedWithWorkers(setup, 2);
    setup.fake.faults.push({ operation: 'SendBonus', inFlight: true });
    const first = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(first.stdout).toContain('Sent: approved 2, bonuses paid 1 (0.50 USD).');
    expect(first.stdout).toContain(`held: ${workerIds(1)[0]}: MTurk refused the bonus again as already sent, but does not list it yet`);
    const held = listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').find((o) => o.kind === 'bonus' && o.participant_id === workerIds(1)[0]);
    expect(held?.state).toBe('unknown');
    // MTurk carries the bonus out; a day later it has forgotten the token, and only ListBonusPayments knows.
    setup.fake.completeInFlight();
    setup.fake.advance(DAY_AND_AN_HOUR);
    const later = await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('Checked 1 operation(s) left unconfirmed by an earlier run: 1 done on MTurk, 0 not done.');
    expect(later.stdout).toContain('Sent: approved 0, bonuses paid 0 (0.00 USD).');
    expect(setup.fake.bonuses.map((b) => b.WorkerId).sort()).toEqual(workerIds(2));
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').every((o) => o.state === 'confirmed')).toBe(true);
  }, 120_000);

  it('mturk settle, on a database restored from before the bonuses were recorded and run after MTurk forgot their tokens, finds each bonus in ListBonusPayments and pays nobody twice', async () => {
    const setup = await mturkSetup();
    await publishedWithWorkers(setup, 3);
    const restored = backup(setup);
    expect((await cli(['mturk', 'settle', String(setup.seeded.batchId)], setup.cliEnv)).stdout).toContain('bonuses paid 3 (1.50 USD)');
    setup.fake.advance(DAY_AND_AN_HOUR);
    const dry = await cli(['mturk', 'settle', String(setup.seeded.batchId), '--dry-run'], restored);
    expect(dry.stdout).toContain('bonus: 0 worker(s)');
    expect(dry.stdout).toContain('bonus already paid on MTurk (found by its ref in ListBonusPayments), recorded without sending: 3');
    const again = await cli(['mturk', 'settle', String(setup.seeded.batchId)], restored);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Sent: approved 0, bonuses paid 0 (0.00 USD).');
    expect(setup.fake.calls('SendBonus')).toBe(3);
    expect(setup.fake.bonuses).toHaveLength(3);
    const bonuses = opsOf(restored, setup.seeded.batchId).filter((o) => o.kind === 'bonus');
    expect(bonuses.map((o) => [o.participant_id, o.state, o.attempts])).toEqual(workerIds(3).map((w) => [w, 'confirmed', 0]));
  }, 120_000);

  it('mturk publish, when MTurk takes a HIT whose answer is lost and refuses its retry as HitAlreadyExists, stops without a second HIT and a day later finds the HIT with ListHITs', async () => {
    const setup = await mturkSetup({ settings: { mturk: { hits: 2 } } });
    setup.fake.faults.push({ operation: 'CreateHITWithHITType', inFlight: true });
    const first = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('MTurk refused to create HIT 1 again as already done, but does not list it yet');
    setup.fake.completeInFlight();
    setup.fake.advance(DAY_AND_AN_HOUR);
    const later = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.stderr).not.toContain('rror');
    expect(later.code).toBe(0);
    expect([...setup.fake.hits.values()].map((h) => h.RequesterAnnotation).sort()).toEqual([1, 2].map((i) => `simarena-${setup.seeded.publicId}-hit-${i}`));
    expect(setup.db.prepare("SELECT platform_id FROM batch_platform_links WHERE kind = 'hit' ORDER BY platform_id").pluck().all()).toEqual([...setup.fake.hits.keys()].sort());
  }, 120_000);

  it('mturk publish, on a database restored from before the HITs were recorded and run after MTurk forgot their tokens, finds them by their RequesterAnnotation and creates none again', async () => {
    const setup = await mturkSetup({ settings: { mturk: { hits: 2 } } });
    const restored = backup(setup);
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    setup.fake.advance(DAY_AND_AN_HOUR);
    const again = await cli(['mturk', 'publish', String(setup.seeded.batchId)], restored);
    expect(again.code).toBe(0);
    expect(setup.fake.hits.size).toBe(2);
    expect(setup.fake.calls('CreateHITWithHITType')).toBe(2);
    expect(opsOf(restored, setup.seeded.batchId).filter((o) => o.kind === 'hit_create').map((o) => [o.state, o.platform_object_id])).toEqual([...setup.fake.hits.keys()].map((id) => ['confirmed', id]));
  }, 120_000);
});
