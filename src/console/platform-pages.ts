import type { SessionUser } from '../auth/session-user.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { PlatformDeps } from '../recruiting/platform-deps.js';
import { listBatchOperationsPage, type OperationLogRow, type OperationTally, type Platform, tallyBatchOperations } from '../recruiting/platform-operations.queries.js';
import type { Db } from '../db/connection.js';
import type { ConsoleDeps } from './console-deps.js';
import type { Page } from './pagination.js';

// What the Prolific and MTurk pages share: how a platform's refusal is shown, and who acts.

/** What went wrong on the platform's side (or before calling it), shown on the page instead of its content. */
export async function orProblem<T>(work: () => Promise<T>): Promise<{ value: T | null; problem: string | null }> {
  try {
    return { value: await work(), problem: null };
  } catch (error) {
    if (error instanceof UserFacingError) return { value: null, problem: error.message };
    throw error;
  }
}

/** The platform workflows' dependencies, acting as the signed-in user. */
export function platformDepsOf({ db, config, clock }: ConsoleDeps, user: SessionUser): PlatformDeps {
  return { db, config, clock, actor: user.email };
}

export type OperationLog = { operations: OperationLogRow[]; logPage: Page; logTotal: number; tallies: OperationTally[] };

/**
 * A page of the log of what was sent, newest first, with how many operations there are of each kind and state: a batch
 * settled on MTurk holds two operations per worker, too many for one page. Read after the platform's answers, so the
 * log holds what they recorded.
 */
export function operationLogOf(db: Db, batchId: number, platform: Platform, logPage: Page): OperationLog {
  const tallies = tallyBatchOperations(db, batchId, platform);
  const logTotal = tallies.reduce((sum, t) => sum + t.n, 0);
  return { operations: listBatchOperationsPage(db, batchId, platform, logPage.perPage, logPage.offset), logPage, logTotal, tallies };
}
