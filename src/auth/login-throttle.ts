import { type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { HttpError } from '../web/http-error.js';

export type LoginThrottleOptions = { failures: number; windowMinutes: number };

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleOptions = { failures: 10, windowMinutes: 15 };

/**
 * Counts failed logins per client address (successful ones are not counted) and answers 429 once the
 * limit is reached within the window. Kept in memory: a restart forgets the count, which only costs an attacker's
 * wait, never a legitimate user's data.
 */
export function loginThrottle(options: LoginThrottleOptions = DEFAULT_LOGIN_THROTTLE): RequestHandler {
  return rateLimit({
    windowMs: options.windowMinutes * 60_000,
    limit: options.failures,
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (_req, _res, next) => {
      next(new HttpError(429, `Too many failed sign-in attempts. Wait ${options.windowMinutes} minutes and try again.`));
    },
  });
}
