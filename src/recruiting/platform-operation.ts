import type { Db } from '../db/connection.js';
import { PlatformError, PlatformHttpError, platformName, whatToDoAfter } from './platform-error.js';
import {
  findUnconfirmedOperations,
  getOperation,
  markOperationAnswered,
  markOperationSent,
  type NewPlatformOperation,
  type OperationKind,
  type Platform,
  type PlatformOperationRow,
  recordOperation,
} from './platform-operations.queries.js';
import { redactText, redactValue } from './redact-secrets.js';

// Record → send → mark, for every operation simarena sends to a platform (issue 41). Money is real: an approval, a
// rejection or a payment sent twice cannot be taken back. So each operation is written to the ledger (migration 034)
// under an idempotency key before it is sent; its answer is marked when it arrives; and an operation whose answer was
// lost (a crash, a timeout, a 5xx) is sent again only after the platform's own state shows it was not done.

/** What the platform's state says of an operation that may have been done. */
export type PlatformCheck =
  | { done: true; answer?: unknown; platformObjectId?: string | null }
  /** The platform shows it not done: sending it (again) does it once. */
  | { done: false };

export type OperationSpec<T> = {
  operation: NewPlatformOperation;
  /** Makes the request; throws PlatformHttpError for a non-success answer (status 0: no answer). */
  send: (operation: PlatformOperationRow) => Promise<T>;
  /** What of the answer is stored, and the id it created (a study, a bulk-bonus batch, a HIT). */
  answerOf: (answer: T) => { answer: unknown; platformObjectId?: string | null };
  /** Reads the platform's state of this operation (called only when it may have been done). */
  check: (operation: PlatformOperationRow) => Promise<PlatformCheck>;
};

export type RetryPolicy = {
  /** Tries of one request, the first included. */
  attempts: number;
  /** First wait after a 5xx or no answer; doubled each time up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
};

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };
/** The longest Retry-After honoured: a longer one stops with a message to run again later. */
export const MAX_RETRY_AFTER_SECONDS = 120;

export type OperationDeps = {
  db: Db;
  clock: () => Date;
  /** Every secret the request could carry (API tokens): redacted from whatever is stored or thrown. */
  secrets: readonly string[];
  retry?: Partial<RetryPolicy>;
  sleep?: (ms: number) => Promise<void>;
  /** Called just before each request leaves (the CLI prints a line; tests see the order). */
  onSend?: (operation: PlatformOperationRow) => void;
};

/** `sent`: sent now and confirmed; `already-done`: confirmed before; `reconciled`: the platform showed it done. */
export type OperationOutcome<T> = { operation: PlatformOperationRow; result: 'sent' | 'already-done' | 'reconciled'; answer?: T };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorText(error: unknown): string {
  if (error instanceof PlatformHttpError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs one operation: records it (or finds it by its idempotency key), reconciles a found one that is not confirmed
 * with the platform's state, then sends it with retries: a 429 waits its Retry-After and sends again (the platform did
 * nothing); a 5xx or no answer marks it unknown, waits, and reads the platform's state before sending again; any other
 * 4xx marks it failed and stops with the platform's message and what to do.
 */
export async function runPlatformOperation<T>(spec: OperationSpec<T>, deps: OperationDeps): Promise<OperationOutcome<T>> {
  const { db, clock, secrets } = deps;
  const policy = { ...DEFAULT_RETRY, ...deps.retry };
  const sleep = deps.sleep ?? defaultSleep;
  const recorded = recordOperation(db, { ...spec.operation, request: redactValue(spec.operation.request, secrets) }, clock());
  let op = recorded.operation;
  if (op.state === 'confirmed') return { operation: op, result: 'already-done' };
  if (!recorded.created && op.state !== 'failed') {
    const reconciled = await checkAndMark(spec, op, deps);
    if (reconciled) return { operation: reconciled, result: 'reconciled' };
  }
  for (let attempt = 1; ; attempt++) {
    markOperationSent(db, op.id, clock());
    op = reread(db, op);
    deps.onSend?.(op);
    try {
      const answer = await spec.send(op);
      const stored = spec.answerOf(answer);
      markOperationAnswered(db, op.id, { state: 'confirmed', answer: redactValue(stored.answer, secrets), platformObjectId: stored.platformObjectId }, clock());
      return { operation: reread(db, op), result: 'sent', answer };
    } catch (error) {
      const message = redactText(errorText(error), secrets);
      const status = error instanceof PlatformHttpError ? error.status : 0;
      const name = platformName(spec.operation.platform);
      if (status >= 400 && status < 500 && status !== 429) {
        markOperationAnswered(db, op.id, { state: 'failed', error: message }, clock());
        const platformMessage = error instanceof PlatformHttpError ? redactText(error.platformMessage, secrets) : message;
        throw new PlatformError(`${name} refused ${spec.operation.kind.replace('_', ' ')} (${status}): ${platformMessage}. ${whatToDoAfter(spec.operation.platform, status)}`, 502, 'platform_refused');
      }
      const retryAfter = error instanceof PlatformHttpError ? error.retryAfterSeconds : null;
      if (status === 429) {
        // A 429 was not carried out: the same request may go again once the platform allows it.
        markOperationAnswered(db, op.id, { state: 'failed', error: message }, clock());
        if (attempt >= policy.attempts || (retryAfter ?? 0) > MAX_RETRY_AFTER_SECONDS) {
          throw new PlatformError(`${name} is limiting requests (429) and asked to wait${retryAfter ? ` ${retryAfter} s` : ''}: run the command again later; nothing is sent twice.`, 503, 'platform_busy');
        }
        await sleep(retryAfter !== null ? retryAfter * 1000 : backoff(policy, attempt));
        op = reread(db, op);
        continue;
      }
      markOperationAnswered(db, op.id, { state: 'unknown', error: message }, clock());
      if (attempt >= policy.attempts) {
        throw new PlatformError(
          `${name} gave no answer to ${spec.operation.kind.replace('_', ' ')} after ${attempt} tries (${message}). Run the command again: what may have been done is checked on ${name} before anything is sent again.`,
          503,
          'platform_unavailable',
        );
      }
      await sleep(retryAfter !== null ? retryAfter * 1000 : backoff(policy, attempt));
      const reconciled = await checkAndMark(spec, reread(db, op), deps);
      if (reconciled) return { operation: reconciled, result: 'reconciled' };
      op = reread(db, op);
    }
  }
}

function backoff(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

function reread(db: Db, op: PlatformOperationRow): PlatformOperationRow {
  return getOperation(db, op.id) ?? op;
}

/** Reads the platform's state of an operation that may have been done: marks it confirmed and returns it when it was. */
async function checkAndMark<T>(spec: OperationSpec<T>, op: PlatformOperationRow, deps: OperationDeps): Promise<PlatformOperationRow | null> {
  const state = await spec.check(op);
  if (!state.done) return null;
  markOperationAnswered(
    deps.db,
    op.id,
    { state: 'confirmed', answer: redactValue({ reconciled: true, platform: state.answer ?? null }, deps.secrets), platformObjectId: state.platformObjectId },
    deps.clock(),
  );
  return { ...op, state: 'confirmed' };
}

/**
 * Before a settle sends anything, every operation of the batch on the platform that is not confirmed is checked
 * against the platform's state: done → confirmed; shown not done → failed (its participants are free for the new
 * operations the settle forms); a check that cannot tell throws, and nothing is sent.
 */
export async function reconcileUnconfirmed(
  platform: Platform,
  batchId: number,
  check: (operation: PlatformOperationRow) => Promise<PlatformCheck>,
  deps: Pick<OperationDeps, 'db' | 'clock' | 'secrets'>,
  /** Only operations of these kinds (a settle's phase reconciles its own, so one unclear phase stops no other). */
  kinds?: readonly OperationKind[],
): Promise<{ confirmed: number; notDone: number }> {
  let confirmed = 0;
  let notDone = 0;
  for (const op of findUnconfirmedOperations(deps.db, platform, batchId).filter((o) => !kinds || kinds.includes(o.kind))) {
    const state = await check(op);
    if (state.done) {
      markOperationAnswered(
        deps.db,
        op.id,
        { state: 'confirmed', answer: redactValue({ reconciled: true, platform: state.answer ?? null }, deps.secrets), platformObjectId: state.platformObjectId },
        deps.clock(),
      );
      confirmed++;
    } else {
      markOperationAnswered(deps.db, op.id, { state: 'failed', error: `not done on ${platformName(platform)} (checked before sending again)` }, deps.clock());
      notDone++;
    }
  }
  return { confirmed, notDone };
}
