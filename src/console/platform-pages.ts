import type { SessionUser } from '../auth/session-user.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { PlatformDeps } from '../recruiting/platform-deps.js';
import type { ConsoleDeps } from './console-deps.js';

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
