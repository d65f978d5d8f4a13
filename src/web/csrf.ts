import type { Request, RequestHandler } from 'express';
import { HttpError } from './http-error.js';
import { csrfTokenFor, isValidCsrfToken } from './signing.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Synchronizer-token CSRF protection: the token is an HMAC of what the request is bound to
 * (the console session id; for raters, their signed token), so nothing extra is stored.
 * Requests authenticated by an API bearer token carry no ambient credentials and are exempt.
 */
export function csrfProtection(secret: string, bindingOf: (req: Request) => string | null): RequestHandler {
  return (req, res, next) => {
    const binding = bindingOf(req);
    res.locals.csrfToken = binding ? csrfTokenFor(secret, binding) : '';
    if (SAFE_METHODS.has(req.method) || req.get('authorization')?.startsWith('Bearer ')) {
      next();
      return;
    }
    const body = req.body as Record<string, unknown> | undefined;
    const token = body?._csrf ?? req.get('x-csrf-token');
    if (!binding || !isValidCsrfToken(secret, binding, token)) {
      next(new HttpError(403, 'This form has expired or was not sent from this site. Go back, reload the page and try again.', 'csrf'));
      return;
    }
    next();
  };
}
