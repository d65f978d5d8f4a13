import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { PlatformError } from './platform-error.js';
import type { PlatformCheck } from './platform-operation.js';
import { listBatchOperations, listOperationLines, type OperationLineRow, type PlatformOperationRow } from './platform-operations.queries.js';
import { recordOperationEffect } from './operation-effects.queries.js';
import type { ProlificClient } from './prolific-client.js';

// How simarena reads Prolific's own state of an operation whose answer it does not have (a crash, a timeout, a 5xx)
// before it sends anything again: each kind of operation by what Prolific shows of it.

export type ReconcileDeps = { db: Db; clock: () => Date };

/** What a recorded study creation asked for, as far as finding the study again needs it. */
const studyRequestSchema = z.looseObject({ internal_name: z.string() });

/** The command that tells settle a bonus payment whose answer was lost was not made (docs/researcher/recruiting.md). */
export const confirmUnpaidCommand = (batchId: number, bulkId: string) => `simarena prolific settle ${batchId} --confirm-unpaid ${bulkId}`;

/** Reads Prolific's state of any operation this module sends (the reconciliation before anything is sent again). */
export function checkOperation(client: ProlificClient, deps: ReconcileDeps): (op: PlatformOperationRow) => Promise<PlatformCheck> {
  return async (op) => {
    // Recorded but never marked sent: the process stopped before the request left (platform-operation.ts marks an
    // operation sent just before it sends), so Prolific never saw it.
    if (op.state === 'pending') return { done: false };
    const lines = listOperationLines(deps.db, op.id);
    switch (op.kind) {
      case 'study_create': {
        const name = studyRequestSchema.parse(JSON.parse(op.request)).internal_name;
        const found = (await client.listStudies()).find((s) => s.internal_name === name);
        return found ? { done: true, platformObjectId: found.id, answer: { id: found.id, status: found.status } } : { done: false };
      }
      case 'publish':
      case 'pause':
      case 'start':
      case 'stop': {
        const study = await client.getStudy(op.platform_object_id ?? '');
        const reached = { publish: ['ACTIVE', 'PAUSED', 'AWAITING REVIEW', 'COMPLETED'], pause: ['PAUSED'], start: ['ACTIVE'], stop: ['AWAITING REVIEW', 'COMPLETED'] }[op.kind];
        return reached.includes(study.status) ? { done: true, answer: { status: study.status } } : { done: false };
      }
      case 'approve': {
        // Done only when Prolific shows every submission APPROVED. Otherwise it is approved again: an approval is a
        // status change that cannot be undone and is made once ("Once the status is changed, it can not be restored";
        // the transition endpoint "is idempotent": docs.prolific.com, Approve or reject a submission).
        const states = await Promise.all(lines.map(async (l) => (await client.getSubmission(l.submission_id ?? '')).status));
        return states.every((s) => s === 'APPROVED') ? { done: true, answer: { approved: states.length } } : { done: false };
      }
      case 'screen_out':
        return (await client.getSubmission(op.submission_id ?? '')).status === 'SCREENED OUT' ? { done: true } : { done: false };
      case 'return': {
        const s = await client.getSubmission(op.submission_id ?? '');
        return s.return_requested || s.status === 'RETURNED' ? { done: true, answer: { status: s.status } } : { done: false };
      }
      case 'bonus_create':
        // Setting up a bulk bonus pays nothing: one whose id was lost is left unpaid on Prolific and set up again.
        return op.platform_object_id ? { done: true } : { done: false };
      case 'bonus_pay':
        return checkBonusPaid(client, deps, op, lines);
      case 'hook_secret':
      case 'hook_subscribe':
      case 'hook_confirm':
        return checkHookOperation(client, op);
      default:
        throw new PlatformError(`Operation ${op.id} (${op.kind}) is not one simarena sends to Prolific; check it by hand.`, 409);
    }
  };
}

const hookRequestSchema = z.looseObject({ workspace_id: z.string(), target_url: z.string().optional(), event_type: z.string().optional() });

/**
 * Webhook set-up whose answer was lost (src/recruiting/prolific-hooks.ts): a secret is there when Prolific lists one for
 * the workspace (the one active secret, whatever made it); a subscription when one with its target and event type is
 * listed; a confirmation is sent again (confirming with the same secret twice changes nothing).
 */
async function checkHookOperation(client: ProlificClient, op: PlatformOperationRow): Promise<PlatformCheck> {
  const request = hookRequestSchema.parse(JSON.parse(op.request));
  if (op.kind === 'hook_secret') {
    const secret = (await client.listHookSecrets()).find((x) => x.workspace_id === request.workspace_id);
    return secret ? { done: true, platformObjectId: secret.id ?? null } : { done: false };
  }
  if (op.kind === 'hook_subscribe') {
    const found = (await client.listHookSubscriptions()).find((x) => x.target_url === request.target_url && x.event_type === request.event_type && x.workspace_id === request.workspace_id);
    return found ? { done: true, platformObjectId: found.id ?? null } : { done: false };
  }
  return { done: false };
}

/** What Prolific shows of a bulk bonus pay: on how many of its participants' submissions its bonus appears. */
export type BonusShown = { shown: number; of: number };

/**
 * Counts the participants of a bulk bonus pay whose submission shows its bonus: one more payment of the line's amount
 * in `bonus_payments` (pence / cents: docs.prolific.com, Retrieve a submission) than the other pays of the batch that
 * Prolific accepted would explain. A pay Prolific has not made yet shows on none; one being made may show on some.
 */
export async function bonusShown(client: ProlificClient, db: Db, op: PlatformOperationRow, lines: readonly OperationLineRow[]): Promise<BonusShown> {
  const others = listBatchOperations(db, op.batch_id, 'prolific').filter((o) => o.kind === 'bonus_pay' && o.state === 'confirmed' && o.id !== op.id);
  const paidBefore = new Map<string, number>();
  const key = (l: OperationLineRow) => `${l.participant_id}:${l.amount_minor}`;
  for (const o of others) for (const l of listOperationLines(db, o.id)) paidBefore.set(key(l), (paidBefore.get(key(l)) ?? 0) + 1);
  let shown = 0;
  for (const l of lines) {
    const s = await client.getSubmission(l.submission_id ?? '');
    const n = (s.bonus_payments ?? []).filter((cents) => Math.round(cents) === l.amount_minor).length;
    if (n > (paidBefore.get(key(l)) ?? 0)) shown++;
  }
  return { shown, of: lines.length };
}

/** The message for a bonus pay whose answer was lost and that Prolific does not show paid to everyone. */
export function unclearPayMessage(op: PlatformOperationRow, seen: BonusShown): string {
  const bulkId = op.platform_object_id ?? '?';
  const lead = `The bonus payment ${bulkId} (${seen.of} participant(s)) was sent at ${op.sent_at ?? op.created_at} and its answer was lost; Prolific shows it on ${seen.shown} of ${seen.of} submission(s).`;
  if (seen.shown > 0) return `${lead} It was paid at least in part: check it on Prolific (or ask Prolific's support) and pay anyone left by hand; settle will not send it again.`;
  return (
    `${lead} Prolific pays "in the following minutes" and its pay is not idempotent, so settle never sends it again by itself: run settle again later to see it paid, ` +
    `or, once Prolific (its submissions page or its support) confirms it was not paid, resend it with: ${confirmUnpaidCommand(op.batch_id, bulkId)}`
  );
}

/**
 * A bulk bonus pay whose answer was lost is confirmed when every participant's submission shows its bonus. Anything
 * else stops the bonus payments with what Prolific shows: the pay is asynchronous ("The payment will be done in the
 * following minutes") and NOT idempotent (docs.prolific.com, Pay bonuses), so no time without a bonus proves it
 * unpaid; only the researcher's `--confirm-unpaid` resends it.
 */
async function checkBonusPaid(client: ProlificClient, deps: ReconcileDeps, op: PlatformOperationRow, lines: readonly OperationLineRow[]): Promise<PlatformCheck> {
  const seen = await bonusShown(client, deps.db, op, lines);
  if (seen.shown === seen.of) {
    recordOperationEffect(deps.db, op.id, deps.clock());
    return { done: true, answer: { shownPaid: seen.shown } };
  }
  throw new PlatformError(unclearPayMessage(op, seen), 409, 'bonus_unclear');
}
