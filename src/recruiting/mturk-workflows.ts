import { type BatchView } from '../batches/batch.commands.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, describeFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import type { Db } from '../db/connection.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { type PlatformDeps, RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { listDecidedParticipants } from './decided-participants.js';
import { createMturkClient, MTURK_PRODUCTION_ENDPOINT, MTURK_SANDBOX_ENDPOINT, type MturkClient } from './mturk-client.js';
import {
  bonusReason,
  bonusToken,
  externalQuestion,
  hitMark,
  hitTypeRequest,
  matchAssignments,
  type MturkAssignment,
  type MturkSettlePlan,
  mturkFeeMinor,
  mturkReward,
  mturkSettingsOf,
  planMturkSettle,
  tookPartBeforeName,
} from './mturk-plan.js';
import { listMturkSessions, listMturkWorkersOf } from './mturk-sessions.queries.js';
import { withPlatformLock } from './platform-lock.js';
import { checkStudyLink } from './study-link.js';
import { PlatformError, withPlatformErrors } from './platform-error.js';
import { type OperationDeps, type PlatformCheck, reconcileUnconfirmed, runPlatformOperation } from './platform-operation.js';
import { linkBatchToPlatform, listBatchOperations, listBatchPlatformLinks, type PlatformOperationRow } from './platform-operations.queries.js';
import { majorText } from './prolific-plan.js';

// `mturk publish`, `status`, `settle` and the HITs' expiry, shared by the CLI and the console. Every request that
// creates, changes or pays goes through runPlatformOperation (recorded before it is sent); a settle first reconciles
// what an earlier run left unconfirmed with MTurk's own state (ListBonusPayments, the assignment's status).

export type MturkDeps = PlatformDeps;

function requireReward(batch: BatchView) {
  const reward = mturkReward(batch.settings.pay);
  if (!reward) throw new RecruitingError(`Batch ${batch.id} has no pay MTurk can use ("${batch.settings.pay}"): MTurk pays in US dollars; set "pay", e.g. "$2.00".`, 400);
  return reward;
}

/** The batch's MTurk endpoint: MTURK_ENDPOINT, else the sandbox when asked for or when the batch was published there. */
function endpointOf(deps: MturkDeps, batchId: number, sandbox: boolean | undefined): { endpoint: string; sandbox: boolean } {
  const inSandbox = sandbox ?? listBatchPlatformLinks(deps.db, batchId, 'mturk').some((l) => l.sandbox === 1);
  return { endpoint: deps.config.mturkEndpoint ?? (inSandbox ? MTURK_SANDBOX_ENDPOINT : MTURK_PRODUCTION_ENDPOINT), sandbox: inSandbox };
}

function requireClient(deps: MturkDeps, endpoint: string): MturkClient {
  const credentials = deps.config.awsCredentials();
  if (!credentials) throw new RecruitingError('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set: create an access key for the AWS account linked to your MTurk requester account and put both in the environment.', 400);
  return createMturkClient({ endpoint, credentials });
}

function operationDeps(deps: MturkDeps): OperationDeps {
  const c = deps.config.awsCredentials();
  return { db: deps.db, clock: deps.clock, secrets: [c?.secretAccessKey ?? '', c?.sessionToken ?? ''], onSend: deps.onSend };
}

const linksOf = (db: Db, batchId: number, kind: 'hit_type' | 'hit' | 'qualification') => listBatchPlatformLinks(db, batchId, 'mturk').filter((l) => l.kind === kind).map((l) => l.platform_id);

/** Reads MTurk's state of any operation this module sends (the reconciliation before anything is sent again). */
function checkOperation(client: MturkClient, deps: MturkDeps, batch: BatchView): (op: PlatformOperationRow) => Promise<PlatformCheck> {
  return async (op) => {
    switch (op.kind) {
      case 'hit_type_create':
      case 'qualification_assign':
        // Both are idempotent on MTurk (the same HIT type's id comes back; associating again sets the same value).
        return { done: false };
      case 'qualification_create': {
        const found = await client.findQualificationType(tookPartBeforeName(batch.publicId));
        return found?.QualificationTypeId ? { done: true, platformObjectId: found.QualificationTypeId } : { done: false };
      }
      case 'hit_create': {
        const mark = op.platform_object_id ?? '';
        const found = (await client.listHits()).find((h) => h.RequesterAnnotation === mark);
        return found?.HITId ? { done: true, platformObjectId: found.HITId, answer: { HITId: found.HITId } } : { done: false };
      }
      case 'expire': {
        const hit = await client.getHit(op.platform_object_id ?? '');
        return hit.Expiration && hit.Expiration.getTime() <= deps.clock().getTime() ? { done: true } : { done: false };
      }
      case 'approve': {
        const status = (await client.getAssignment(op.assignment_id ?? '')).AssignmentStatus;
        return status === 'Approved' ? { done: true, answer: { status } } : { done: false };
      }
      case 'bonus': {
        // MTurk forgets a UniqueRequestToken after 24 hours; the bonus's Reason carries the token for good.
        const token = bonusToken(batch.publicId, op.participant_id ?? '');
        const paid = (await client.listBonusPayments(op.assignment_id ?? '')).filter((b) => (b.Reason ?? '').includes(`(ref ${token})`));
        return paid.length > 0 ? { done: true, answer: { BonusAmount: paid[0]?.BonusAmount, GrantTime: paid[0]?.GrantTime } } : { done: false };
      }
      default:
        throw new PlatformError(`Operation ${op.id} (${op.kind}) is not one simarena sends to MTurk; check it by hand.`, 409);
    }
  };
}

export type MturkPublishPreview = {
  /** The link every HIT's ExternalQuestion frames, and why workers could not open it (a dry run only: publishing refuses). */
  entryUrl: string;
  warnings: string[];
  endpoint: string;
  sandbox: boolean;
  requests: { operation: string; body: unknown }[];
  hits: number;
  assignmentsPerHit: number;
  rewardMinor: number;
  rewardsMinor: number;
  feesMinor: number;
  balance: string | null;
  hitIds: string[];
};

/** The batch's HIT plan, refused before any call when MTurk cannot be asked to run it: no pay in dollars, a failing checklist. */
function publishPlan(deps: MturkDeps, batch: BatchView) {
  const reward = requireReward(batch);
  const minutes = consentTimeOfFullSession(deps.db, batch.id, batch.settings).minutes;
  const failing = blockingFailures(batchLaunchChecklist(deps.db, batch.id, { minutes, minPayPerHour: deps.config.minPayPerHour, publicUrl: deps.config.publicUrl }));
  if (failing.length > 0) throw new RecruitingError(`Batch ${batch.id} is not ready to publish: ${describeFailures(failing).join(' ')}`, 409);
  const m = mturkSettingsOf(batch.settings);
  const assignments = batch.settings.plannedRaters ?? checkBatchCapacity(deps.db, batch.id).ratersNeeded;
  const entryUrl = raterLinks(batch, deps.config.publicUrl).entryUrl;
  const question = externalQuestion(entryUrl, m.frameHeight);
  const hit = (index: number) => ({ MaxAssignments: assignments, LifetimeInSeconds: Math.round(m.lifetimeDays * 86_400), Question: question, RequesterAnnotation: hitMark(batch.publicId, index), UniqueRequestToken: hitMark(batch.publicId, index) });
  return { reward, m, assignments, hit, entryUrl };
}

/**
 * `mturk publish`: the "took part before" qualification (for blockParticipantsOf) given to the earlier batches'
 * workers, the HIT type, and the batch's HITs, each recorded before it is sent. `dryRun`: the exact requests and the
 * cost, nothing created or spent (the account balance is read when credentials are set).
 */
export function publishOnMturk(deps: MturkDeps, batchId: number, options: { dryRun: boolean; sandbox?: boolean }): Promise<MturkPublishPreview> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'mturk');
    const { reward, m, assignments, hit, entryUrl } = publishPlan(deps, batch);
    const warnings = checkStudyLink(entryUrl, 'MTurk', options.dryRun);
    const { endpoint, sandbox } = endpointOf(deps, batchId, options.sandbox);
    const blocked = listMturkWorkersOf(deps.db, batch.settings.blockParticipantsOf);
    const qualificationName = tookPartBeforeName(batch.publicId);
    const requests = [
      ...(batch.settings.blockParticipantsOf.length > 0 ? [{ operation: 'CreateQualificationType', body: { Name: qualificationName, QualificationTypeStatus: 'Active' } }] : []),
      ...blocked.map((w) => ({ operation: 'AssociateQualificationWithWorker', body: { WorkerId: w, IntegerValue: 1, SendNotification: false } })),
      { operation: 'CreateHITType', body: hitTypeRequest(batch, reward.reward, batch.settings.blockParticipantsOf.length > 0 ? '<took-part-before qualification>' : null) },
      ...Array.from({ length: m.hits }, (_, i) => ({ operation: 'CreateHITWithHITType', body: hit(i + 1) })),
    ];
    const preview = {
      entryUrl,
      warnings,
      endpoint,
      sandbox,
      requests,
      hits: m.hits,
      assignmentsPerHit: assignments,
      rewardMinor: reward.rewardMinor,
      rewardsMinor: reward.rewardMinor * assignments * m.hits,
      feesMinor: mturkFeeMinor(reward.rewardMinor, assignments) * assignments * m.hits,
      balance: null as string | null,
      hitIds: linksOf(deps.db, batchId, 'hit'),
    };
    if (options.dryRun) {
      preview.balance = deps.config.awsCredentials() ? await requireClient(deps, endpoint).accountBalance().catch(() => null) : null;
      return preview;
    }
    if (batch.state !== 'open') throw new RecruitingError(`Batch ${batchId} is ${batch.state}: open it first (simarena batches open ${batchId}), so workers sent by MTurk find it open.`, 409);
    return withPlatformLock(deps.db, 'mturk', batchId, 'publish', deps.clock, async () => {
      const client = requireClient(deps, endpoint);
      const ops = operationDeps(deps);
      const check = checkOperation(client, deps, batch);
      await reconcileUnconfirmed('mturk', batchId, check, ops);
      const qualification = batch.settings.blockParticipantsOf.length > 0 ? await tookPartBefore(deps, client, batch, blocked, sandbox) : null;
      const hitTypeBody = hitTypeRequest(batch, reward.reward, qualification);
      const hitType = await runPlatformOperation(
        {
          operation: { platform: 'mturk', batchId, kind: 'hit_type_create', idempotencyKey: `mturk:batch:${batchId}:hit_type`, request: hitTypeBody, actor: deps.actor },
          send: () => client.createHitType(hitTypeBody),
          answerOf: (id) => ({ answer: { HITTypeId: id }, platformObjectId: id }),
          check,
        },
        ops,
      );
      const hitTypeId = hitType.operation.platform_object_id ?? '';
      if (!linksOf(deps.db, batchId, 'hit_type').includes(hitTypeId)) linkBatchToPlatform(deps.db, { batchId, platform: 'mturk', kind: 'hit_type', platformId: hitTypeId, sandbox }, deps.clock());
      for (let i = 1; i <= m.hits; i++) {
        const body = { ...hit(i), HITTypeId: hitTypeId };
        const created = await runPlatformOperation(
          {
            operation: { platform: 'mturk', batchId, kind: 'hit_create', idempotencyKey: `mturk:batch:${batchId}:hit:${i}`, platformObjectId: body.RequesterAnnotation, amountMinor: reward.rewardMinor * assignments, currency: 'USD', request: body, actor: deps.actor },
            send: () => client.createHit(body),
            answerOf: (h) => ({ answer: { HITId: h.HITId, HITStatus: h.HITStatus }, platformObjectId: h.HITId ?? null }),
            check,
          },
          ops,
        );
        const hitId = created.operation.platform_object_id ?? '';
        if (!linksOf(deps.db, batchId, 'hit').includes(hitId)) linkBatchToPlatform(deps.db, { batchId, platform: 'mturk', kind: 'hit', platformId: hitId, sandbox }, deps.clock());
      }
      return { ...preview, hitIds: linksOf(deps.db, batchId, 'hit') };
    });
  });
}

/** The batch's "took part before" qualification, created once and given to every worker of the blocked batches. */
async function tookPartBefore(deps: MturkDeps, client: MturkClient, batch: BatchView, workers: readonly string[], sandbox: boolean): Promise<string> {
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps, batch);
  const name = tookPartBeforeName(batch.publicId);
  const description = 'You took part in an earlier round of this study, which asks for new participants.';
  const created = await runPlatformOperation(
    {
      operation: { platform: 'mturk', batchId: batch.id, kind: 'qualification_create', idempotencyKey: `mturk:batch:${batch.id}:qualification`, request: { Name: name, Description: description }, actor: deps.actor },
      send: () => client.createQualificationType(name, description),
      answerOf: (q) => ({ answer: { QualificationTypeId: q.QualificationTypeId }, platformObjectId: q.QualificationTypeId ?? null }),
      check,
    },
    ops,
  );
  const id = created.operation.platform_object_id ?? '';
  if (!linksOf(deps.db, batch.id, 'qualification').includes(id)) linkBatchToPlatform(deps.db, { batchId: batch.id, platform: 'mturk', kind: 'qualification', platformId: id, sandbox }, deps.clock());
  for (const worker of workers) {
    await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId: batch.id, kind: 'qualification_assign', idempotencyKey: `mturk:qualification:${id}:${worker}`, participantId: worker, platformObjectId: id, request: { WorkerId: worker, IntegerValue: 1 }, actor: deps.actor },
        send: () => client.assignQualification(id, worker),
        answerOf: () => ({ answer: {} }),
        check,
      },
      ops,
    );
  }
  return id;
}

/** Every submitted, approved or rejected assignment of the batch's HITs. */
async function batchAssignments(client: MturkClient, hitIds: readonly string[]): Promise<MturkAssignment[]> {
  const out: MturkAssignment[] = [];
  for (const hitId of hitIds) {
    for (const a of await client.listAssignments(hitId)) out.push({ assignmentId: a.AssignmentId ?? '', workerId: a.WorkerId ?? '', hitId, status: a.AssignmentStatus ?? '' });
  }
  return out;
}

function requireHits(db: Db, batchId: number): string[] {
  const hits = linksOf(db, batchId, 'hit');
  if (hits.length === 0) throw new RecruitingError(`Batch ${batchId} has no HITs on MTurk (publish it with: simarena mturk publish ${batchId}).`, 409);
  return hits;
}

export type MturkStatus = {
  sandbox: boolean;
  hits: { hitId: string; status: string; maxAssignments: number; available: number; pending: number; completed: number; expiresAt: string | null }[];
  assignments: Record<string, number>;
  outcomes: Record<string, number>;
  mismatches: MturkSettlePlan['mismatches'];
};

const counts = (values: string[]) => values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {});

/** `mturk status`: the HITs, assignments by status next to simarena's outcomes, every mismatch named. */
export function mturkStatus(deps: MturkDeps, batchId: number): Promise<MturkStatus> {
  return withPlatformErrors(async () => {
    requirePlatformBatch(deps.db, batchId, 'mturk');
    const hitIds = requireHits(deps.db, batchId);
    const { endpoint, sandbox } = endpointOf(deps, batchId, undefined);
    const client = requireClient(deps, endpoint);
    const hits = [];
    for (const id of hitIds) {
      const h = await client.getHit(id);
      hits.push({ hitId: id, status: h.HITStatus ?? '?', maxAssignments: h.MaxAssignments ?? 0, available: h.NumberOfAssignmentsAvailable ?? 0, pending: h.NumberOfAssignmentsPending ?? 0, completed: h.NumberOfAssignmentsCompleted ?? 0, expiresAt: h.Expiration?.toISOString() ?? null });
    }
    const assignments = await batchAssignments(client, hitIds);
    const participants = ((await listDecidedParticipants(deps.db, batchId, { clock: deps.clock })) ?? []).filter((p) => p.provider === 'mturk');
    const { mismatches } = matchAssignments(participants, listMturkSessions(deps.db, batchId), assignments);
    return { sandbox, hits, assignments: counts(assignments.map((a) => a.status)), outcomes: counts(participants.map((p) => p.outcome)), mismatches };
  });
}

export type MturkSettleResult = { plan: MturkSettlePlan; reconciled: { confirmed: number; notDone: number }; sent: { approved: number; bonusesPaid: number; bonusMinor: number } };

/**
 * `mturk settle`: reconciles what an earlier run left unconfirmed, plans from simarena's decisions and MTurk's
 * assignments (planMturkSettle) and, unless `dryRun`, approves and then pays each worker's bonus once (SendBonus with
 * a UniqueRequestToken from the batch and worker; MTurk's ListBonusPayments read first for any bonus whose answer was
 * lost, since the token guards only 24 hours).
 */
export function settleOnMturk(deps: MturkDeps, batchId: number, options: { dryRun: boolean }): Promise<MturkSettleResult> {
  const settle = () => settleUnlocked(deps, batchId, options);
  return withPlatformErrors(() => (options.dryRun ? settle() : withPlatformLock(deps.db, 'mturk', batchId, 'settle', deps.clock, settle)));
}

async function settleUnlocked(deps: MturkDeps, batchId: number, options: { dryRun: boolean }): Promise<MturkSettleResult> {
  const batch = requirePlatformBatch(deps.db, batchId, 'mturk');
  requireReward(batch);
  const hitIds = requireHits(deps.db, batchId);
  const client = requireClient(deps, endpointOf(deps, batchId, undefined).endpoint);
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps, batch);
  const reconciled = options.dryRun ? { confirmed: 0, notDone: 0 } : await reconcileUnconfirmed('mturk', batchId, check, ops);
  const participants = ((await listDecidedParticipants(deps.db, batchId, { clock: deps.clock })) ?? []).filter((p) => p.provider === 'mturk');
  const matched = matchAssignments(participants, listMturkSessions(deps.db, batchId), await batchAssignments(client, hitIds));
  const earlier = listBatchOperations(deps.db, batchId, 'mturk').filter((o) => o.state !== 'failed');
  const covered = {
    approve: new Set(earlier.filter((o) => o.kind === 'approve').map((o) => o.assignment_id ?? '')),
    bonus: new Set(earlier.filter((o) => o.kind === 'bonus').map((o) => o.participant_id ?? '')),
  };
  const plan = planMturkSettle(matched, batch.settings, covered);
  const sent = { approved: 0, bonusesPaid: 0, bonusMinor: 0 };
  if (options.dryRun) return { plan, reconciled, sent };
  for (const a of plan.approve) {
    const feedback = 'Thank you for taking part.';
    await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId, kind: 'approve', idempotencyKey: `mturk:assignment:${a.assignmentId}:approve`, participantId: a.workerId, assignmentId: a.assignmentId, request: { AssignmentId: a.assignmentId, RequesterFeedback: feedback }, actor: deps.actor },
        send: () => client.approveAssignment(a.assignmentId, feedback),
        answerOf: () => ({ answer: { status: 'Approved' } }),
        check,
      },
      ops,
    );
    sent.approved++;
  }
  for (const b of plan.bonus) {
    const token = bonusToken(batch.publicId, b.workerId);
    const request = { WorkerId: b.workerId, AssignmentId: b.assignmentId, BonusAmount: majorText(b.amountMinor), Reason: bonusReason(batch.name, token), UniqueRequestToken: token };
    const outcome = await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId, kind: 'bonus', idempotencyKey: `mturk:batch:${batchId}:bonus:${b.workerId}`, participantId: b.workerId, assignmentId: b.assignmentId, amountMinor: b.amountMinor, currency: 'USD', request, actor: deps.actor },
        send: () => client.sendBonus({ workerId: b.workerId, assignmentId: b.assignmentId, amount: request.BonusAmount, reason: request.Reason, token }),
        answerOf: () => ({ answer: { BonusAmount: request.BonusAmount } }),
        check,
      },
      ops,
    );
    if (outcome.result === 'sent') {
      sent.bonusesPaid++;
      sent.bonusMinor += b.amountMinor;
    }
  }
  return { plan, reconciled, sent };
}

/** Expires the batch's HITs (closing the batch offers it): no new worker can accept them; submitted work stays. */
export function expireMturkHits(deps: MturkDeps, batchId: number): Promise<number> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'mturk');
    const hitIds = requireHits(deps.db, batchId);
    const client = requireClient(deps, endpointOf(deps, batchId, undefined).endpoint);
    const check = checkOperation(client, deps, batch);
    return withPlatformLock(deps.db, 'mturk', batchId, 'expiry', deps.clock, async () => {
      for (const hitId of hitIds) {
        await runPlatformOperation(
          {
            operation: { platform: 'mturk', batchId, kind: 'expire', idempotencyKey: `mturk:hit:${hitId}:expire`, platformObjectId: hitId, request: { HITId: hitId, ExpireAt: 0 }, actor: deps.actor },
            send: () => client.expireHit(hitId),
            answerOf: () => ({ answer: {} }),
            check,
          },
          operationDeps(deps),
        );
      }
      return hitIds.length;
    });
  });
}

/** One line per planned operation with its money, for the dry run and the console. */
export function describeMturkPlan(plan: MturkSettlePlan): string[] {
  const total = plan.bonus.reduce((sum, b) => sum + b.amountMinor, 0);
  return [
    `approve: ${plan.approve.length} assignment(s)`,
    `bonus: ${plan.bonus.length} worker(s), ${majorText(total)} USD plus MTurk's 20% fee (${majorText(Math.round(total * 0.2))} USD)`,
    `review on MTurk (left untouched; MTurk approves them by itself after the auto-approval delay unless you reject them there): ${plan.review.length}`,
    `already done: ${plan.done}`,
    ...plan.mismatches.map((m) => `mismatch: ${m.workerId ?? '?'} (${m.assignmentId ?? 'no assignment'}): ${m.problem}`),
  ];
}
