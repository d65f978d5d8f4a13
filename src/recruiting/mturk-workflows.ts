import { type BatchView } from '../batches/batch.commands.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, describeFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import type { Db } from '../db/connection.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { type PlatformDeps, RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { listDecidedParticipants } from './decided-participants.js';
import { type BonusPayment, createMturkClient, type HIT, MTURK_PRODUCTION_ENDPOINT, MTURK_SANDBOX_ENDPOINT, type MturkClient } from './mturk-client.js';
import {
  bonusReason,
  bonusToken,
  bonusTokenIn,
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
import { type HeldLock, withPlatformLock } from './platform-lock.js';
import { PlatformError, PlatformHttpError, withPlatformErrors } from './platform-error.js';
import { type OperationDeps, type OperationOutcome, type PlatformCheck, reconcileUnconfirmed, runPlatformOperation } from './platform-operation.js';
import { checkStudyLink } from './study-link.js';
import { linkBatchToPlatform, listBatchOperations, listBatchPlatformLinks, type PlatformOperationRow } from './platform-operations.queries.js';
import { majorText } from './prolific-plan.js';

// `mturk publish`, `status`, `settle` and the HITs' expiry, shared by the CLI and the console. Every request that
// creates, changes or pays goes through runPlatformOperation (recorded before it is sent); a settle first reconciles
// what an earlier run left unconfirmed with MTurk's own state (ListBonusPayments, the assignment's status).

export type MturkDeps = PlatformDeps;
/** A workflow's dependencies while it holds the batch's platform lock: nothing is sent once the lock was taken over. */
type LockedDeps = MturkDeps & { lock?: HeldLock };

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

function operationDeps(deps: LockedDeps): OperationDeps {
  const c = deps.config.awsCredentials();
  return { db: deps.db, clock: deps.clock, secrets: [c?.secretAccessKey ?? '', c?.sessionToken ?? ''], onSend: deps.onSend, beforeSend: deps.lock?.assertHeld };
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
      case 'hit_create':
        return hitListed(await client.listHits(), op.platform_object_id ?? '');
      case 'expire': {
        const hit = await client.getHit(op.platform_object_id ?? '');
        return hit.Expiration && hit.Expiration.getTime() <= deps.clock().getTime() ? { done: true } : { done: false };
      }
      case 'approve': {
        const status = (await client.getAssignment(op.assignment_id ?? '')).AssignmentStatus;
        return status === 'Approved' ? { done: true, answer: { status } } : { done: false };
      }
      case 'bonus':
        // MTurk forgets a UniqueRequestToken after 24 hours; the bonus's Reason carries the token for good.
        return bonusListed(paidBonusesByToken(await client.listBonusPayments({ assignmentId: op.assignment_id ?? '' })), bonusToken(batch.publicId, op.participant_id ?? ''));
      default:
        throw new PlatformError(`Operation ${op.id} (${op.kind}) is not one simarena sends to MTurk; check it by hand.`, 409);
    }
  };
}

/** Whether MTurk lists the batch's HIT of this mark (its RequesterAnnotation): a HIT whose answer or record was lost. */
function hitListed(hits: readonly HIT[], mark: string): PlatformCheck {
  const found = hits.find((h) => h.RequesterAnnotation === mark);
  return found?.HITId ? { done: true, platformObjectId: found.HITId, answer: { HITId: found.HITId } } : { done: false };
}

/** The bonuses MTurk lists, by the token simarena wrote into their reason (bonusReason). */
function paidBonusesByToken(bonuses: readonly BonusPayment[]): Map<string, BonusPayment> {
  const out = new Map<string, BonusPayment>();
  for (const b of bonuses) {
    const token = bonusTokenIn(b.Reason ?? '');
    if (token) out.set(token, b);
  }
  return out;
}

/** Every bonus MTurk lists for the batch's HITs (ListBonusPayments of each HIT), by token. */
async function batchBonuses(client: MturkClient, hitIds: readonly string[]): Promise<Map<string, BonusPayment>> {
  const all: BonusPayment[] = [];
  for (const hitId of hitIds) all.push(...(await client.listBonusPayments({ hitId })));
  return paidBonusesByToken(all);
}

function bonusListed(paid: ReadonlyMap<string, BonusPayment>, token: string): PlatformCheck {
  const b = paid.get(token);
  return b ? { done: true, answer: { BonusAmount: b.BonusAmount, GrantTime: b.GrantTime } } : { done: false };
}

/** Runs `read` once, on first use, and keeps its answer (a list read before several creates). */
function once<T>(read: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | null = null;
  return () => (kept ??= read());
}

/**
 * A create MTurk refused as a duplicate of one it has (its UniqueRequestToken, or the qualification's name) but does
 * not list yet: nothing was created twice; publish stops until MTurk lists it.
 */
function requireListed<T>(outcome: OperationOutcome<T>, what: string): OperationOutcome<T> {
  if (outcome.result !== 'held') return outcome;
  throw new PlatformError(`MTurk refused to create ${what} again as already done, but does not list it yet: nothing was created twice. Run publish again in a few minutes: it is looked up on MTurk before anything is sent.`, 503, 'platform_pending');
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
    return withPlatformLock(deps.db, 'mturk', batchId, 'publish', deps.clock, async (lock) => {
      const locked = { ...deps, lock };
      const client = requireClient(deps, endpoint);
      await reconcileUnconfirmed('mturk', batchId, checkOperation(client, deps, batch), operationDeps(locked));
      const qualification = batch.settings.blockParticipantsOf.length > 0 ? await tookPartBefore(locked, client, batch, blocked, sandbox) : null;
      await createHits(locked, client, batch, { hitTypeBody: hitTypeRequest(batch, reward.reward, qualification), hits: m.hits, hit, sandbox, amountMinor: reward.rewardMinor * assignments });
      return { ...preview, hitIds: linksOf(deps.db, batchId, 'hit') };
    });
  });
}

type HitsToCreate = { hitTypeBody: ReturnType<typeof hitTypeRequest>; hits: number; hit: (index: number) => ReturnType<ReturnType<typeof publishPlan>['hit']>; sandbox: boolean; amountMinor: number };

/**
 * The HIT type, then each HIT, recorded before it is sent. A HIT is first looked up in ListHITs by its mark (read once
 * for all of them): MTurk refuses its UniqueRequestToken again only for 24 hours, and a HIT whose record was lost or
 * refused may exist already.
 */
async function createHits(deps: LockedDeps, client: MturkClient, batch: BatchView, plan: HitsToCreate): Promise<void> {
  const ops = operationDeps(deps);
  const check = checkOperation(client, deps, batch);
  const batchId = batch.id;
  const hitType = await runPlatformOperation(
    {
      operation: { platform: 'mturk', batchId, kind: 'hit_type_create', idempotencyKey: `mturk:batch:${batchId}:hit_type`, request: plan.hitTypeBody, actor: deps.actor },
      send: () => client.createHitType(plan.hitTypeBody),
      answerOf: (id) => ({ answer: { HITTypeId: id }, platformObjectId: id }),
      check,
    },
    ops,
  );
  const hitTypeId = hitType.operation.platform_object_id ?? '';
  if (!linksOf(deps.db, batchId, 'hit_type').includes(hitTypeId)) linkBatchToPlatform(deps.db, { batchId, platform: 'mturk', kind: 'hit_type', platformId: hitTypeId, sandbox: plan.sandbox }, deps.clock());
  const listed = once(() => client.listHits());
  for (let i = 1; i <= plan.hits; i++) {
    const body = { ...plan.hit(i), HITTypeId: hitTypeId };
    const created = await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId, kind: 'hit_create', idempotencyKey: `mturk:batch:${batchId}:hit:${i}`, platformObjectId: body.RequesterAnnotation, amountMinor: plan.amountMinor, currency: 'USD', request: body, actor: deps.actor },
        send: () => client.createHit(body),
        answerOf: (h) => ({ answer: { HITId: h.HITId, HITStatus: h.HITStatus }, platformObjectId: h.HITId ?? null }),
        check,
        checkFirst: async () => hitListed(await listed(), body.RequesterAnnotation),
      },
      ops,
    );
    const hitId = requireListed(created, `HIT ${i}`).operation.platform_object_id ?? '';
    if (!linksOf(deps.db, batchId, 'hit').includes(hitId)) linkBatchToPlatform(deps.db, { batchId, platform: 'mturk', kind: 'hit', platformId: hitId, sandbox: plan.sandbox }, deps.clock());
  }
}

/** The batch's "took part before" qualification, created once and given to every worker of the blocked batches. */
async function tookPartBefore(deps: LockedDeps, client: MturkClient, batch: BatchView, workers: readonly string[], sandbox: boolean): Promise<string> {
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
      // Its name is unique on MTurk: one created under a record since lost is found by it.
      checkFirst: check,
    },
    ops,
  );
  const id = requireListed(created, `the qualification ${name}`).operation.platform_object_id ?? '';
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

export type MturkSettleResult = {
  plan: MturkSettlePlan;
  reconciled: { confirmed: number; notDone: number; held: number };
  sent: { approved: number; bonusesPaid: number; bonusMinor: number };
  /** Bonuses MTurk refused as already sent but does not list yet: not sent again, their workers held. */
  held: { workerId: string; assignmentId: string }[];
};

/**
 * `mturk settle`: reconciles what an earlier run left unconfirmed, plans from simarena's decisions, MTurk's
 * assignments and the bonuses MTurk lists for the batch's HITs (planMturkSettle) and, unless `dryRun`, approves and
 * then pays each worker's bonus once (SendBonus with a UniqueRequestToken from the batch and worker). MTurk refuses
 * that token again only for 24 hours, so no bonus is sent before ListBonusPayments was read: one it lists, found by
 * the token in its reason, is recorded as done instead.
 */
export function settleOnMturk(deps: MturkDeps, batchId: number, options: { dryRun: boolean }): Promise<MturkSettleResult> {
  return withPlatformErrors(() =>
    options.dryRun ? settleUnlocked(deps, batchId, options) : withPlatformLock(deps.db, 'mturk', batchId, 'settle', deps.clock, (lock) => settleUnlocked({ ...deps, lock }, batchId, options)),
  );
}

async function settleUnlocked(deps: LockedDeps, batchId: number, options: { dryRun: boolean }): Promise<MturkSettleResult> {
  const batch = requirePlatformBatch(deps.db, batchId, 'mturk');
  requireReward(batch);
  const hitIds = requireHits(deps.db, batchId);
  const client = requireClient(deps, endpointOf(deps, batchId, undefined).endpoint);
  const check = checkOperation(client, deps, batch);
  const reconciled = options.dryRun ? { confirmed: 0, notDone: 0, held: 0 } : await reconcileUnconfirmed('mturk', batchId, check, operationDeps(deps));
  const participants = ((await listDecidedParticipants(deps.db, batchId, { clock: deps.clock })) ?? []).filter((p) => p.provider === 'mturk');
  const matched = matchAssignments(participants, listMturkSessions(deps.db, batchId), await batchAssignments(client, hitIds));
  const paid = await batchBonuses(client, hitIds);
  const earlier = listBatchOperations(deps.db, batchId, 'mturk').filter((o) => o.state !== 'failed');
  const plan = planMturkSettle(matched, batch.settings, {
    approve: new Set(earlier.filter((o) => o.kind === 'approve').map((o) => o.assignment_id ?? '')),
    bonus: new Set(earlier.filter((o) => o.kind === 'bonus').map((o) => o.participant_id ?? '')),
    paidOnMturk: new Set(matched.pairs.map((p) => p.assignment.workerId).filter((w) => paid.has(bonusToken(batch.publicId, w)))),
  });
  if (options.dryRun) return { plan, reconciled, sent: { approved: 0, bonusesPaid: 0, bonusMinor: 0 }, held: [] };
  const approved = await approveAll(deps, client, batch, plan);
  const bonuses = await payBonuses(deps, client, batch, plan, paid);
  return { plan, reconciled, sent: { approved, ...bonuses.sent }, held: bonuses.held };
}

/**
 * ApproveAssignment, where an assignment MTurk approved by itself meanwhile (its auto-approval time passed since
 * settle listed it) counts as approved: MTurk refuses to approve it again ("This operation can be called with a
 * status of: Submitted", Dallinger issue #3072), and the worker has had the reward.
 */
async function approveOnce(client: MturkClient, assignmentId: string, feedback: string): Promise<{ status: 'Approved'; byMturk?: true }> {
  try {
    await client.approveAssignment(assignmentId, feedback);
    return { status: 'Approved' };
  } catch (error) {
    if (!(error instanceof PlatformHttpError) || error.status !== 400) throw error;
    if ((await client.getAssignment(assignmentId)).AssignmentStatus === 'Approved') return { status: 'Approved', byMturk: true };
    throw error;
  }
}

async function approveAll(deps: LockedDeps, client: MturkClient, batch: BatchView, plan: MturkSettlePlan): Promise<number> {
  const check = checkOperation(client, deps, batch);
  for (const a of plan.approve) {
    const feedback = 'Thank you for taking part.';
    await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId: batch.id, kind: 'approve', idempotencyKey: `mturk:assignment:${a.assignmentId}:approve`, participantId: a.workerId, assignmentId: a.assignmentId, request: { AssignmentId: a.assignmentId, RequesterFeedback: feedback }, actor: deps.actor },
        send: () => approveOnce(client, a.assignmentId, feedback),
        answerOf: (answer) => ({ answer }),
        check,
      },
      operationDeps(deps),
    );
  }
  return plan.approve.length;
}

/**
 * One bonus per worker, each looked up first in the bonuses MTurk listed for the batch (`paid`): those MTurk lists
 * are recorded as done without a request; the others are sent.
 */
async function payBonuses(deps: LockedDeps, client: MturkClient, batch: BatchView, plan: MturkSettlePlan, paid: ReadonlyMap<string, BonusPayment>) {
  const check = checkOperation(client, deps, batch);
  const sent = { bonusesPaid: 0, bonusMinor: 0 };
  const held: MturkSettleResult['held'] = [];
  for (const b of [...plan.alreadyPaid, ...plan.bonus]) {
    const token = bonusToken(batch.publicId, b.workerId);
    const request = { WorkerId: b.workerId, AssignmentId: b.assignmentId, BonusAmount: majorText(b.amountMinor), Reason: bonusReason(token), UniqueRequestToken: token };
    const outcome = await runPlatformOperation(
      {
        operation: { platform: 'mturk', batchId: batch.id, kind: 'bonus', idempotencyKey: `mturk:batch:${batch.id}:bonus:${b.workerId}`, participantId: b.workerId, assignmentId: b.assignmentId, amountMinor: b.amountMinor, currency: 'USD', request, actor: deps.actor },
        send: () => client.sendBonus({ workerId: b.workerId, assignmentId: b.assignmentId, amount: request.BonusAmount, reason: request.Reason, token }),
        answerOf: () => ({ answer: { BonusAmount: request.BonusAmount } }),
        check,
        checkFirst: async () => bonusListed(paid, token),
      },
      operationDeps(deps),
    );
    if (outcome.result === 'sent') {
      sent.bonusesPaid++;
      sent.bonusMinor += b.amountMinor;
    }
    if (outcome.result === 'held') held.push({ workerId: b.workerId, assignmentId: b.assignmentId });
  }
  return { sent, held };
}

/** Expires the batch's HITs (closing the batch offers it): no new worker can accept them; submitted work stays. */
export function expireMturkHits(deps: MturkDeps, batchId: number): Promise<number> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'mturk');
    const hitIds = requireHits(deps.db, batchId);
    const client = requireClient(deps, endpointOf(deps, batchId, undefined).endpoint);
    const check = checkOperation(client, deps, batch);
    return withPlatformLock(deps.db, 'mturk', batchId, 'expiry', deps.clock, async (lock) => {
      for (const hitId of hitIds) {
        await runPlatformOperation(
          {
            operation: { platform: 'mturk', batchId, kind: 'expire', idempotencyKey: `mturk:hit:${hitId}:expire`, platformObjectId: hitId, request: { HITId: hitId, ExpireAt: 0 }, actor: deps.actor },
            send: () => client.expireHit(hitId),
            answerOf: () => ({ answer: {} }),
            check,
          },
          operationDeps({ ...deps, lock }),
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
    ...(plan.alreadyPaid.length > 0 ? [`bonus already paid on MTurk (found by its ref in ListBonusPayments), recorded without sending: ${plan.alreadyPaid.length}`] : []),
    ...plan.mismatches.map((m) => `mismatch: ${m.workerId ?? '?'} (${m.assignmentId ?? 'no assignment'}): ${m.problem}`),
  ];
}
