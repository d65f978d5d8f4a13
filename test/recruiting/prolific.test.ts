import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import type { FakeSubmission } from '../helpers/fake-prolific.js';
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
    expect(study.completion_codes.map((c) => [c.code, c.code_type, c.actor, c.actions[0]?.action])).toEqual([
      [CODES.completed, 'COMPLETED', 'participant', 'MANUALLY_REVIEW'],
      [CODES.screenedOut, 'FIXED_SCREENOUT', 'participant', 'FIXED_SCREEN_OUT_PAYMENT'],
      [CODES.noConsent, 'NO_CONSENT', 'participant', 'REQUEST_RETURN'],
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
    expect(settled.stdout).toContain('Sent: approved 6, asked to return 1, bonuses paid 6 (3.00 GBP).');
    // Prolific took the bulk approve and the pay (a JSON string each) and does them afterwards.
    expect(settled.stdout).toContain('in flight: 6 submission(s) sent for approval that Prolific does not show APPROVED yet');
    expect(settled.stdout).toMatch(/in flight: bonus payment [0-9a-f]+ \(6 participant\(s\), 3\.00 GBP\) taken by Prolific at .*; shown on 0 of 6/);
    const status = (n: number) => setup.fake.submissions.get(submissions[n]?.submission.id ?? '');
    expect(status(0)).toMatchObject({ status: 'AWAITING REVIEW', bonus_payments: [] });
    setup.fake.process();
    for (let i = 0; i < 6; i++) expect(status(i)).toMatchObject({ status: 'APPROVED', bonus_payments: [50] });
    // The screened-out one closed the tab: Prolific screens out only on their own code, so they are left for review.
    expect(status(6)?.status).toBe('ACTIVE');
    expect(settled.stdout).toContain(`review: ${ids[6]} (${status(6)?.id}): screened out`);
    expect(settled.stdout).toContain(`enters the screen-out code ${CODES.screenedOut} themselves, and the submission is ACTIVE`);
    expect(status(7)?.return_requested).not.toBeNull();
    expect(status(8)?.return_requested).not.toBeNull();
    expect(status(9)).toMatchObject({ status: 'AWAITING REVIEW', bonus_payments: [] });
    expect([...setup.fake.submissions.values()].some((s) => s.status === 'REJECTED')).toBe(false);
    expect(setup.fake.requests.filter((r) => /\/transition\/$/.test(r.path) && r.path.includes('/submissions/'))).toEqual([]);
    const ops = listBatchOperations(setup.db, setup.seeded.batchId, 'prolific');
    expect(ops.every((o) => o.state === 'confirmed')).toBe(true);
    expect(ops.map((o) => o.kind)).toEqual(['study_create', 'publish', 'approve', 'return', 'bonus_create', 'bonus_pay']);

    const again = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.stdout).toContain('Sent: approved 0, asked to return 0, bonuses paid 0 (0.00 GBP).');
    expect(again.stdout).not.toContain('in flight');
    expect([...setup.fake.bonuses.values()].map((b) => b.payCalls)).toEqual([1]);

    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('No mismatch.');
    expect(shown.stdout).toContain('APPROVED 6');
    // Every submission left awaiting review, with the day Prolific approves it itself: the one who declined consent
    // (asked to return by the code, not returned) and the excluded one.
    expect(shown.stdout).toContain("Awaiting review, approved by Prolific itself (full reward) unless decided before (Prolific's 21-day rule):");
    expect(shown.stdout).toMatch(new RegExp(`\\d{4}-\\d\\d-\\d\\d 00:00 UTC: ${ids[7]} \\(${status(7)?.id}\\): declined consent.*asked to return on .* and not returned yet`));
    expect(shown.stdout).toMatch(new RegExp(`00:00 UTC: ${ids[9]} \\(${status(9)?.id}\\)`));

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
    expect(posts(setup, /bulk-approve/)).toHaveLength(2);
    expect(posts(setup, /submissions\/bonus-payments\/$/)).toHaveLength(2);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    setup.fake.process();
    expect(setup.fake.submissions.get(unknown.id)?.status).toBe('AWAITING REVIEW');
    const approved = [...setup.fake.submissions.values()].filter((s) => s.status === 'APPROVED').map((s) => s.participant_id);
    expect(approved.sort()).toEqual([a, b].sort());
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).toContain('never reached simarena');
    expect(shown.stdout).toMatch(new RegExp(`00:00 UTC: ${stranger} \\(${unknown.id}\\): submission AWAITING REVIEW whose participant never reached simarena`));
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
    // The workspace's currency is read first (issue 50, item 7): the refusal comes before anything is created.
    expect(published.stderr).toContain('Prolific refused (401): Unauthorized: Invalid token.');
    expect(published.stderr).toContain('Check PROLIFIC_API_TOKEN');
    expect(published.stdout + published.stderr).not.toContain(setup.token);
    expect(listBatchOperations(setup.db, setup.seeded.batchId)).toEqual([]);
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

  it('prolific settle, when its bulk approve and pay are answered 202 with an empty body and 200 with an object, counts each as sent once and confirms them from Prolific afterwards', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const { submission, url } = setup.fake.startSubmission(study.id, participantIds(1)[0] as string);
    setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    setup.fake.faults.push({ method: 'POST', path: /bulk-approve/, status: 202, rawBody: '', after: true });
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, status: 200, body: { message: 'ok' }, after: true });
    const settled = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.stderr).not.toContain('unexpected answer');
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain('Sent: approved 1, asked to return 0, bonuses paid 1 (0.50 GBP).');
    expect(posts(setup, /bulk-approve/)).toHaveLength(1);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    const ops = listBatchOperations(setup.db, setup.seeded.batchId, 'prolific');
    expect(ops.filter((o) => o.kind === 'approve' || o.kind === 'bonus_pay').map((o) => [o.kind, o.state, o.attempts])).toEqual([
      ['approve', 'confirmed', 1],
      ['bonus_pay', 'confirmed', 1],
    ]);
    setup.fake.process();
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).not.toContain('in flight');
    expect(setup.fake.submissions.get(submission.id)).toMatchObject({ status: 'APPROVED', bonus_payments: [50] });
    expect(setup.db.prepare('SELECT count(*) FROM platform_operation_effects').pluck().get()).toBe(1);
  });

  it('prolific settle, when Prolific takes a bulk approve but leaves a submission awaiting review, counts it done only once APPROVED and approves it again on the next run; status names it in flight', async () => {
    const setup = await prolificSetup({ fake: { processingWhileQueued: true } });
    const study = await publish(setup);
    const subs = [];
    for (const id of participantIds(2)) {
      const { submission, url } = setup.fake.startSubmission(study.id, id);
      setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
      subs.push(submission);
    }
    const [kept, dropped] = subs as [FakeSubmission, FakeSubmission];
    expect((await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv)).stdout).toContain('Sent: approved 2');
    // Queued on Prolific: PROCESSING, neither approved again nor counted done.
    expect(dropped.status).toBe('PROCESSING');
    const during = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(during.stdout).toContain('approve: 0 submission(s)');
    expect(during.stdout).toContain('approval in progress on Prolific (PROCESSING): 2');
    setup.fake.dropFromApproval(dropped.id);
    setup.fake.process();
    expect([kept.status, dropped.status]).toEqual(['APPROVED', 'AWAITING REVIEW']);
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).toContain('in flight: 1 submission(s) sent for approval that Prolific does not show APPROVED yet');
    const again = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.stdout).toContain('already done: 1');
    expect(again.stdout).toContain('Sent: approved 1, asked to return 0, bonuses paid 0');
    const approveBodies = posts(setup, /bulk-approve/).map((r) => [...(r.body as { submission_ids: string[] }).submission_ids].sort());
    expect(approveBodies).toEqual([[kept.id, dropped.id].sort(), [dropped.id]]);
    setup.fake.process();
    expect(dropped.status).toBe('APPROVED');
    expect(setup.fake.payments.filter((p) => p.kind === 'reward').map((p) => p.participantId).sort()).toEqual(participantIds(2).sort());
    expect((await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv)).stdout).not.toContain('in flight');
  });

  it('prolific settle, when a bonus pay is answered 500 and not made, stops only the bonuses with the bulk id and what Prolific shows, never resends it by itself, and resends it once on --confirm-unpaid, written to the audit log', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const { submission, url } = setup.fake.startSubmission(study.id, participantIds(1)[0] as string);
    setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, status: 500 });
    const first = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    const bulkId = [...setup.fake.bonuses.keys()][0] as string;
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(`The bonus payment ${bulkId} (1 participant(s)) was sent at`);
    expect(first.stderr).toContain('Prolific shows it on 0 of 1 submission(s)');
    expect(first.stderr).toContain(`simarena prolific settle ${setup.seeded.batchId} --confirm-unpaid ${bulkId}`);
    // The approvals ran all the same.
    expect(first.stdout).toContain('Sent: approved 1');
    setup.fake.process();
    expect(submission.status).toBe('APPROVED');
    // However long Prolific shows no bonus, settle does not pay again by itself.
    setup.db.prepare("UPDATE platform_operations SET sent_at = '2000-01-01T00:00:00.000Z' WHERE kind = 'bonus_pay'").run();
    const later = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(later.code).toBe(1);
    expect(later.stderr).toContain(`--confirm-unpaid ${bulkId}`);
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).toContain(`unclear: bonus payment ${bulkId} (1 participant(s), 0.50 GBP) sent at`);
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);

    const wrong = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--confirm-unpaid', 'not-a-bulk-id'], setup.cliEnv);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('No bonus payment not-a-bulk-id was sent for batch');
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    const confirmed = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--confirm-unpaid', bulkId], setup.cliEnv);
    expect(confirmed.stderr).toContain('sending bonus pay (operation 5, try 2)');
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('bonuses paid 1 (0.50 GBP)');
    expect(posts(setup, /\/pay\/$/)).toHaveLength(2);
    const audit = setup.db.prepare("SELECT actor, target_id, details FROM audit_log WHERE action = 'prolific.bonus_confirmed_unpaid'").all() as { actor: string; details: string }[];
    expect(audit).toHaveLength(1);
    expect(audit[0]?.actor).toBe('cli');
    expect(JSON.parse(audit[0]?.details ?? '{}')).toMatchObject({ bulkBonusId: bulkId, shownOn: 0, participants: 1, amountMinor: 50, currency: 'GBP' });
    setup.fake.process();
    expect(submission.bonus_payments).toEqual([50]);
    // Once taken, it is final: another --confirm-unpaid of it is refused.
    const twice = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--confirm-unpaid', bulkId], setup.cliEnv);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('is not one whose answer was lost (it is confirmed)');
    expect(posts(setup, /\/pay\/$/)).toHaveLength(2);
  });

  it('prolific settle, when a bonus pay is made but its answer lost, stops until Prolific shows it paid, then confirms it without paying again; --confirm-unpaid of it is refused', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const { submission, url } = setup.fake.startSubmission(study.id, participantIds(1)[0] as string);
    setup.fake.completeSubmission(submission.id, (await walkFromProlific(setup, url, 'complete')) ?? '');
    setup.fake.faults.push({ method: 'POST', path: /\/pay\/$/, lose: true });
    const first = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(first.code).toBe(1);
    const bulkId = [...setup.fake.bonuses.keys()][0] as string;
    expect(first.stderr).toContain(`The bonus payment ${bulkId}`);
    // Prolific makes the payment in the following minutes.
    setup.fake.process();
    const refused = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--confirm-unpaid', bulkId], setup.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Prolific shows the bonus payment ${bulkId} on 1 of 1 submission(s): it was paid at least in part, so it is not sent again.`);
    const again = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Checked 1 operation(s) left unconfirmed by an earlier run: 1 done on Prolific, 0 not done.');
    expect(posts(setup, /\/pay\/$/)).toHaveLength(1);
    expect(setup.fake.payments.filter((p) => p.kind === 'bonus')).toHaveLength(1);
    expect(submission.bonus_payments).toEqual([50]);
  });

  it('prolific settle, for a screened-out participant who closed the tab and one who entered the screen-out code, never sends COMPLETE, lists the first for review and still approves and pays everyone else', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const [done, tabClosed, entered] = participantIds(3) as [string, string, string];
    const run = async (id: string, walk: 'complete' | 'screen-out', enter: boolean) => {
      const { submission, url } = setup.fake.startSubmission(study.id, id);
      const code = await walkFromProlific(setup, url, walk);
      if (enter) setup.fake.completeSubmission(submission.id, code ?? '');
      return submission;
    };
    const completed = await run(done, 'complete', true);
    const closed = await run(tabClosed, 'screen-out', false);
    const screened = await run(entered, 'screen-out', true);
    // The participant's own code screens them out and Prolific pays the fixed screen-out reward at once.
    expect(screened).toMatchObject({ status: 'SCREENED OUT', bonus_payments: [30] });
    const settled = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(settled.code).toBe(0);
    expect(settled.stdout).toContain(`review: ${tabClosed} (${closed.id}): screened out`);
    expect(setup.fake.requests.filter((r) => r.path.includes('/submissions/') && r.path.endsWith('/transition/'))).toEqual([]);
    setup.fake.process();
    expect(completed).toMatchObject({ status: 'APPROVED', bonus_payments: [50] });
    expect(closed.status).toBe('ACTIVE');
    expect(screened).toMatchObject({ status: 'SCREENED OUT', bonus_payments: [30] });
  });

  it('the fake Prolific, for COMPLETE with the participant-actor screen-out code that earlier settles sent, refuses it as Prolific does', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const { submission } = setup.fake.startSubmission(study.id, participantIds(1)[0] as string);
    const res = await fetch(`${setup.fake.url}submissions/${submission.id}/transition/`, {
      method: 'POST',
      headers: { Authorization: `Token ${setup.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ action: 'COMPLETE', completion_code: CODES.screenedOut }),
    });
    expect(res.status).toBe(400);
    expect(submission.status).toBe('ACTIVE');
  });

  it('prolific publish, for a screen-out payment not below the study reward, is refused before any call to Prolific with both amounts named', async () => {
    // The launch checklist blocks opening such a batch too (issue 50, item 10): it stays a draft.
    const setup = await prolificSetup({ settings: { provider: { kind: 'prolific', completionCodes: CODES, screenOutPay: '2.00' } }, open: false });
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(1);
    expect(published.stderr).toContain("its screen-out payment (provider.screenOutPay, 2.00 GBP) must be below the study's reward (2.00 GBP)");
    expect(setup.fake.requests).toEqual([]);
  });

  it('prolific settle and status, for a participant asked to return who ignores it and submits, keep them on the review list with their day-21 deadline until Prolific approves them itself', async () => {
    const setup = await prolificSetup();
    const study = await publish(setup);
    const [id] = participantIds(1) as [string];
    const { submission, url } = setup.fake.startSubmission(study.id, id);
    expect(await walkFromProlific(setup, url, 'withdraw')).toBeNull();
    const asked = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(asked.stdout).toContain('asked to return 1');
    expect(submission.return_requested).not.toBeNull();
    // They do not return it: they submit on Prolific without a code.
    setup.fake.completeSubmission(submission.id, 'NOCODE');
    const deadline = new Date(Date.UTC(new Date(submission.completed_at ?? '').getUTCFullYear(), new Date(submission.completed_at ?? '').getUTCMonth(), new Date(submission.completed_at ?? '').getUTCDate() + 21));
    const day = `${deadline.toISOString().slice(0, 10)} 00:00 UTC`;
    const again = await cli(['prolific', 'settle', String(setup.seeded.batchId)], setup.cliEnv);
    expect(again.stdout).toContain(`review: ${id} (${submission.id}): withdrew (asked to return the study); asked to return on`);
    expect(again.stdout).toContain(`; Prolific approves it itself from ${day}`);
    expect(again.stdout).toContain('asked to return 0');
    const shown = await cli(['prolific', 'status', String(setup.seeded.batchId)], setup.cliEnv);
    expect(shown.stdout).toContain(`  ${day}: ${id} (${submission.id}): withdrew`);
    // Day 21 passes: Prolific approves it and pays the full reward; settle counts it done.
    setup.fake.advanceDays(21);
    expect(submission.status).toBe('APPROVED');
    expect(setup.fake.payments).toEqual([{ participantId: id, kind: 'reward', cents: 200 }]);
    const after = await cli(['prolific', 'settle', String(setup.seeded.batchId), '--dry-run'], setup.cliEnv);
    expect(after.stdout).toContain('already done: 1');
    expect(after.stdout).not.toContain(`review: ${id}`);
  });
});
