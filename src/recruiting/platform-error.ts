import { UserFacingError } from '../errors/user-facing-error.js';
import type { Platform } from './platform-operations.queries.js';

/**
 * A platform's HTTP answer that was not a success, as a client throws it: the status (0 when no answer came: a timeout
 * or a lost connection), the seconds of a 429's Retry-After, and the platform's own message (already free of tokens).
 * `refusedAsDuplicate`: the platform refused the request because it already has one with the same idempotency token
 * (MTurk's UniqueRequestToken): the write may well be done, so it is never taken as refused.
 * Not for people: platform-operation.ts decides from it whether to wait, read the platform's state or stop.
 */
export class PlatformHttpError extends Error {
  constructor(
    readonly platform: Platform,
    readonly status: number,
    readonly platformMessage: string,
    readonly retryAfterSeconds: number | null = null,
    readonly refusedAsDuplicate = false,
  ) {
    super(`${platform} answered ${status === 0 ? 'nothing' : status}: ${platformMessage}`);
  }
}

/**
 * A platform refused, or could not be reached, for a request simarena made on someone's behalf: the platform's message
 * and what to do next (one line on the CLI, a page in the console).
 */
export class PlatformError extends UserFacingError {
  constructor(message: string, status = 502, code = 'platform_error') {
    super(message, status, code);
  }
}

/** The platform's name as people write it. */
export function platformName(platform: Platform): string {
  return platform === 'prolific' ? 'Prolific' : 'MTurk';
}

/**
 * What to do after a platform refused a request (a 4xx): the usual causes by status, so the person at the keyboard
 * knows where to look.
 */
export function whatToDoAfter(platform: Platform, status: number): string {
  const name = platformName(platform);
  if (status === 401) return platform === 'prolific' ? 'Check PROLIFIC_API_TOKEN (a token from Prolific\'s settings, "API tokens").' : 'Check the AWS credentials in the environment.';
  if (status === 403) return `The account behind the credentials may not do this on ${name}: check its workspace or permissions.`;
  if (status === 404) return `${name} does not know this object: check that the batch was published from this database and account.`;
  if (status === 402) return `Top up the ${name} balance, then run the command again.`;
  return `Fix what ${name} names, then run the command again: operations already done are not sent twice.`;
}

/**
 * Runs a platform workflow so that a platform's answer left unhandled (a read that failed: a study, a list of
 * submissions) reaches the person as a PlatformError with the platform's message and what to do, never as an
 * internal error.
 */
export async function withPlatformErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof PlatformHttpError)) throw error;
    const name = platformName(error.platform);
    if (error.status === 0 || error.status >= 500 || error.status === 429) {
      throw new PlatformError(`${name} gave no answer just now (${error.platformMessage}). Nothing was sent twice; try again in a moment.`, 503, 'platform_unavailable');
    }
    throw new PlatformError(`${name} refused (${error.status}): ${error.platformMessage}. ${whatToDoAfter(error.platform, error.status)}`, 502, 'platform_refused');
  }
}
