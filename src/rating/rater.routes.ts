import express, { type ErrorRequestHandler, type IRouter, type RequestHandler } from 'express';
import { cachedBatchRowByPublicId } from '../batches/batch-row-cache.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { csrfProtection } from '../web/csrf.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { errorHandler } from '../web/error-handler.js';
import { comparisonRoutes } from './rater-comparison.routes.js';
import { entryRoutes } from './rater-entry.routes.js';
import { finishRoutes } from './rater-finish.routes.js';
import { raterHeaders } from './rater-headers.js';
import { type BatchLocals, createRaterPages, entryTokenFrom, tokenFrom } from './rater-pages.js';
import { ANSWER_FORM_BYTES } from './rater.schema.js';
import { raterIdFromToken } from './rater-token.js';
import type { AnswerThread } from './answer-thread.js';

export type RaterRoutesDeps = { db: Db; sessionSecret: string; clock: Clock; random?: () => number; answerThread?: AnswerThread | null };

/**
 * Every rater page: the batch from its public id, no caching, and the provider's own security headers.
 * Draft batches exist only for the console's preview.
 */
function withBatch(db: Db, options: { allowDraft?: boolean } = {}): RequestHandler {
  const headers = raterHeaders();
  return (req, res, next) => {
    const batch = cachedBatchRowByPublicId(db, String(req.params.batchId));
    res.set('Cache-Control', 'no-store');
    if (!batch || (batch.state === 'draft' && !options.allowDraft)) {
      headers.link(req, res, () => next(new UserFacingError('There is no study at this address. Check the link you were given, or open the study again from your recruitment platform.', 404)));
      return;
    }
    const settings = readBatchSettings(batch);
    res.locals.raterBatch = { batch, settings } satisfies BatchLocals;
    headers[settings.provider.kind](req, res, next);
  };
}

/**
 * Errors on rater pages go through the one error path (src/web/error-handler.ts) but are shown in the rater template
 * (never the console's, never the product's name) with what to do next. A refusal written for the rater (a 4xx
 * UserFacingError) is shown as written; anything else in the rater's own words, never the server's (a damaged row's
 * message would name batch internals).
 */
function raterErrorPage(): ErrorRequestHandler {
  const headers = raterHeaders();
  return errorHandler(undefined, (req, res, answer) => {
    const status = answer.from === 'server' ? 500 : answer.status;
    const message =
      answer.from === 'app' && status < 500
        ? answer.message
        : status === 413
          ? 'What you sent is too long. Go back, shorten your answer and submit it again.'
          : status < 500
            ? 'This request could not be read. Go back, reload the page and try again.'
            : 'Something went wrong on our side. Please reload this page in a minute; your answers so far are kept. If it happens again, contact the researchers through your recruitment platform.';
    const render = () => {
      res.status(status).set('Cache-Control', 'no-store');
      res.render('rater/notice', {
        title: status === 404 ? 'Page not found' : status === 429 ? 'Please try again later' : 'Something is not right',
        message,
        rt: '',
        et: '',
        csrfToken: '',
        withdrawUrl: null,
        finishAction: null,
      });
    };
    if (res.get('Content-Security-Policy')) render();
    else headers.link(req, res, render);
  });
}

/**
 * Mounts every rater page under /r on `app` itself, not on a router of their own mounted at /r: a nested router
 * dispatches every request twice (its own layer stack after the app's, with the path trimmed and put back), 3–5% of
 * the CPU per judgment in alternating windows of the rater-load benchmark (issue 12). What ends under /r unmatched is
 * a 404 in the rater template, and every error under /r goes through raterErrorPage, the form check's before these
 * routes included (src/app.ts).
 */
export function mountRaterRoutes(app: IRouter, deps: RaterRoutesDeps): void {
  const { db, sessionSecret: secret } = deps;
  const pages = createRaterPages({ ...deps, random: deps.random ?? Math.random });
  // Room for every reason box of a page full (rater.schema.ts): an over-long reason is then refused beside its box.
  const body = express.urlencoded({ extended: false, limit: ANSWER_FORM_BYTES, parameterLimit: 20 });
  // Forms are bound to the rater's signed token, or before consent to the signed entry token of the consent form.
  const csrf = csrfProtection(secret, (req) => {
    const id = raterIdFromToken(secret, tokenFrom(req));
    if (id) return `rater:${id}`;
    const et = entryTokenFrom(req);
    return typeof et === 'string' && et.length > 0 && et.length <= 2000 ? `entry:${et}` : null;
  });
  const mw = { batch: withBatch(db), previewBatch: withBatch(db, { allowDraft: true }), body, csrf };

  entryRoutes(app, pages, mw);
  comparisonRoutes(app, pages, mw);
  finishRoutes(app, pages, mw);

  app.use('/r', (_req, _res, next) => {
    next(new UserFacingError('There is no page at this address. Check the link you were given, or open the study again from your recruitment platform.', 404));
  });
  app.use('/r', raterErrorPage());
}
