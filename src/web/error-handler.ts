import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { UserFacingError } from '../errors/user-facing-error.js';
import { HttpError } from './http-error.js';
import { redactUrl } from './logger.js';
import { describeStorageError } from './storage-health.js';

/** Errors thrown by express's body parsers carry a status and a type; give them a human message. */
function fromBodyParser(error: unknown): HttpError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { status, type } = error as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (type === 'entity.too.large') return new HttpError(413, 'The request is too large.');
  if (type === 'entity.parse.failed') return new HttpError(400, 'The request body is not valid JSON.');
  if (type === 'charset.unsupported' || type === 'encoding.unsupported')
    return new HttpError(415, 'The request uses an unsupported encoding.');
  return new HttpError(status, 'The request could not be read.');
}

export function wantsJson(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path === '/healthz';
}

/**
 * Storage that cannot take writes is the server's trouble, not the request's: 503, so that a person retries later
 * and a load balancer or monitor sees an unavailable service. The operator gets the reason in the log.
 */
function fromStorage(error: unknown, logger: Logger, url: string): HttpError | null {
  const reason = describeStorageError(error);
  if (!reason) return null;
  logger.error({ err: error, url }, `storage failure: ${reason}`);
  return new HttpError(503, 'The server cannot save anything right now because of a problem with its storage. What you just sent was not saved; please try again later.', 'storage_unavailable');
}

/**
 * An error as HTTP answers it. `from` says whose words `message` is: `app` a UserFacingError the code threw for a
 * person; `request` a body the parsers could not read; `server` the server's own trouble (storage, or an internal
 * error: logged, and never shown beyond "something went wrong").
 */
export type ErrorAnswer = { status: number; code: string; message: string; from: 'app' | 'request' | 'server' };

/** Renders an answer for one family of pages (the console's and the API's by default; rater pages have their own). */
export type ErrorPage = (req: Request, res: Response, answer: ErrorAnswer) => void;

function answerFor(error: unknown, logger: Logger, url: string): ErrorAnswer {
  if (error instanceof UserFacingError) {
    // A 5xx UserFacingError (damaged stored data, configuration) is said plainly, and the operator must hear of it too.
    if (error.status >= 500) logger.error({ err: error, url }, error.message);
    return { status: error.status, code: error.code, message: error.message, from: 'app' };
  }
  const request = fromBodyParser(error);
  if (request) return { status: request.status, code: request.code, message: request.message, from: 'request' };
  const storage = fromStorage(error, logger, url);
  if (storage) return { status: storage.status, code: storage.code, message: storage.message, from: 'server' };
  logger.error({ err: error, url }, 'unhandled error');
  return { status: 500, code: 'internal', message: 'Something went wrong on our side. Please try again in a moment.', from: 'server' };
}

/** The console's and the API's page: JSON under /api (and /healthz), else the console's error template. */
const consolePage: ErrorPage = (req, res, answer) => {
  const { status, message, code } = answer;
  if (status === 503) res.set('Retry-After', '60');
  res.status(status);
  if (wantsJson(req.path)) {
    res.json({ error: { message, code } });
    return;
  }
  res.render('error', { title: status === 404 ? 'Page not found' : 'Something is not right', status, message });
};

/**
 * The one place HTTP turns an error into an answer (a page or JSON); never a stack trace to a user. Without a logger,
 * the request's own (pino-http) logger is used.
 */
export function errorHandler(logger?: Logger, page: ErrorPage = consolePage): ErrorRequestHandler {
  return (error, req, res, next) => {
    const answer = answerFor(error, logger ?? req.log, redactUrl(req.originalUrl));
    if (res.headersSent) {
      next(error);
      return;
    }
    page(req, res, answer);
  };
}

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new HttpError(404, wantsJson(req.path) ? `No such endpoint: ${req.method} ${req.path}` : 'There is no page at this address.'));
};
