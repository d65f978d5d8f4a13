import type { Db } from '../db/connection.js';

// The ledger of operations sent to Prolific and MTurk (migration 034) and the platform objects a batch is published
// as. Written only by src/recruiting/: recorded before sending, marked when the answer arrives.

export const PLATFORMS = ['prolific', 'mturk'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const OPERATION_KINDS = [
  'study_create',
  'publish',
  'pause',
  'start',
  'stop',
  'approve',
  'reject',
  'return',
  'screen_out',
  'bonus_create',
  'bonus_pay',
  'bonus',
  'hit_type_create',
  'hit_create',
  'expire',
  'qualification_create',
  'qualification_assign',
  'hook_secret',
  'hook_subscribe',
  'hook_confirm',
] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

export const OPERATION_STATES = ['pending', 'sent', 'confirmed', 'failed', 'unknown'] as const;
export type OperationState = (typeof OPERATION_STATES)[number];

export type PlatformOperationRow = {
  id: number;
  platform: Platform;
  batch_id: number;
  kind: OperationKind;
  participant_id: string | null;
  submission_id: string | null;
  assignment_id: string | null;
  platform_object_id: string | null;
  amount_minor: number | null;
  currency: string | null;
  idempotency_key: string;
  state: OperationState;
  attempts: number;
  /** JSON: a summary of what was asked (never a token). */
  request: string;
  /** JSON: what the platform answered. */
  answer: string | null;
  error: string | null;
  actor: string;
  created_at: string;
  sent_at: string | null;
  answered_at: string | null;
};

export type OperationLine = { participantId: string; submissionId?: string | null; amountMinor?: number | null };

export type NewPlatformOperation = {
  platform: Platform;
  batchId: number;
  kind: OperationKind;
  idempotencyKey: string;
  participantId?: string | null;
  submissionId?: string | null;
  assignmentId?: string | null;
  platformObjectId?: string | null;
  amountMinor?: number | null;
  currency?: string | null;
  /** A summary of the request, stored as JSON (no token: the caller's redaction runs before this). */
  request: unknown;
  actor: string;
  /** The participants of a bulk operation. */
  lines?: readonly OperationLine[];
};

const COLUMNS = `id, platform, batch_id, kind, participant_id, submission_id, assignment_id, platform_object_id, amount_minor, currency,
  idempotency_key, state, attempts, request, answer, error, actor, created_at, sent_at, answered_at`;

export function findOperationByKey(db: Db, key: string): PlatformOperationRow | undefined {
  return db.prepare<{ key: string }, PlatformOperationRow>(`SELECT ${COLUMNS} FROM platform_operations WHERE idempotency_key = :key`).get({ key });
}

export function getOperation(db: Db, id: number): PlatformOperationRow | undefined {
  return db.prepare<{ id: number }, PlatformOperationRow>(`SELECT ${COLUMNS} FROM platform_operations WHERE id = :id`).get({ id });
}

/**
 * Records an operation before it is sent, with its lines, in one transaction. When an operation with the same
 * idempotency key exists, nothing is written and that one is returned (`created: false`): the caller reconciles it.
 */
export function recordOperation(db: Db, op: NewPlatformOperation, now: Date): { operation: PlatformOperationRow; created: boolean } {
  return db
    .transaction(() => {
      const known = findOperationByKey(db, op.idempotencyKey);
      if (known) return { operation: known, created: false };
      const id = Number(
        db
          .prepare(
            `INSERT INTO platform_operations (platform, batch_id, kind, participant_id, submission_id, assignment_id, platform_object_id, amount_minor,
               currency, idempotency_key, state, request, actor, created_at)
             VALUES (:platform, :batchId, :kind, :participantId, :submissionId, :assignmentId, :platformObjectId, :amountMinor, :currency, :key, 'pending',
               :request, :actor, :now)`,
          )
          .run({
            platform: op.platform,
            batchId: op.batchId,
            kind: op.kind,
            participantId: op.participantId ?? null,
            submissionId: op.submissionId ?? null,
            assignmentId: op.assignmentId ?? null,
            platformObjectId: op.platformObjectId ?? null,
            amountMinor: op.amountMinor ?? null,
            currency: op.currency ?? null,
            key: op.idempotencyKey,
            request: JSON.stringify(op.request ?? {}),
            actor: op.actor,
            now: now.toISOString(),
          }).lastInsertRowid,
      );
      const line = db.prepare(
        'INSERT INTO platform_operation_lines (operation_id, participant_id, submission_id, amount_minor) VALUES (:id, :participantId, :submissionId, :amountMinor)',
      );
      for (const l of op.lines ?? []) line.run({ id, participantId: l.participantId, submissionId: l.submissionId ?? null, amountMinor: l.amountMinor ?? null });
      return { operation: getOperation(db, id) as PlatformOperationRow, created: true };
    })
    .immediate();
}

/** Marks an operation as leaving now (before the request is made): a crash after this leaves it to be reconciled. */
export function markOperationSent(db: Db, id: number, now: Date): void {
  db.prepare(
    "UPDATE platform_operations SET state = 'sent', attempts = attempts + 1, sent_at = :now WHERE id = :id AND state <> 'confirmed'",
  ).run({ id, now: now.toISOString() });
}

export type OperationAnswer = {
  state: 'confirmed' | 'failed' | 'unknown';
  /** What the platform answered (JSON-serialisable; no token). */
  answer?: unknown;
  error?: string | null;
  /** An id the answer created (a study, a bulk-bonus batch, a HIT), stored as soon as it is known. */
  platformObjectId?: string | null;
};

/** Marks the platform's answer (or its absence: `unknown`). A confirmed operation stays confirmed. */
export function markOperationAnswered(db: Db, id: number, answer: OperationAnswer, now: Date): void {
  db.prepare(
    `UPDATE platform_operations SET state = :state, answer = coalesce(:answer, answer), error = :error,
       platform_object_id = coalesce(:objectId, platform_object_id), answered_at = :now, sent_at = coalesce(sent_at, :now)
     WHERE id = :id AND state <> 'confirmed'`,
  ).run({
    id,
    state: answer.state,
    answer: answer.answer === undefined ? null : JSON.stringify(answer.answer),
    error: answer.error == null ? null : answer.error.slice(0, 2000),
    objectId: answer.platformObjectId ?? null,
    now: now.toISOString(),
  });
}

/** Stores the platform object an operation created (a bulk-bonus id) the moment it is known, whatever its state. */
export function setOperationObjectId(db: Db, id: number, platformObjectId: string): void {
  db.prepare('UPDATE platform_operations SET platform_object_id = :platformObjectId WHERE id = :id').run({ id, platformObjectId });
}

/** A batch's operations on a platform that are not known to be done or refused: each is reconciled before anything else is sent. */
export function findUnconfirmedOperations(db: Db, platform: Platform, batchId: number): PlatformOperationRow[] {
  return db
    .prepare<{ platform: Platform; batchId: number }, PlatformOperationRow>(
      `SELECT ${COLUMNS} FROM platform_operations WHERE platform = :platform AND batch_id = :batchId AND state IN ('pending', 'sent', 'unknown') ORDER BY id`,
    )
    .all({ platform, batchId });
}

/** A batch's operations, oldest first (all platforms, or one). */
export function listBatchOperations(db: Db, batchId: number, platform?: Platform): PlatformOperationRow[] {
  return db
    .prepare<{ batchId: number; platform: Platform | null }, PlatformOperationRow>(
      `SELECT ${COLUMNS} FROM platform_operations WHERE batch_id = :batchId AND (:platform IS NULL OR platform = :platform) ORDER BY id`,
    )
    .all({ batchId, platform: platform ?? null });
}

/** The columns the console's log shows of an operation (not the request and answer JSON, which it does not show). */
export type OperationLogRow = Pick<
  PlatformOperationRow,
  'id' | 'created_at' | 'kind' | 'platform_object_id' | 'participant_id' | 'amount_minor' | 'currency' | 'state' | 'attempts' | 'actor' | 'error'
>;

/**
 * One page of a batch's operations on a platform, newest first: the console's log of what was sent. A batch settled on
 * MTurk has an approval and a bonus per worker, so the log is read a page at a time, in the order of index
 * platform_operations_log (migration 081).
 */
export function listBatchOperationsPage(db: Db, batchId: number, platform: Platform, limit: number, offset: number): OperationLogRow[] {
  return db
    .prepare<{ batchId: number; platform: Platform; limit: number; offset: number }, OperationLogRow>(
      `SELECT id, created_at, kind, platform_object_id, participant_id, amount_minor, currency, state, attempts, actor, error
       FROM platform_operations WHERE batch_id = :batchId AND platform = :platform ORDER BY id DESC LIMIT :limit OFFSET :offset`,
    )
    .all({ batchId, platform, limit, offset });
}

export type OperationTally = { kind: OperationKind; state: OperationState; n: number };

/** How many of a batch's operations on a platform are of each kind and state (read from index platform_operations_by_batch). */
export function tallyBatchOperations(db: Db, batchId: number, platform: Platform): OperationTally[] {
  return db
    .prepare<{ batchId: number; platform: Platform }, OperationTally>(
      `SELECT kind, state, count(*) AS n FROM platform_operations WHERE batch_id = :batchId AND platform = :platform GROUP BY kind, state ORDER BY kind, state`,
    )
    .all({ batchId, platform });
}

export type OperationLineRow = { operation_id: number; participant_id: string; submission_id: string | null; amount_minor: number | null };

export function listOperationLines(db: Db, operationId: number): OperationLineRow[] {
  return db
    .prepare<{ operationId: number }, OperationLineRow>(
      'SELECT operation_id, participant_id, submission_id, amount_minor FROM platform_operation_lines WHERE operation_id = :operationId ORDER BY participant_id',
    )
    .all({ operationId });
}

/**
 * The participants a kind of operation of the batch already covers or may have covered (every state but `failed`:
 * a refused operation did nothing), one-person and bulk alike: a settle leaves them out of new operations.
 */
export function coveredParticipants(db: Db, platform: Platform, batchId: number, kind: OperationKind): Set<string> {
  const rows = db
    .prepare<{ platform: Platform; batchId: number; kind: OperationKind }, string>(
      `SELECT o.participant_id FROM platform_operations o
       WHERE o.platform = :platform AND o.batch_id = :batchId AND o.kind = :kind AND o.state <> 'failed' AND o.participant_id IS NOT NULL
       UNION
       SELECT l.participant_id FROM platform_operations o JOIN platform_operation_lines l ON l.operation_id = o.id
       WHERE o.platform = :platform AND o.batch_id = :batchId AND o.kind = :kind AND o.state <> 'failed'`,
    )
    .pluck()
    .all({ platform, batchId, kind });
  return new Set(rows);
}

export type BatchPlatformLink = { batch_id: number; platform: Platform; kind: 'study' | 'hit_type' | 'hit' | 'qualification'; platform_id: string; sandbox: number; created_at: string };

/** Stores a platform object the batch is published as (idempotent). */
export function linkBatchToPlatform(db: Db, link: { batchId: number; platform: Platform; kind: BatchPlatformLink['kind']; platformId: string; sandbox?: boolean }, now: Date): void {
  db.prepare(
    `INSERT INTO batch_platform_links (batch_id, platform, kind, platform_id, sandbox, created_at) VALUES (:batchId, :platform, :kind, :platformId, :sandbox, :now)
     ON CONFLICT (batch_id, platform, kind, platform_id) DO NOTHING`,
  ).run({ batchId: link.batchId, platform: link.platform, kind: link.kind, platformId: link.platformId, sandbox: link.sandbox ? 1 : 0, now: now.toISOString() });
}

export function listBatchPlatformLinks(db: Db, batchId: number, platform?: Platform): BatchPlatformLink[] {
  return db
    .prepare<{ batchId: number; platform: Platform | null }, BatchPlatformLink>(
      `SELECT batch_id, platform, kind, platform_id, sandbox, created_at FROM batch_platform_links
       WHERE batch_id = :batchId AND (:platform IS NULL OR platform = :platform) ORDER BY created_at, platform_id`,
    )
    .all({ batchId, platform: platform ?? null });
}

/** The batch's Prolific study id, when it was published there. */
export function findProlificStudyId(db: Db, batchId: number): string | undefined {
  return db
    .prepare<{ batchId: number }, string>("SELECT platform_id FROM batch_platform_links WHERE batch_id = :batchId AND platform = 'prolific' AND kind = 'study'")
    .pluck()
    .get({ batchId });
}
