import { z } from 'zod';
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
// lost (a crash, a timeout, a 5xx) is sent again only after the platform's own state shows it was not done. A write
// the platform refuses as a duplicate of one it already has (MTurk's UniqueRequestToken) is never sent again: it waits,
// held, until the platform's state shows it done.

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
  /**
   * Reads the platform's state before the first send as well, and before sending again one the platform refused:
   * for writes a platform guards only for a while (MTurk forgets a UniqueRequestToken after 24 hours), whose record
   * may have been lost (a database restored from a backup) or marked refused by an older version.
   */
  checkFirst?: (operation: PlatformOperationRow) => Promise<PlatformCheck>;
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
  /** Called before each request is marked sent; throws to stop (the platform lock taken over: HeldLock.assertHeld). */
  beforeSend?: () => void;
};

/**
 * `sent`: sent now and confirmed; `already-done`: confirmed before; `reconciled`: the platform showed it done; `held`:
 * the platform refused it as a duplicate of one it has, yet does not show it done: not sent again, left unknown (its
 * participant stays covered) until a later check shows it.
 */
export type OperationOutcome<T> = { operation: PlatformOperationRow; result: 'sent' | 'already-done' | 'reconciled' | 'held'; answer?: T };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorText(error: unknown): string {
  if (error instanceof PlatformHttpError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** What is stored as the answer of an operation the platform refused as a duplicate (read back by refusedAsDuplicate). */
const duplicateAnswer = z.object({ refusedAsDuplicate: z.literal(true) });

/** Whether the platform once refused this operation as a duplicate of one it has: then it is never sent again. */
export function refusedAsDuplicate(op: Pick<PlatformOperationRow, 'answer'>): boolean {
  return op.answer !== null && duplicateAnswer.safeParse(JSON.parse(op.answer)).success;
}

/**
 * Runs one operation: records it (or finds it by its idempotency key), reconciles a found one that is not confirmed
 * with the platform's state (a new or refused one too, with `checkFirst`), then sends it with retries: a 429 waits its
 * Retry-After and sends again (the platform did nothing); a 5xx or no answer marks it unknown, waits, and reads the
 * platform's state before sending again; a refusal as a duplicate marks it unknown and reads the platform's state,
 * never sending it again; any other 4xx marks it failed and stops with the platform's message and what to do.
 */
export async function runPlatformOperation<T>(spec: OperationSpec<T>, deps: OperationDeps): Promise<OperationOutcome<T>> {
  const recorded = recordOperation(deps.db, { ...spec.operation, request: redactValue(spec.operation.request, deps.secrets) }, deps.clock());
  const op = recorded.operation;
  if (op.state === 'confirmed') return { operation: op, result: 'already-done' };
  return (await reconcileBeforeSending(spec, op, recorded.created, deps)) ?? sendWithRetries(spec, op, deps);
}

async function reconcileBeforeSending<T>(spec: OperationSpec<T>, op: PlatformOperationRow, created: boolean, deps: OperationDeps): Promise<OperationOutcome<T> | null> {
  const mayBeDone = !created && op.state !== 'failed';
  const check = mayBeDone ? spec.check : spec.checkFirst;
  if (!check) return null;
  const reconciled = await checkAndMark(check, op, deps);
  if (reconciled) return { operation: reconciled, result: 'reconciled' };
  return mayBeDone && refusedAsDuplicate(op) ? { operation: op, result: 'held' } : null;
}

type Retry = { policy: RetryPolicy; sleep: (ms: number) => Promise<void> };

async function sendWithRetries<T>(spec: OperationSpec<T>, first: PlatformOperationRow, deps: OperationDeps): Promise<OperationOutcome<T>> {
  const retry: Retry = { policy: { ...DEFAULT_RETRY, ...deps.retry }, sleep: deps.sleep ?? defaultSleep };
  let op = first;
  for (let attempt = 1; ; attempt++) {
    deps.beforeSend?.();
    markOperationSent(deps.db, op.id, deps.clock());
    op = reread(deps.db, op);
    deps.onSend?.(op);
    try {
      const answer = await spec.send(op);
      const stored = spec.answerOf(answer);
      markOperationAnswered(deps.db, op.id, { state: 'confirmed', answer: redactValue(stored.answer, deps.secrets), platformObjectId: stored.platformObjectId }, deps.clock());
      return { operation: reread(deps.db, op), result: 'sent', answer };
    } catch (error) {
      const outcome = await afterFailure(spec, op, error, attempt, retry, deps);
      if (outcome) return outcome;
      op = reread(deps.db, op);
    }
  }
}

/** What follows a failed send: an outcome (reconciled, held), a throw, or null to send again. */
async function afterFailure<T>(spec: OperationSpec<T>, op: PlatformOperationRow, error: unknown, attempt: number, retry: Retry, deps: OperationDeps): Promise<OperationOutcome<T> | null> {
  const { db, clock, secrets } = deps;
  const { policy, sleep } = retry;
  const message = redactText(errorText(error), secrets);
  const status = error instanceof PlatformHttpError ? error.status : 0;
  const name = platformName(spec.operation.platform);
  const what = spec.operation.kind.replace('_', ' ');
  if (error instanceof PlatformHttpError && error.refusedAsDuplicate) {
    markOperationAnswered(db, op.id, { state: 'unknown', error: `refused as a duplicate: ${message}`, answer: { refusedAsDuplicate: true } }, clock());
    return awaitDuplicate(spec, op, retry, deps);
  }
  if (status >= 400 && status < 500 && status !== 429) {
    markOperationAnswered(db, op.id, { state: 'failed', error: message }, clock());
    const platformMessage = error instanceof PlatformHttpError ? redactText(error.platformMessage, secrets) : message;
    throw new PlatformError(`${name} refused ${what} (${status}): ${platformMessage}. ${whatToDoAfter(spec.operation.platform, status)}`, 502, 'platform_refused');
  }
  const retryAfter = error instanceof PlatformHttpError ? error.retryAfterSeconds : null;
  if (status === 429) {
    // A 429 was not carried out: the same request may go again once the platform allows it.
    markOperationAnswered(db, op.id, { state: 'failed', error: message }, clock());
    if (attempt >= policy.attempts || (retryAfter ?? 0) > MAX_RETRY_AFTER_SECONDS) {
      throw new PlatformError(`${name} is limiting requests (429) and asked to wait${retryAfter ? ` ${retryAfter} s` : ''}: run the command again later; nothing is sent twice.`, 503, 'platform_busy');
    }
    await sleep(retryAfter !== null ? retryAfter * 1000 : backoff(policy, attempt));
    return null;
  }
  markOperationAnswered(db, op.id, { state: 'unknown', error: message }, clock());
  if (attempt >= policy.attempts) {
    throw new PlatformError(
      `${name} gave no answer to ${what} after ${attempt} tries (${message}). Run the command again: what may have been done is checked on ${name} before anything is sent again.`,
      503,
      'platform_unavailable',
    );
  }
  await sleep(retryAfter !== null ? retryAfter * 1000 : backoff(policy, attempt));
  const reconciled = await checkAndMark(spec.check, reread(db, op), deps);
  return reconciled ? { operation: reconciled, result: 'reconciled' } : null;
}

/**
 * The platform has this request already (a retry after a lost answer, while the first was still being carried out,
 * say): its state is read a few times with growing waits, and the operation is held when it still does not show.
 */
async function awaitDuplicate<T>(spec: OperationSpec<T>, op: PlatformOperationRow, retry: Retry, deps: OperationDeps): Promise<OperationOutcome<T>> {
  for (let attempt = 1; attempt <= retry.policy.attempts; attempt++) {
    if (attempt > 1) await retry.sleep(backoff(retry.policy, attempt - 1));
    const reconciled = await checkAndMark(spec.check, reread(deps.db, op), deps);
    if (reconciled) return { operation: reconciled, result: 'reconciled' };
  }
  return { operation: reread(deps.db, op), result: 'held' };
}

function backoff(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
}

function reread(db: Db, op: PlatformOperationRow): PlatformOperationRow {
  return getOperation(db, op.id) ?? op;
}

/**
 * Reads the platform's state of an operation that may have been done: marks it confirmed and returns it, read again
 * (with the id the platform showed: a HIT, a study), when it was.
 */
async function checkAndMark(check: (op: PlatformOperationRow) => Promise<PlatformCheck>, op: PlatformOperationRow, deps: Pick<OperationDeps, 'db' | 'clock' | 'secrets'>): Promise<PlatformOperationRow | null> {
  const state = await check(op);
  if (!state.done) return null;
  markOperationAnswered(
    deps.db,
    op.id,
    { state: 'confirmed', answer: redactValue({ reconciled: true, platform: state.answer ?? null }, deps.secrets), platformObjectId: state.platformObjectId },
    deps.clock(),
  );
  return reread(deps.db, op);
}

/**
 * Before a settle sends anything, every operation of the batch on the platform that is not confirmed is checked
 * against the platform's state: done → confirmed; shown not done → failed (its participants are free for the new
 * operations the settle forms), unless the platform refused it as a duplicate of one it has: then it stays unknown,
 * held, and its participants stay covered; a check that cannot tell throws, and nothing is sent.
 */
export async function reconcileUnconfirmed(
  platform: Platform,
  batchId: number,
  check: (operation: PlatformOperationRow) => Promise<PlatformCheck>,
  deps: Pick<OperationDeps, 'db' | 'clock' | 'secrets'>,
  /** Only operations of these kinds (a settle's phase reconciles its own, so one unclear phase stops no other). */
  kinds?: readonly OperationKind[],
): Promise<{ confirmed: number; notDone: number; held: number }> {
  const counts = { confirmed: 0, notDone: 0, held: 0 };
  for (const op of findUnconfirmedOperations(deps.db, platform, batchId).filter((o) => !kinds || kinds.includes(o.kind))) {
    if (await checkAndMark(check, op, deps)) counts.confirmed++;
    else if (refusedAsDuplicate(op)) counts.held++;
    else {
      markOperationAnswered(deps.db, op.id, { state: 'failed', error: `not done on ${platformName(platform)} (checked before sending again)` }, deps.clock());
      counts.notDone++;
    }
  }
  return counts;
}
