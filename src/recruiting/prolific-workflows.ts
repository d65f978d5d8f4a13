import { createHash } from 'node:crypto';
import { type BatchView } from '../batches/batch.commands.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, describeFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import type { Config } from '../config.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { type PlatformDeps, RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { listDecidedParticipants } from './decided-participants.js';
import { PlatformError, withPlatformErrors } from './platform-error.js';
import { checkOperation } from './prolific-reconcile.js';
import { withPlatformLock } from './platform-lock.js';
import { checkStudyLink } from './study-link.js';
import { type OperationDeps, reconcileUnconfirmed, runPlatformOperation } from './platform-operation.js';
import {
  coveredParticipants,
  findProlificStudyId,
  linkBatchToPlatform,
  listBatchOperations,
  listOperationLines,
  type PlatformOperationRow,
} from './platform-operations.queries.js';
import { createProlificClient, type NewStudy, type ProlificClient, type StudyAction } from './prolific-client.js';
import { chunks, formatMinor, majorText, planSettle, prolificReward, prolificStudyRequest, type SettlePlan, matchSubmissions } from './prolific-plan.js';

// `prolific publish`, `status`, `settle` and the study's pause/stop, shared by the CLI and the console. Every request
// that creates, changes or pays goes through runPlatformOperation (recorded before it is sent), and a settle first
// reconciles whatever an earlier run left unconfirmed with Prolific's own state.

/** Submissions per bulk approve request. */
export const APPROVE_CHUNK = 100;
/** Participants per bulk bonus (Prolific's limit on one bulk bonus payment is 200). */
export const BONUS_CHUNK = 200;
export type ProlificDeps = PlatformDeps;

function requireClient(config: Config): ProlificClient {
  const token = config.prolificToken();
  if (!token) throw new RecruitingError('PROLIFIC_API_TOKEN is not set: create a token in Prolific (Settings, "API tokens") and put it in the environment.', 400);
  return createProlificClient({ baseUrl: config.prolificApiUrl, token });
}

function operationDeps(deps: ProlificDeps): OperationDeps {
  return { db: deps.db, clock: deps.clock, secrets: [deps.config.prolificToken() ?? ''], onSend: deps.onSend };
}

const keyHash = (parts: readonly string[]) => createHash('sha256').update([...parts].sort().join('\n')).digest('hex').slice(0, 20);

export type PublishPreview = { studyUrl: string; warnings: string[]; requests: { method: string; path: string; body: unknown }[]; places: number; rewardMinor: number; currency: string; costMinor: number | null; rewardsMinor: number; studyId: string | null };

/** Refuses a batch Prolific cannot be asked to run, before any call: no pay, a failing launch checklist, no code. */
function studyRequestOf(deps: ProlificDeps, batch: BatchView): { study: NewStudy; studyUrl: string; rewardMinor: number; currency: string; places: number } {
  const reward = prolificReward(batch.settings.pay);
  if (!reward) throw new RecruitingError(`Batch ${batch.id} has no pay Prolific can use ("${batch.settings.pay}"): set "pay" to an amount in pounds or dollars, e.g. "£2.50".`, 400);
  if (!batch.settings.provider.completionCodes.completed) throw new RecruitingError(`Batch ${batch.id} has no completion code: set provider.completionCodes.completed.`, 400);
  const minutes = consentTimeOfFullSession(deps.db, batch.id, batch.settings).minutes;
  const failing = blockingFailures(batchLaunchChecklist(deps.db, batch.id, { minutes, minPayPerHour: deps.config.minPayPerHour, publicUrl: deps.config.publicUrl }));
  if (failing.length > 0) throw new RecruitingError(`Batch ${batch.id} is not ready to publish: ${describeFailures(failing).join(' ')}`, 409);
  const places = batch.settings.plannedRaters ?? checkBatchCapacity(deps.db, batch.id).ratersNeeded;
  const studyUrl = raterLinks(batch, deps.config.publicUrl).providerUrl;
  return { study: prolificStudyRequest(batch, { studyUrl, places, minutes, rewardMinor: reward.rewardMinor }), studyUrl, rewardMinor: reward.rewardMinor, currency: reward.currency, places };
}

/**
 * `prolific publish`: creates the study from the batch, publishes it and stores its id on the batch. `dryRun`: the
 * exact requests and the cost (Prolific's cost calculator when a token is set), nothing created or spent.
 */
export function publishOnProlific(deps: ProlificDeps, batchId: number, options: { dryRun: boolean }): Promise<PublishPreview> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'prolific');
    const { study, studyUrl, rewardMinor, currency, places } = studyRequestOf(deps, batch);
    const warnings = checkStudyLink(studyUrl, 'Prolific', options.dryRun);
    const known = findProlificStudyId(deps.db, batchId) ?? null;
    const requests = [
      ...(known ? [] : [{ method: 'POST', path: 'studies/', body: study }]),
      { method: 'POST', path: `studies/${known ?? '<new study id>'}/transition/`, body: { action: 'PUBLISH' } },
    ];
    const token = deps.config.prolificToken();
    if (options.dryRun) {
      const costMinor = token ? await createProlificClient({ baseUrl: deps.config.prolificApiUrl, token }).studyCost(rewardMinor, places).catch(() => null) : null;
      return { studyUrl, warnings, requests, places, rewardMinor, currency, costMinor, rewardsMinor: rewardMinor * places, studyId: known };
    }
    if (batch.state !== 'open') throw new RecruitingError(`Batch ${batchId} is ${batch.state}: open it first (simarena batches open ${batchId}), so raters sent by Prolific find it open.`, 409);
    const client = requireClient(deps.config);
    const ops = operationDeps(deps);
    return withPlatformLock(deps.db, 'prolific', batchId, 'publish', deps.clock, async () => {
      await reconcileUnconfirmed('prolific', batchId, checkOperation(client, deps), ops);
      let studyId = findProlificStudyId(deps.db, batchId) ?? null;
      if (!studyId) {
        const created = await runPlatformOperation(
          {
            operation: { platform: 'prolific', batchId, kind: 'study_create', idempotencyKey: `prolific:batch:${batchId}:study_create`, amountMinor: rewardMinor * places, currency, request: study, actor: deps.actor },
            send: () => client.createStudy(study),
            answerOf: (s) => ({ answer: { id: s.id, status: s.status }, platformObjectId: s.id }),
            check: checkOperation(client, deps),
          },
          ops,
        );
        studyId = created.operation.platform_object_id ?? created.answer?.id ?? null;
        if (!studyId) throw new PlatformError('Prolific created the study but its id is unknown: run publish again (the study is found by its internal name).', 502);
        linkBatchToPlatform(deps.db, { batchId, platform: 'prolific', kind: 'study', platformId: studyId }, deps.clock());
      }
      if ((await client.getStudy(studyId)).status === 'UNPUBLISHED') await transitionStudy(deps, client, batchId, studyId, 'PUBLISH');
      return { studyUrl, warnings, requests, places, rewardMinor, currency, costMinor: null, rewardsMinor: rewardMinor * places, studyId };
    });
  });
}

const STUDY_KINDS = { PUBLISH: 'publish', PAUSE: 'pause', START: 'start', STOP: 'stop' } as const;

async function transitionStudy(deps: ProlificDeps, client: ProlificClient, batchId: number, studyId: string, action: StudyAction): Promise<void> {
  const kind = STUDY_KINDS[action];
  const earlier = listBatchOperations(deps.db, batchId, 'prolific').filter((o) => o.kind === kind && o.state === 'confirmed').length;
  await runPlatformOperation(
    {
      operation: { platform: 'prolific', batchId, kind, idempotencyKey: `prolific:study:${studyId}:${kind}:${earlier + 1}`, platformObjectId: studyId, request: { action }, actor: deps.actor },
      send: () => client.transitionStudy(studyId, action),
      answerOf: (s) => ({ answer: { status: s.status } }),
      check: checkOperation(client, deps),
    },
    operationDeps(deps),
  );
}

/** Pauses, restarts or stops the batch's Prolific study (closing or pausing a batch offers it). */
export function transitionProlificStudy(deps: ProlificDeps, batchId: number, action: 'PAUSE' | 'START' | 'STOP'): Promise<string> {
  return withPlatformErrors(async () => {
    requirePlatformBatch(deps.db, batchId, 'prolific');
    const studyId = findProlificStudyId(deps.db, batchId);
    if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study (publish it with: simarena prolific publish ${batchId}).`, 409);
    const client = requireClient(deps.config);
    return withPlatformLock(deps.db, 'prolific', batchId, `study ${action.toLowerCase()}`, deps.clock, async () => {
      await reconcileUnconfirmed('prolific', batchId, checkOperation(client, deps), operationDeps(deps));
      const study = await client.getStudy(studyId);
      const already = { PAUSE: ['PAUSED'], START: ['ACTIVE'], STOP: ['AWAITING REVIEW', 'COMPLETED'] }[action];
      if (!already.includes(study.status)) await transitionStudy(deps, client, batchId, studyId, action);
      return (await client.getStudy(studyId)).status;
    });
  });
}

export type ProlificStatus = {
  studyId: string;
  state: string;
  places: number | null;
  placesTaken: number | null;
  submissions: Record<string, number>;
  outcomes: Record<string, number>;
  mismatches: ReturnType<typeof matchSubmissions>['mismatches'];
};

/** `prolific status`: the study's state and places, submissions by status next to simarena's outcomes, every mismatch named. */
export function prolificStatus(deps: ProlificDeps, batchId: number): Promise<ProlificStatus> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'prolific');
    const studyId = findProlificStudyId(deps.db, batchId);
    if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study (publish it with: simarena prolific publish ${batchId}).`, 409);
    const client = requireClient(deps.config);
    const [study, submissions, participants] = await Promise.all([client.getStudy(studyId), client.listSubmissions(studyId), listDecidedParticipants(deps.db, batchId, { clock: deps.clock })]);
    const counts = (values: string[]) => values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {});
    const prolificOnes = (participants ?? []).filter((p) => p.provider === 'prolific');
    return {
      studyId,
      state: study.status,
      places: study.total_available_places ?? null,
      placesTaken: study.places_taken ?? null,
      submissions: counts(submissions.map((s) => s.status)),
      outcomes: counts(prolificOnes.map((p) => p.outcome)),
      mismatches: matchSubmissions(prolificOnes, submissions, batch.settings).mismatches,
    };
  });
}

export type SettleResult = { studyId: string; currency: string; plan: SettlePlan; reconciled: { confirmed: number; notDone: number }; sent: { approved: number; screenedOut: number; returned: number; bonusesPaid: number; bonusMinor: number } };

/**
 * `prolific settle`: reconciles what an earlier run left unconfirmed, then plans from simarena's decisions and
 * Prolific's submissions (planSettle) and, unless `dryRun`, approves in bulk, screens out or asks for returns, and
 * pays the bonuses: each bulk bonus set up (its id stored) before it is paid, each paid once.
 */
export function settleOnProlific(deps: ProlificDeps, batchId: number, options: { dryRun: boolean }): Promise<SettleResult> {
  const settle = () => settleUnlocked(deps, batchId, options);
  return withPlatformErrors(() => (options.dryRun ? settle() : withPlatformLock(deps.db, 'prolific', batchId, 'settle', deps.clock, settle)));
}

async function settleUnlocked(deps: ProlificDeps, batchId: number, options: { dryRun: boolean }): Promise<SettleResult> {
  const batch = requirePlatformBatch(deps.db, batchId, 'prolific');
  const reward = prolificReward(batch.settings.pay);
  if (!reward) throw new RecruitingError(`Batch ${batchId} has no pay Prolific can use ("${batch.settings.pay}"): set "pay", e.g. "£2.50".`, 400);
  const studyId = findProlificStudyId(deps.db, batchId);
  if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study (publish it with: simarena prolific publish ${batchId}).`, 409);
  const client = requireClient(deps.config);
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps);
  const reconciled = options.dryRun ? { confirmed: 0, notDone: 0 } : await reconcileUnconfirmed('prolific', batchId, check, ops);
  const participants = (await listDecidedParticipants(deps.db, batchId, { clock: deps.clock })) ?? [];
  const submissions = await client.listSubmissions(studyId);
  const covered = {
    approve: coveredParticipants(deps.db, 'prolific', batchId, 'approve'),
    screenOut: coveredParticipants(deps.db, 'prolific', batchId, 'screen_out'),
    returns: coveredParticipants(deps.db, 'prolific', batchId, 'return'),
    bonus: coveredParticipants(deps.db, 'prolific', batchId, 'bonus_create'),
  };
  const plan = planSettle(participants, submissions, batch.settings, covered);
  const sent = { approved: 0, screenedOut: 0, returned: 0, bonusesPaid: 0, bonusMinor: 0 };
  const result = { studyId, currency: reward.currency, plan, reconciled, sent };
  if (options.dryRun) return result;
  for (const chunk of chunks(plan.approve, APPROVE_CHUNK)) {
    const ids = chunk.map((p) => p.submissionId);
    await runPlatformOperation(
      {
        operation: { platform: 'prolific', batchId, kind: 'approve', idempotencyKey: `prolific:batch:${batchId}:approve:${keyHash(ids)}`, platformObjectId: studyId, request: { submission_ids: ids }, actor: deps.actor, lines: chunk.map((p) => ({ participantId: p.participantId, submissionId: p.submissionId })) },
        send: () => client.bulkApprove(ids),
        answerOf: (a) => ({ answer: a }),
        check,
      },
      ops,
    );
    sent.approved += chunk.length;
  }
  await screenOutAndReturn(deps, client, batch, plan, sent);
  await payBonuses(deps, client, batchId, studyId, reward.currency, plan, sent);
  return result;
}

async function screenOutAndReturn(deps: ProlificDeps, client: ProlificClient, batch: BatchView, plan: SettlePlan, sent: SettleResult['sent']) {
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps);
  const code = batch.settings.provider.completionCodes.screenedOut ?? '';
  for (const p of plan.screenOut) {
    await runPlatformOperation(
      {
        operation: { platform: 'prolific', batchId: batch.id, kind: 'screen_out', idempotencyKey: `prolific:batch:${batch.id}:screen_out:${p.submissionId}`, participantId: p.participantId, submissionId: p.submissionId, request: { action: 'COMPLETE', completion_code: code }, actor: deps.actor },
        send: () => client.transitionSubmission(p.submissionId, { action: 'COMPLETE', completion_code: code }),
        answerOf: (s) => ({ answer: { status: s.status } }),
        check,
      },
      ops,
    );
    sent.screenedOut++;
  }
  for (const p of plan.returns) {
    const reasons = [p.why.slice(0, 200)];
    await runPlatformOperation(
      {
        operation: { platform: 'prolific', batchId: batch.id, kind: 'return', idempotencyKey: `prolific:batch:${batch.id}:return:${p.submissionId}`, participantId: p.participantId, submissionId: p.submissionId, request: { request_return_reasons: reasons }, actor: deps.actor },
        send: () => client.requestReturn(p.submissionId, reasons),
        answerOf: (a) => ({ answer: a }),
        check,
      },
      ops,
    );
    sent.returned++;
  }
}

/** Pays every bulk bonus set up before but not confirmed paid, then sets up and pays the plan's new bonuses in chunks. */
async function payBonuses(deps: ProlificDeps, client: ProlificClient, batchId: number, studyId: string, currency: string, plan: SettlePlan, sent: SettleResult['sent']) {
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps);
  const pay = async (create: PlatformOperationRow) => {
    const bulkId = create.platform_object_id as string;
    const lines = listOperationLines(deps.db, create.id);
    const total = lines.reduce((sum, l) => sum + (l.amount_minor ?? 0), 0);
    const outcome = await runPlatformOperation(
      {
        operation: {
          platform: 'prolific', batchId, kind: 'bonus_pay', idempotencyKey: `prolific:bonus:${bulkId}:pay`, platformObjectId: bulkId, amountMinor: total, currency, request: { bulk_bonus_id: bulkId }, actor: deps.actor,
          lines: lines.map((l) => ({ participantId: l.participant_id, submissionId: l.submission_id, amountMinor: l.amount_minor })),
        },
        send: () => client.payBulkBonus(bulkId),
        answerOf: (a) => ({ answer: a }),
        check,
      },
      ops,
    );
    if (outcome.result !== 'already-done') {
      sent.bonusesPaid += lines.length;
      sent.bonusMinor += total;
    }
  };
  const unpaid = () => {
    const all = listBatchOperations(deps.db, batchId, 'prolific');
    const paid = new Set(all.filter((o) => o.kind === 'bonus_pay' && o.state === 'confirmed').map((o) => o.platform_object_id));
    return all.filter((o) => o.kind === 'bonus_create' && o.state === 'confirmed' && o.platform_object_id && !paid.has(o.platform_object_id));
  };
  for (const create of unpaid()) await pay(create);
  for (const chunk of chunks(plan.bonus, BONUS_CHUNK)) {
    const csv = chunk.map((b) => `${b.participantId},${majorText(b.amountMinor)}`).join('\n');
    const total = chunk.reduce((sum, b) => sum + b.amountMinor, 0);
    const created = await runPlatformOperation(
      {
        operation: {
          platform: 'prolific', batchId, kind: 'bonus_create', idempotencyKey: `prolific:batch:${batchId}:bonus_create:${keyHash(chunk.map((b) => `${b.participantId}:${b.amountMinor}`))}`,
          amountMinor: total, currency, request: { study_id: studyId, csv_bonuses: csv }, actor: deps.actor,
          lines: chunk.map((b) => ({ participantId: b.participantId, submissionId: b.submissionId, amountMinor: b.amountMinor })),
        },
        send: () => client.createBulkBonus(studyId, csv),
        answerOf: (b) => ({ answer: b, platformObjectId: b.id }),
        check,
      },
      ops,
    );
    if (created.operation.platform_object_id) await pay(created.operation);
  }
}

/** One line per planned operation with its money, for the dry run and the console's settle page. */
export function describeSettlePlan(plan: SettlePlan, currency: string): string[] {
  const bonusTotal = plan.bonus.reduce((sum, b) => sum + b.amountMinor, 0);
  return [
    `approve: ${plan.approve.length} submission(s)`,
    `screen out (paid screen-out code): ${plan.screenOut.length}`,
    `ask to return: ${plan.returns.length}`,
    `bonus: ${plan.bonus.length} participant(s), ${formatMinor(bonusTotal, currency)} before Prolific's fees`,
    `review on Prolific (left untouched): ${plan.review.length}`,
    `already done: ${plan.done}`,
    ...plan.mismatches.map((m) => `mismatch: ${m.participantId ?? '?'} (${m.submissionId ?? 'no submission'}): ${m.problem}`),
  ];
}
