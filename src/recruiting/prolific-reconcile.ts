import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { PlatformError } from './platform-error.js';
import type { PlatformCheck } from './platform-operation.js';
import { listBatchOperations, listOperationLines, type PlatformOperationRow } from './platform-operations.queries.js';
import type { ProlificClient } from './prolific-client.js';

// How simarena reads Prolific's own state of an operation whose answer it does not have (a crash, a timeout, a 5xx)
// before it sends anything again: each kind of operation by what Prolific shows of it.

export type ReconcileDeps = { db: Db; clock: () => Date };

/** What a recorded study creation asked for, as far as finding the study again needs it. */
const studyRequestSchema = z.looseObject({ internal_name: z.string() });

/**
 * Prolific pays a bulk bonus within minutes of the pay call: a pay whose answer was lost is taken as not paid only
 * when the submissions still show no such bonus this long after it was sent.
 */
export const BONUS_SETTLE_MINUTES = 15;

/** Reads Prolific's state of any operation this module sends (the reconciliation before anything is sent again). */
export function checkOperation(client: ProlificClient, deps: ReconcileDeps): (op: PlatformOperationRow) => Promise<PlatformCheck> {
  return async (op) => {
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
      default:
        throw new PlatformError(`Operation ${op.id} (${op.kind}) is not one simarena sends to Prolific; check it by hand.`, 409);
    }
  };
}

/**
 * A bulk bonus pay whose answer was lost is paid when every participant's submission shows one more bonus of its
 * amount than the pays confirmed before; unpaid when none does and Prolific has had BONUS_SETTLE_MINUTES to pay it.
 * Anything else stops the settle: Prolific's pay is not idempotent, so nothing is sent until it is clear.
 */
async function checkBonusPaid(client: ProlificClient, deps: ReconcileDeps, op: PlatformOperationRow, lines: ReturnType<typeof listOperationLines>): Promise<PlatformCheck> {
  const confirmedBefore = listBatchOperations(deps.db, op.batch_id, 'prolific').filter((o) => o.kind === 'bonus_pay' && o.state === 'confirmed' && o.id !== op.id);
  const paidBefore = new Map<string, number>();
  for (const o of confirmedBefore) for (const l of listOperationLines(deps.db, o.id)) paidBefore.set(`${l.participant_id}:${l.amount_minor}`, (paidBefore.get(`${l.participant_id}:${l.amount_minor}`) ?? 0) + 1);
  let shown = 0;
  for (const l of lines) {
    const s = await client.getSubmission(l.submission_id ?? '');
    const n = (s.bonus_payments ?? []).filter((cents) => cents === l.amount_minor).length;
    if (n > (paidBefore.get(`${l.participant_id}:${l.amount_minor}`) ?? 0)) shown++;
  }
  if (shown === lines.length) return { done: true, answer: { shownPaid: shown } };
  const sentAt = Date.parse(op.sent_at ?? op.created_at);
  if (shown === 0 && deps.clock().getTime() - sentAt >= BONUS_SETTLE_MINUTES * 60_000) return { done: false };
  throw new PlatformError(
    shown === 0
      ? `The bonus payment ${op.platform_object_id} was sent at ${op.sent_at} and its answer was lost; Prolific pays within minutes, so whether it was paid is not clear yet. Run settle again after ${BONUS_SETTLE_MINUTES} minutes: it is never paid twice.`
      : `The bonus payment ${op.platform_object_id} shows as paid for ${shown} of ${lines.length} participants: check it on Prolific (or ask Prolific's support) before paying anything else; settle will not send it again.`,
    409,
    'bonus_unclear',
  );
}
