import { createHash } from 'node:crypto';
import { recordAudit } from '../audit/audit.queries.js';
import type { BatchView } from '../batches/batch.commands.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { listDecidedParticipants } from './decided-participants.js';
import { RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { PlatformError, PlatformHttpError, withPlatformErrors } from './platform-error.js';
import { withPlatformLock } from './platform-lock.js';
import { type OperationDeps, reconcileUnconfirmed, runPlatformOperation } from './platform-operation.js';
import {
  coveredParticipants,
  findProlificStudyId,
  findUnconfirmedOperations,
  listBatchOperations,
  listOperationLines,
  markOperationAnswered,
  type OperationKind,
  type PlatformOperationRow,
} from './platform-operations.queries.js';
import { recordOperationEffect } from './operation-effects.queries.js';
import type { ProlificClient } from './prolific-client.js';
import { type InFlight, readInFlight } from './prolific-in-flight.js';
import { formatMinor, majorText, prolificReward } from '../batches/prolific-pay.js';
import { requireStudyTerms } from './prolific-currency.js';
import { chunks, type Covered, formatUtc, planSettle, type SettlePlan } from './prolific-plan.js';
import { bonusShown, checkOperation, unclearPayMessage } from './prolific-reconcile.js';
import { operationDeps, type ProlificDeps, requireClient } from './prolific-deps.js';

// `prolific settle`: reconciles what an earlier run left unconfirmed with Prolific's own state, plans from simarena's
// decisions and Prolific's submissions (planSettle), then runs its phases (approvals, screen-outs, returns, bonuses)
// one after another but independently: a phase Prolific refuses, or whose earlier operation is unclear, is reported and
// the others still run. Every request goes through runPlatformOperation (recorded before it is sent).

/**
 * Submissions per bulk approve request. Prolific recommends "a maximum of 1,000 submission or participant IDs" a
 * request (docs.prolific.com, Bulk approve submissions); fewer, so one lost answer leaves fewer in doubt.
 */
export const APPROVE_CHUNK = 100;
/**
 * Participants per bulk bonus. Prolific documents no limit on one bulk bonus (docs.prolific.com, Set up bonuses);
 * simarena's own bound, so one pay whose answer is lost leaves at most this many participants in doubt.
 */
export const BONUS_CHUNK = 200;

export type SettlePhase = 'approvals' | 'screen-outs' | 'returns' | 'bonuses';
/** A phase that stopped: what Prolific refused, or which earlier operation is not clear; the other phases ran. */
export type SettleProblem = { phase: SettlePhase; message: string };

export type SettleResult = {
  studyId: string;
  currency: string;
  plan: SettlePlan;
  reconciled: { confirmed: number; notDone: number };
  /** Requests Prolific took now. A bulk approve and a pay are carried out afterwards: see `inFlight`. */
  sent: { approved: number; returned: number; bonusesPaid: number; bonusMinor: number };
  problems: SettleProblem[];
  /** What Prolific has taken but not shown done, read after the phases (null when it could not be read then). */
  inFlight: InFlight | null;
};

export type SettleOptions = { dryRun: boolean; confirmUnpaid?: string };

type Context = { deps: ProlificDeps; batch: BatchView; studyId: string; currency: string; client: ProlificClient; ops: OperationDeps; check: ReturnType<typeof checkOperation> };

const PHASE_KINDS: Record<SettlePhase, readonly OperationKind[]> = { approvals: ['approve'], 'screen-outs': ['screen_out'], returns: ['return'], bonuses: ['bonus_create'] };

/** What earlier settles sent that Prolific's list of submissions may not show (planSettle's `covered`). */
export function coveredOf(db: Db, batchId: number): Covered {
  return { returns: coveredParticipants(db, 'prolific', batchId, 'return'), bonus: coveredParticipants(db, 'prolific', batchId, 'bonus_create') };
}

const keyHash = (parts: readonly string[]) => createHash('sha256').update([...parts].sort().join('\n')).digest('hex').slice(0, 20);

/**
 * `prolific settle`: unless `dryRun`, approves in bulk, asks for returns and pays the bonuses (each bulk bonus set up,
 * its id stored, before it is paid; a pay whose answer was lost is sent again only with `confirmUnpaid` naming it).
 */
export function settleOnProlific(deps: ProlificDeps, batchId: number, options: SettleOptions): Promise<SettleResult> {
  if (options.dryRun && options.confirmUnpaid) return Promise.reject(new RecruitingError('--confirm-unpaid sends the payment again: run it without --dry-run.', 400));
  const settle = () => settleUnlocked(deps, batchId, options);
  return withPlatformErrors(() => (options.dryRun ? settle() : withPlatformLock(deps.db, 'prolific', batchId, 'settle', deps.clock, (lock) => settleUnlocked({ ...deps, lock }, batchId, options))));
}

function contextOf(deps: ProlificDeps, batchId: number): Context {
  const batch = requirePlatformBatch(deps.db, batchId, 'prolific');
  const reward = prolificReward(batch.settings.pay);
  if (!reward) throw new RecruitingError(`Batch ${batchId} has no pay Prolific can use ("${batch.settings.pay}"): set "pay", e.g. "£2.50".`, 400);
  const studyId = findProlificStudyId(deps.db, batchId);
  if (!studyId) throw new RecruitingError(`Batch ${batchId} has no Prolific study (publish it with: simarena prolific publish ${batchId}).`, 409);
  const client = requireClient(deps.config);
  return { deps, batch, studyId, currency: reward.currency, client, ops: operationDeps(deps), check: checkOperation(client, deps) };
}

/** Runs one phase: a refusal or an unclear operation (a UserFacingError) is kept as the phase's problem. */
async function phase(problems: SettleProblem[], name: SettlePhase, work: () => Promise<void>): Promise<boolean> {
  try {
    await withPlatformErrors(work);
    return true;
  } catch (error) {
    if (!(error instanceof UserFacingError)) throw error;
    problems.push({ phase: name, message: error.message });
    return false;
  }
}

async function settleUnlocked(deps: ProlificDeps, batchId: number, options: SettleOptions): Promise<SettleResult> {
  const ctx = contextOf(deps, batchId);
  const problems: SettleProblem[] = [];
  const reconciled = { confirmed: 0, notDone: 0 };
  const ready = new Set<SettlePhase>();
  for (const name of Object.keys(PHASE_KINDS) as SettlePhase[]) {
    const ok = options.dryRun || (await phase(problems, name, () => reconcilePhase(ctx, name, reconciled, options.confirmUnpaid)));
    if (ok) ready.add(name);
  }
  const participants = (await listDecidedParticipants(deps.db, batchId, { clock: deps.clock })) ?? [];
  const submissions = await ctx.client.listSubmissions(ctx.studyId);
  const plan = planSettle(participants, submissions, ctx.batch.settings, coveredOf(deps.db, batchId));
  const sent = { approved: 0, returned: 0, bonusesPaid: 0, bonusMinor: 0 };
  const result: SettleResult = { studyId: ctx.studyId, currency: ctx.currency, plan, reconciled, sent, problems, inFlight: null };
  if (options.dryRun) return { ...result, inFlight: await readInFlight(deps.db, ctx.client, batchId, submissions, deps.clock) };
  if (ready.has('approvals')) await phase(problems, 'approvals', () => approve(ctx, plan, sent));
  if (ready.has('returns')) await phase(problems, 'returns', () => askReturns(ctx, plan, sent));
  if (ready.has('bonuses')) await phase(problems, 'bonuses', () => payBonuses(ctx, plan, sent));
  // Read back after sending; Prolific not answering now loses only this report, not what was sent.
  result.inFlight = await ctx.client
    .listSubmissions(ctx.studyId)
    .then((after) => readInFlight(deps.db, ctx.client, batchId, after, deps.clock))
    .catch((error: unknown) => {
      if (error instanceof PlatformHttpError) return null;
      throw error;
    });
  return result;
}

/** Reconciles a phase's operations an earlier run left unconfirmed; the bonuses' pays by what Prolific shows of them. */
async function reconcilePhase(ctx: Context, name: SettlePhase, total: SettleResult['reconciled'], confirmUnpaid: string | undefined): Promise<void> {
  if (name === 'bonuses') {
    if (confirmUnpaid) await confirmPayUnpaid(ctx, confirmUnpaid);
    await reconcilePays(ctx, total);
  }
  const counts = await reconcileUnconfirmed('prolific', ctx.batch.id, ctx.check, ctx.ops, PHASE_KINDS[name]);
  total.confirmed += counts.confirmed;
  total.notDone += counts.notDone;
}

/**
 * Every bonus pay an earlier run left unconfirmed: confirmed when Prolific shows its bonus on every submission, known
 * not sent when it never left; any other stops the bonuses with what Prolific shows of each (reconcile module).
 */
async function reconcilePays(ctx: Context, total: SettleResult['reconciled']): Promise<void> {
  const { db, clock } = ctx.deps;
  const unclear: string[] = [];
  for (const op of findUnconfirmedOperations(db, 'prolific', ctx.batch.id).filter((o) => o.kind === 'bonus_pay')) {
    if (op.state === 'pending') {
      markOperationAnswered(db, op.id, { state: 'failed', error: 'never sent (the process stopped before the request left)' }, clock());
      total.notDone++;
      continue;
    }
    const seen = await bonusShown(ctx.client, db, op, listOperationLines(db, op.id));
    if (seen.shown < seen.of) {
      unclear.push(unclearPayMessage(op, seen));
      continue;
    }
    recordOperationEffect(db, op.id, clock());
    markOperationAnswered(db, op.id, { state: 'confirmed', answer: { reconciled: true, platform: { shownPaid: seen.shown } } }, clock());
    total.confirmed++;
  }
  if (unclear.length > 0) throw new PlatformError(unclear.join(' '), 409, 'bonus_unclear');
}

/**
 * The researcher's word that a bonus pay whose answer was lost was not made (`--confirm-unpaid BULK_ID`): refused
 * unless that pay is unconfirmed and Prolific shows it on no submission; written to the audit log with what Prolific
 * showed, and the pay marked not done, so this settle sends it again.
 */
async function confirmPayUnpaid(ctx: Context, bulkId: string): Promise<void> {
  const { db, clock, actor } = ctx.deps;
  const batchId = ctx.batch.id;
  const op = listBatchOperations(db, batchId, 'prolific').find((o) => o.kind === 'bonus_pay' && o.platform_object_id === bulkId);
  if (!op) throw new RecruitingError(`No bonus payment ${bulkId} was sent for batch ${batchId}: --confirm-unpaid names the bulk bonus id settle printed.`, 404);
  if (!['sent', 'unknown'].includes(op.state)) {
    throw new RecruitingError(`The bonus payment ${bulkId} is not one whose answer was lost (it is ${op.state}): nothing to confirm, and it is not sent again on your word.`, 409);
  }
  const lines = listOperationLines(db, op.id);
  const seen = await bonusShown(ctx.client, db, op, lines);
  if (seen.shown > 0) {
    throw new RecruitingError(`Prolific shows the bonus payment ${bulkId} on ${seen.shown} of ${seen.of} submission(s): it was paid at least in part, so it is not sent again. Pay anyone left by hand.`, 409);
  }
  db.transaction(() => {
    const details = { batchId, bulkBonusId: bulkId, sentAt: op.sent_at, participants: lines.length, shownOn: seen.shown, amountMinor: op.amount_minor, currency: op.currency };
    recordAudit(db, { actor, action: 'prolific.bonus_confirmed_unpaid', targetType: 'platform_operation', targetId: op.id, details }, clock());
    markOperationAnswered(db, op.id, { state: 'failed', error: `confirmed not paid by ${actor} (Prolific showed it on none of ${seen.of} submission(s))` }, clock());
  })();
}

/** Approves what awaits review, in bulk; a bulk approve sent before whose submissions still await review is sent anew. */
async function approve(ctx: Context, plan: SettlePlan, sent: SettleResult['sent']): Promise<void> {
  const batchId = ctx.batch.id;
  for (const chunk of chunks(plan.approve, APPROVE_CHUNK)) {
    const ids = chunk.map((p) => p.submissionId);
    const prefix = `prolific:batch:${batchId}:approve:${keyHash(ids)}`;
    const earlier = listBatchOperations(ctx.deps.db, batchId, 'prolific').filter((o) => o.idempotency_key.startsWith(prefix)).length;
    await runPlatformOperation(
      {
        operation: {
          platform: 'prolific', batchId, kind: 'approve', idempotencyKey: `${prefix}:${earlier + 1}`, platformObjectId: ctx.studyId, request: { submission_ids: ids }, actor: ctx.deps.actor,
          lines: chunk.map((p) => ({ participantId: p.participantId, submissionId: p.submissionId })),
        },
        send: () => ctx.client.bulkApprove(ids),
        answerOf: (a) => ({ answer: a.body }),
        check: ctx.check,
      },
      ctx.ops,
    );
    sent.approved += chunk.length;
  }
}

async function askReturns(ctx: Context, plan: SettlePlan, sent: SettleResult['sent']): Promise<void> {
  const batchId = ctx.batch.id;
  for (const p of plan.returns) {
    const reasons = [p.why.slice(0, 200)];
    await runPlatformOperation(
      {
        operation: { platform: 'prolific', batchId, kind: 'return', idempotencyKey: `prolific:batch:${batchId}:return:${p.submissionId}`, participantId: p.participantId, submissionId: p.submissionId, request: { request_return_reasons: reasons }, actor: ctx.deps.actor },
        send: () => ctx.client.requestReturn(p.submissionId, reasons),
        answerOf: (a) => ({ answer: a.body }),
        check: ctx.check,
      },
      ctx.ops,
    );
    sent.returned++;
  }
}

/** Pays one bulk bonus set up before; Prolific makes the payment afterwards (pays in flight). */
async function pay(ctx: Context, create: PlatformOperationRow, sent: SettleResult['sent']): Promise<void> {
  const batchId = ctx.batch.id;
  const bulkId = create.platform_object_id as string;
  const lines = listOperationLines(ctx.deps.db, create.id);
  const total = lines.reduce((sum, l) => sum + (l.amount_minor ?? 0), 0);
  const outcome = await runPlatformOperation(
    {
      operation: {
        platform: 'prolific', batchId, kind: 'bonus_pay', idempotencyKey: `prolific:bonus:${bulkId}:pay`, platformObjectId: bulkId, amountMinor: total, currency: ctx.currency, request: { bulk_bonus_id: bulkId }, actor: ctx.deps.actor,
        lines: lines.map((l) => ({ participantId: l.participant_id, submissionId: l.submission_id, amountMinor: l.amount_minor })),
      },
      send: () => ctx.client.payBulkBonus(bulkId),
      answerOf: (a) => ({ answer: a.body }),
      check: ctx.check,
    },
    ctx.ops,
  );
  if (outcome.result !== 'already-done') {
    sent.bonusesPaid += lines.length;
    sent.bonusMinor += total;
  }
}

/** Pays every bulk bonus set up before but not paid, then sets up and pays the plan's new bonuses in chunks. */
async function payBonuses(ctx: Context, plan: SettlePlan, sent: SettleResult['sent']): Promise<void> {
  const { db } = ctx.deps;
  const batchId = ctx.batch.id;
  // Bonus amounts are the batch's, in the study's currency: a study made before simarena checked it may pay in another.
  requireStudyTerms(await ctx.client.getStudy(ctx.studyId), { id: batchId, currency: ctx.currency }, 'pay bonuses');
  const all = listBatchOperations(db, batchId, 'prolific');
  const paid = new Set(all.filter((o) => o.kind === 'bonus_pay' && o.state === 'confirmed').map((o) => o.platform_object_id));
  for (const create of all.filter((o) => o.kind === 'bonus_create' && o.state === 'confirmed' && o.platform_object_id && !paid.has(o.platform_object_id))) await pay(ctx, create, sent);
  for (const chunk of chunks(plan.bonus, BONUS_CHUNK)) {
    const csv = chunk.map((b) => `${b.participantId},${majorText(b.amountMinor)}`).join('\n');
    const total = chunk.reduce((sum, b) => sum + b.amountMinor, 0);
    const created = await runPlatformOperation(
      {
        operation: {
          platform: 'prolific', batchId, kind: 'bonus_create', idempotencyKey: `prolific:batch:${batchId}:bonus_create:${keyHash(chunk.map((b) => `${b.participantId}:${b.amountMinor}`))}`,
          amountMinor: total, currency: ctx.currency, request: { study_id: ctx.studyId, csv_bonuses: csv }, actor: ctx.deps.actor,
          lines: chunk.map((b) => ({ participantId: b.participantId, submissionId: b.submissionId, amountMinor: b.amountMinor })),
        },
        send: () => ctx.client.createBulkBonus(ctx.studyId, csv),
        answerOf: (b) => ({ answer: b, platformObjectId: b.id }),
        check: ctx.check,
      },
      ctx.ops,
    );
    if (created.operation.platform_object_id) await pay(ctx, created.operation, sent);
  }
}

/** One line per planned operation with its money, for the dry run and the console's settle page. */
export function describeSettlePlan(plan: SettlePlan, currency: string): string[] {
  const bonusTotal = plan.bonus.reduce((sum, b) => sum + b.amountMinor, 0);
  return [
    `approve: ${plan.approve.length} submission(s)`,
    ...(plan.inFlight.length > 0 ? [`approval in progress on Prolific (PROCESSING): ${plan.inFlight.length}`] : []),
    `ask to return: ${plan.returns.length}`,
    `bonus: ${plan.bonus.length} participant(s), ${formatMinor(bonusTotal, currency)} before Prolific's fees`,
    `review on Prolific (left untouched): ${plan.review.length}`,
    `already done: ${plan.done}`,
    ...plan.mismatches.map((m) => `mismatch: ${m.participantId ?? '?'} (${m.submissionId ?? 'no submission'}): ${m.problem}`),
  ];
}

/** What is still in flight, one line each, for the CLI (status and settle). */
export function describeInFlight(inFlight: InFlight, batchId: number): string[] {
  const lines: string[] = [];
  if (inFlight.approvals.length > 0) {
    lines.push(`in flight: ${inFlight.approvals.length} submission(s) sent for approval that Prolific does not show APPROVED yet (bulk approve is asynchronous; settle approves again what still awaits review)`);
  }
  for (const p of inFlight.pays) {
    const money = formatMinor(p.amountMinor, p.currency);
    lines.push(
      p.answered
        ? `in flight: bonus payment ${p.bulkId} (${p.participants} participant(s), ${money}) taken by Prolific at ${formatUtc(p.sentAt)}; shown on ${p.shown} of ${p.participants} submission(s) so far`
        : `unclear: bonus payment ${p.bulkId} (${p.participants} participant(s), ${money}) sent at ${formatUtc(p.sentAt)}, its answer lost; shown on ${p.shown} of ${p.participants}. Never sent again by itself: if Prolific confirms it unpaid, run simarena prolific settle ${batchId} --confirm-unpaid ${p.bulkId}`,
    );
  }
  return lines;
}
