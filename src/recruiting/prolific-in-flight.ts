import type { Db } from '../db/connection.js';
import { listSeenEffects, recordOperationEffect } from './operation-effects.queries.js';
import { listBatchOperations, listOperationLines } from './platform-operations.queries.js';
import type { ProlificClient } from './prolific-client.js';
import type { ProlificSubmission } from './prolific.schema.js';
import { bonusShown } from './prolific-reconcile.js';

// What simarena sent that Prolific has not finished: its bulk approve and bonus pay are carried out after their answer
// ("Bulk approve in progress"; "Bonus payments are made asynchronously. The payment will be done in the following
// minutes": docs.prolific.com), so a 2xx is a request taken, and only Prolific's state says it was done.

/** A submission in a bulk approve Prolific took that it does not show APPROVED yet. */
export type ApprovalInFlight = { participantId: string; submissionId: string; status: string; sentAt: string };

/** A bulk bonus pay not seen on every participant's submission yet; `answered`: false when its answer was lost. */
export type PayInFlight = { bulkId: string; operationId: number; participants: number; amountMinor: number; currency: string; sentAt: string; shown: number; answered: boolean };

export type InFlight = { approvals: ApprovalInFlight[]; pays: PayInFlight[] };

/** Statuses of a submission whose approval Prolific has not made yet. */
const AWAITING = ['AWAITING REVIEW', 'PROCESSING'];

/** The lines of the batch's accepted bulk approves whose submission Prolific still shows awaiting review, latest send first. */
export function approvalsInFlight(db: Db, batchId: number, submissions: readonly ProlificSubmission[]): ApprovalInFlight[] {
  const statusOf = new Map(submissions.map((s) => [s.id, s.status]));
  const out = new Map<string, ApprovalInFlight>();
  const approves = listBatchOperations(db, batchId, 'prolific').filter((o) => o.kind === 'approve' && o.state === 'confirmed');
  for (const op of approves.reverse()) {
    for (const l of listOperationLines(db, op.id)) {
      const status = statusOf.get(l.submission_id ?? '');
      if (!l.submission_id || !status || !AWAITING.includes(status) || out.has(l.submission_id)) continue;
      out.set(l.submission_id, { participantId: l.participant_id, submissionId: l.submission_id, status, sentAt: op.sent_at ?? op.created_at });
    }
  }
  return [...out.values()];
}

/**
 * The batch's bonus pays Prolific has not been seen to make on every submission, each read from the participants'
 * submissions; one seen made is written down (migration 047) and not read again.
 */
export async function paysInFlight(db: Db, client: ProlificClient, batchId: number, clock: () => Date): Promise<PayInFlight[]> {
  const seen = listSeenEffects(db, batchId);
  const out: PayInFlight[] = [];
  for (const op of listBatchOperations(db, batchId, 'prolific')) {
    if (op.kind !== 'bonus_pay' || op.state === 'failed' || op.state === 'pending' || seen.has(op.id)) continue;
    const lines = listOperationLines(db, op.id);
    const shown = await bonusShown(client, db, op, lines);
    if (op.state === 'confirmed' && shown.shown === shown.of) {
      recordOperationEffect(db, op.id, clock());
      continue;
    }
    out.push({
      bulkId: op.platform_object_id ?? '?',
      operationId: op.id,
      participants: lines.length,
      amountMinor: op.amount_minor ?? 0,
      currency: op.currency ?? '',
      sentAt: op.sent_at ?? op.created_at,
      shown: shown.shown,
      answered: op.state === 'confirmed',
    });
  }
  return out;
}

export async function readInFlight(db: Db, client: ProlificClient, batchId: number, submissions: readonly ProlificSubmission[], clock: () => Date): Promise<InFlight> {
  return { approvals: approvalsInFlight(db, batchId, submissions), pays: await paysInFlight(db, client, batchId, clock) };
}
