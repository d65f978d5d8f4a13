import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { CODES, excludeParticipant, participantIds, prolificSetup, walkFromProlific } from './prolific-helpers.js';

type Setup = Awaited<ReturnType<typeof prolificSetup>>;

const posts = (setup: Setup, path: RegExp) => setup.fake.requests.filter((r) => r.method === 'POST' && path.test(r.path));

/** Publishes the batch on the fake Prolific through the CLI and returns the study. */
async function publish(setup: Setup) {
  const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
  expect(published.stderr).not.toContain('error');
  expect(published.code).toBe(0);
  const study = [...setup.fake.studies.values()][0];
  if (!study) throw new Error('no study created');
  return study;
}

/** Ten participants take the study: six complete, one is screened out, one declines consent, one withdraws, one completes and is excluded. */
async function tenParticipants(setup: Setup, studyId: string) {
  const ids = participantIds(10);
  const walks = ['complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'screen-out', 'decline', 'withdraw', 'complete'] as const;
  const submissions = [];
  for (const [i, walk] of walks.entries()) {
    const { submission, url } = setup.fake.startSubmission(studyId, ids[i] as string);
    const code = await walkFromProlific(setup, url, walk);
    // A participant who gets a code enters it on Prolific, except the screened-out one, who closes the tab.
    if (code && walk !== 'screen-out') setup.fake.completeSubmission(submission.id, code);
    submissions.push({ submission, walk, code });
  }
  excludeParticipant(setup, ids[9] as string);
  return { ids, submissions };
}

describe('prolific publish, settle and status against the fake Prolific', () => {
  it('prolific publish, settle and status, for ten participants walking the rater pages, approve exactly the completed ones, screen out, ask returns, pay each bonus once and leave no mismatch', async () => {
    const setup = await prolificSetup();
    const dry = await cli(['prolific', 'publish', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('POST studies/');
    expect(dry.stdout).toContain('"reward": 200');
    expect(dry.stdout).toContain("Prolific's cost calculator: 26.67 GBP");
    expect(setup.fake.studies.size).toBe(0);

    const study = await publish(setup);
    expect(study.status).toBe('ACTIVE');
    expect(study.reward).toBe(200);
    // Blinding: the public title is neutral, never the batch's name (which names the models compared).
    expect(study.name).toBe('Compare pairs of short conversations');
    expect(`${study.name} ${study.description}`).not.toMatch(/SCRIPT|AGENTS|blindcheck/);
    expect(study.total_available_places).toBe(10);
    expect(study.external_study_url).toBe(`https://simarena.example/r/${setup.seeded.publicId}?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}`);
    expect(study.completion_codes.map((c) => [c.code, c.actions[0]?.action])).toEqual([
      [CODES.completed, 'MANUALLY_REVIEW'],
      [CODES.screenedOut, 'FIXED_SCREEN_OUT_PAYMENT'],
      [CODES.noConsent, 'REQUEST_RETURN'],
    ]);
    expect(setup.db.prepare("SELECT platform_id FROM batch_platform_links WHERE kind = 'study'").pluck().get()).toBe(study.id);

    const { ids, submissions } = await tenParticipants(setup, study.id);
    expect(submissions.map((s) => s.code)).toEqual([...Array(6).fill(CODES.completed), CODES.screenedOut, CODES.noConsent, null, CODES.completed]);

    const sentBefore = setup.fake.requests.filter((r) => r.method === 'POST').length;
    const planned = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('approve: 6 submission(s)');
    expect(planned.stdout).toContain('bonus: 6 participant(s), 3.00 GBP');
    expect(planned.stdout).toContain(`review: ${ids[9]}`);
    expect(setup.fake.requests.filter((r) => r.method === 'POST').length).toBe(sentBefore);

    const settled = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain('Sent: approved 6, screened out 1, asked to return 1, bonuses paid 6 (3.00 GBP).');
    const status = (n: number) => setup.fake.submissions.get(submissions[n]?.submission.id ?? '');
    for (let i = 0; i < 6; i++) expect(status(i)).toMatchObject({ status: 'APPROVED', bonus_payments: [50] });
    expect(status(6)?.status).toBe('SCREENED OUT');
    expect(status(7)?.return_requested).not.toBeNull();
    expect(status(8)?.return_requested).not.toBeNull();
    expect(status(9)).toMatchObject({ status: 'AWAITING REVIEW', bonus_payments: [] });
    expect([...setup.fake.submissions.values()].some((s) => s.status === 'REJECTED')).toBe(false);
    const ops = listBatchOperations(setup.db, setup.seeded.batchId, 'prolific');
    expect(ops.every((o) => o.state === 'confirmed')).toBe(true);
    expect(ops.map((o) => o.kind)).toEqual(['study_create', 'publish', 'approve', 'screen_out', 'return', 'bonus_create', 'bonus_pay']);

    const again = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.stdout).toContain('Sent: approved 0, screened out 0, asked to return 0, bonuses paid 0 (0.00 GBP).');
    expect([...setup.fake.bonuses.values()].map((b) => b.payCalls)).toEqual([1]);

    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('No mismatch.');
    expect(shown.stdout).toContain('APPROVED 6');

    const closed = await cli(['batches', 'close', String(setup.seeded.batchId), '--on-platform'], setup.cliEnv);
    expect(closed.stdout).toContain('Prolific study is AWAITING REVIEW.');

    const everything = [dry, planned, settled, again, shown, closed].map((r) => r.stdout + r.stderr).join('\n');
    expect(everything).not.toContain(setup.token);
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(setup.dbPath).includes(Buffer.from(setup.token))).toBe(false);
    expect(setup.fake.requests.every((r) => r.authorization === `Token ${setup.token}`)).toBe(true);
  });

  it('prolific settle, for a submission whose participant never reached simarena, reports it and does not approve it; a 500 then success and a 429 with Retry-After approve and pay once', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const [a, b, stranger] = participantIds(3);
    for (const id of [a, b]) {
      const { submission, url } = setup.fake.startSubmission(study.id, id as string);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    }
    const unknown = setup.fake.startSubmission(study.id, stranger as string).submission;
    setup.fake.completeSubmission(unknown.id, CODES.completed);
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, status: 500, after: false });
    setup.fake.faults.push({ method: 'POST', path: /bonus-payments\/$/, status: 429, retryAfter: '1' });
    const settled = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain(`mismatch: ${stranger} (${unknown.id}): submission AWAITING REVIEW whose participant never reached simarena: not approved`);
    expect(setup.fake.submissions.get(unknown.id)?.status).toBe('AWAITING REVIEW');
    expect(posts(setup, /bulk-approve/)).toHaveLength(2);
    expect(posts(setup, /submissions\/bonus-payments\/$/)).toHaveLength(2);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    const approved = [...setup.fake.submissions.values()].filter((s) => s.status === 'APPROVED').map((s) => s.participant_id);
    expect(approved.sort()).toEqual([a, b].sort());
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).toContain('never reached simarena');
  });

  it('prolific publish and settle, for a batch without pay, are refused before any call to Prolific', async () => {
    const setup = await prolificSetup({ settings: { pay: '' }, open: false });
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(1);
    expect(published.stderr).toContain('has no pay Prolific can use');
    const settled = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(settled.code).toBe(1);
    expect(settled.stderr).toContain('has no pay Prolific can use');
    expect(setup.fake.requests).toEqual([]);
  });

  it('prolific publish, when Prolific refuses the token, stops with its message and what to do, and never shows the token', async () => {
    const setup = await prolificSetup();
    const wrong = { ...setup.cliEnv, PROLIFIC_API_TOKEN: `${setup.token}x` };
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], wrong);
    expect(published.code).toBe(1);
    expect(published.stderr).toContain('Prolific refused study create (401): Unauthorized: Invalid token.');
    expect(published.stderr).toContain('Check PROLIFIC_API_TOKEN');
    expect(published.stdout + published.stderr).not.toContain(setup.token);
    const [op] = listBatchOperations(setup.db, setup.seeded.batchId);
    expect(op).toMatchObject({ kind: 'study_create', state: 'failed' });
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(setup.dbPath).includes(Buffer.from(setup.token))).toBe(false);
  });

  it('prolific settle, while another settle of the batch is sending, is refused and sends nothing', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    for (const id of participantIds(2)) {
      const { submission, url } = setup.fake.startSubmission(study.id, id);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    }
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, delayMs: 1_500 });
    const first = cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    await setup.fake.waitFor('POST', /bulk-approve/);
    const second = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Another settle of batch ${setup.seeded.batchId} is sending to Prolific`);
    expect((await first).code).toBe(0);
    expect(posts(setup, /bulk-approve/)).toHaveLength(1);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    expect(setup.db.prepare('SELECT count(*) FROM platform_locks').pluck().get()).toBe(0);
  });

  it('prolific settle, when a bonus pay answers 500 without paying, stops until Prolific has had time to pay, then pays it once', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const { submission, url } = setup.fake.startSubmission(study.id, participantIds(1)[0] as string);
    setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, status: 500 });
    const first = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('whether it was paid is not clear yet. Run settle again after 15 minutes: it is never paid twice.');
    const soon = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(soon.code).toBe(1);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    // Twenty minutes later Prolific still shows no bonus on the submission: the pay was not made, and is sent once more.
    setup.db.prepare("UPDATE platform_operations SET sent_at = '2000-01-01T00:00:00.000Z' WHERE kind = 'bonus_pay'").run();
    const later = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('0 done on Prolific, 1 not done');
    expect(posts(setup, /\/pay\/$/)).toHaveLength(2);
    expect(setup.fake.submissions.get(submission.id)?.bonus_payments).toEqual([50]);
    expect(posts(setup, /submissions\/bonus-payments\/$/)).toHaveLength(1);
  });
});
