import { type BatchView } from '../batches/batch.commands.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, describeFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { listDecidedParticipants } from './decided-participants.js';
import { PlatformError, withPlatformErrors } from './platform-error.js';
import { checkOperation } from './prolific-reconcile.js';
import { withPlatformLock } from './platform-lock.js';
import { reconcileUnconfirmed, runPlatformOperation } from './platform-operation.js';
import { findProlificStudyId, linkBatchToPlatform, listBatchOperations } from './platform-operations.queries.js';
import { createProlificClient, type NewStudy, type ProlificClient, type StudyAction, statusInAnswer } from './prolific-client.js';
import { operationDeps, type ProlificDeps, requireClient } from './prolific-deps.js';
import { type InFlight, readInFlight } from './prolific-in-flight.js';
import { coveredOf } from './prolific-settle.js';
import { requireStudyTerms, requireWorkspaceCurrency } from './prolific-currency.js';
import { prolificReward, screenOutPayProblem } from '../batches/prolific-pay.js';
import { type Deadline, planSettle, prolificStudyRequest, type ReviewItem, type SettlePlan } from './prolific-plan.js';
import { checkStudyLink } from './study-link.js';

export type { ProlificDeps } from './prolific-deps.js';

// `prolific publish`, `status` and the study's pause/stop, shared by the CLI and the console (`settle` is
// prolific-settle.ts). Every request that creates or changes goes through runPlatformOperation (recorded before it is
// sent), after whatever an earlier run left unconfirmed is reconciled with Prolific's own state.

export type PublishPreview = { studyUrl: string; warnings: string[]; requests: { method: string; path: string; body: unknown }[]; places: number; rewardMinor: number; currency: string; costMinor: number | null; rewardsMinor: number; studyId: string | null };

/** Refuses a batch Prolific cannot be asked to run, before any call: no pay, a failing launch checklist, no code. */
function studyRequestOf(deps: ProlificDeps, batch: BatchView): { study: NewStudy; studyUrl: string; rewardMinor: number; currency: string; places: number } {
  const reward = prolificReward(batch.settings.pay);
  if (!reward) throw new RecruitingError(`Batch ${batch.id} has no pay Prolific can use ("${batch.settings.pay}"): set "pay" to an amount in pounds or dollars, e.g. "£2.50".`, 400);
  if (!batch.settings.provider.completionCodes.completed) throw new RecruitingError(`Batch ${batch.id} has no completion code: set provider.completionCodes.completed.`, 400);
  const screenOut = screenOutPayProblem(batch.settings.provider.screenOutPay, reward);
  if (screenOut) throw new RecruitingError(`Batch ${batch.id} cannot be published on Prolific: ${screenOut}`, 400);
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
    return withPlatformLock(deps.db, 'prolific', batchId, 'publish', deps.clock, async (lock) => {
      const locked = { ...deps, lock };
      const ops = operationDeps(locked);
      await reconcileUnconfirmed('prolific', batchId, checkOperation(client, deps), ops);
      let studyId = findProlificStudyId(deps.db, batchId) ?? null;
      if (!studyId) {
        await requireWorkspaceCurrency(client, deps.config, batchId, currency);
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
      const created = await client.getStudy(studyId);
      requireStudyTerms(created, { id: batchId, currency, rewardMinor }, 'publish');
      if (created.status === 'UNPUBLISHED') await transitionStudy(locked, client, batchId, studyId, 'PUBLISH');
      return { studyUrl, warnings, requests, places, rewardMinor, currency, costMinor: null, rewardsMinor: rewardMinor * places, studyId };
    });
  });
}

const STUDY_KINDS = { PUBLISH: 'publish', PAUSE: 'pause', START: 'start', STOP: 'stop' } as const;

async function transitionStudy(deps: ProlificDeps, client: ProlificClient, batchId: number, studyId: string, action: StudyAction, why?: string): Promise<void> {
  const kind = STUDY_KINDS[action];
  const earlier = listBatchOperations(deps.db, batchId, 'prolific').filter((o) => o.kind === kind && o.state === 'confirmed').length;
  await runPlatformOperation(
    {
      operation: { platform: 'prolific', batchId, kind, idempotencyKey: `prolific:study:${studyId}:${kind}:${earlier + 1}`, platformObjectId: studyId, request: why ? { action, why } : { action }, actor: deps.actor },
      send: () => client.transitionStudy(studyId, action),
      answerOf: (a) => ({ answer: { status: statusInAnswer(a) } }),
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
    return withPlatformLock(deps.db, 'prolific', batchId, `study ${action.toLowerCase()}`, deps.clock, async (lock) => {
      const locked = { ...deps, lock };
      await reconcileUnconfirmed('prolific', batchId, checkOperation(client, deps), operationDeps(locked));
      const study = await client.getStudy(studyId);
      const already = { PAUSE: ['PAUSED'], START: ['ACTIVE'], STOP: ['AWAITING REVIEW', 'COMPLETED'] }[action];
      if (!already.includes(study.status)) await transitionStudy(locked, client, batchId, studyId, action);
      return (await client.getStudy(studyId)).status;
    });
  });
}

export type StudyTarget = 'active' | 'paused' | 'stopped';

/**
 * How the server brings a study to what its batch asks (src/recruiting/platform-follow.ts): the transition from each
 * status Prolific shows (the study object: ACTIVE ⇄ PAUSED by PAUSE and START, STOP to AWAITING REVIEW), and the
 * statuses in which nobody more is sent (a draft, a study awaiting review or completed) or, for `active`, it is open.
 */
const FOLLOW: Record<StudyTarget, { moves: Partial<Record<string, StudyAction>>; reached: readonly string[] }> = {
  paused: { moves: { ACTIVE: 'PAUSE' }, reached: ['PAUSED', 'AWAITING REVIEW', 'COMPLETED', 'UNPUBLISHED'] },
  stopped: { moves: { ACTIVE: 'STOP', PAUSED: 'STOP' }, reached: ['AWAITING REVIEW', 'COMPLETED', 'UNPUBLISHED'] },
  active: { moves: { PAUSED: 'START' }, reached: ['ACTIVE', 'AWAITING REVIEW', 'COMPLETED', 'UNPUBLISHED'] },
};

/**
 * Brings the batch's Prolific study to `target`, through the ledger like every transition: `sent` when a transition
 * was sent, `reached` when Prolific then shows the study so (a study PUBLISHING or SCHEDULED is left for the next try).
 */
export function followProlificStudy(deps: ProlificDeps, batchId: number, target: StudyTarget, why: string): Promise<{ status: string; sent: boolean; reached: boolean }> {
  return withPlatformErrors(async () => {
    const studyId = findProlificStudyId(deps.db, batchId);
    if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study.`, 409);
    const client = requireClient(deps.config);
    return withPlatformLock(deps.db, 'prolific', batchId, 'study follows its batch', deps.clock, async (lock) => {
      const locked = { ...deps, lock };
      // Only the study's own transitions: a bonus pay left unclear must not keep the study open.
      await reconcileUnconfirmed('prolific', batchId, checkOperation(client, deps), operationDeps(locked), ['publish', 'pause', 'start', 'stop']);
      const before = (await client.getStudy(studyId)).status;
      const action = FOLLOW[target].moves[before];
      if (action) await transitionStudy(locked, client, batchId, studyId, action, why);
      const status = action ? (await client.getStudy(studyId)).status : before;
      return { status, sent: action !== undefined, reached: FOLLOW[target].reached.includes(status) };
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
  mismatches: SettlePlan['mismatches'];
  /** Participants left to a person, each with their submission's status and, while it awaits review, its deadline. */
  review: ReviewItem[];
  /** Every submission awaiting review that settle leaves, soonest first: Prolific approves each itself then. */
  deadlines: Deadline[];
  /** What Prolific took and has not shown done: approvals and bonus pays (asynchronous on Prolific's side). */
  inFlight: InFlight;
};

/**
 * `prolific status`: the study's state and places, submissions by status next to simarena's outcomes, every mismatch
 * named, what is still in flight, and every day-21 deadline.
 */
export function prolificStatus(deps: ProlificDeps, batchId: number): Promise<ProlificStatus> {
  return withPlatformErrors(async () => {
    const batch = requirePlatformBatch(deps.db, batchId, 'prolific');
    const studyId = findProlificStudyId(deps.db, batchId);
    if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study (publish it with: simarena prolific publish ${batchId}).`, 409);
    const client = requireClient(deps.config);
    const [study, submissions, participants] = await Promise.all([client.getStudy(studyId), client.listSubmissions(studyId), listDecidedParticipants(deps.db, batchId, { clock: deps.clock })]);
    const counts = (values: string[]) => values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {});
    const prolificOnes = (participants ?? []).filter((p) => p.provider === 'prolific');
    const plan = planSettle(prolificOnes, submissions, batch.settings, coveredOf(deps.db, batchId));
    return {
      studyId,
      state: study.status,
      places: study.total_available_places ?? null,
      placesTaken: study.places_taken ?? null,
      submissions: counts(submissions.map((s) => s.status)),
      outcomes: counts(prolificOnes.map((p) => p.outcome)),
      mismatches: plan.mismatches,
      review: plan.review,
      deadlines: plan.deadlines,
      inFlight: await readInFlight(deps.db, client, batchId, submissions, deps.clock),
    };
  });
}
