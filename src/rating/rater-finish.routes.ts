import type { IRouter, RequestHandler } from 'express';
import { completeRater, completionCodeFor, outcomeOf, withdrawRater } from './rater-flow.js';
import { batchOf, type RaterPages } from './rater-pages.js';
import { MTURK_PREVIEW_ASSIGNMENT, mturkSubmitUrl, prolificCompletionUrl } from './providers.js';
import { seeOther } from '../web/see-other.js';

type Middleware = { batch: RequestHandler; body: RequestHandler; csrf: RequestHandler };

/** Withdrawing, finishing early on a paused batch, and the done page with the outcome's code. */
export function finishRoutes(router: IRouter, pages: RaterPages, mw: Middleware): void {
  const { db, clock } = pages.deps;
  const { base, pageLocals } = pages;

  router.get('/r/:batchId/withdraw', mw.batch, mw.csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    res.render('rater/withdraw', { ...pageLocals(res, rater, 'Withdraw from this study'), action: `${base(b)}/withdraw`, backUrl: pages.placeOf(b, rater) });
  });

  router.post('/r/:batchId/withdraw', mw.batch, mw.body, mw.csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    withdrawRater(db, rater, clock());
    seeOther(res, pages.placeAfterChange(b, rater));
  });

  // Offered on the paused page: a rater who does not want to wait ends now with the `partial` code.
  router.post('/r/:batchId/finish', mw.batch, mw.body, mw.csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (b.state !== 'open') completeRater(db, rater, b.state === 'closed' ? 'closed' : 'paused', clock());
    seeOther(res, pages.placeAfterChange(b, rater));
  });

  router.get('/r/:batchId/done', mw.batch, mw.csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = pages.requireRater(req, res);
    const outcome = outcomeOf(rater);
    if (!outcome) {
      seeOther(res, pages.placeOf(b, rater));
      return;
    }
    const code = completionCodeFor(settings, outcome);
    const prolificUrl = rater.provider === 'prolific' && code ? prolificCompletionUrl(code) : null;
    // The form submits the rater's current MTurk assignment (the one of the HIT they have open now).
    const mturk =
      rater.provider === 'mturk' && rater.submit_to && rater.session_id !== MTURK_PREVIEW_ASSIGNMENT && outcome !== 'withdrew'
        ? { action: mturkSubmitUrl(rater.submit_to), assignmentId: rater.session_id ?? '', outcome, code: code ?? '' }
        : null;
    res.render('rater/done', {
      ...pageLocals(res, rater, outcome === 'completed' ? 'Thank you' : outcome === 'withdrew' ? 'You have withdrawn' : 'Thank you for your time'),
      withdrawUrl: null,
      outcome,
      paused: rater.finish_reason === 'paused',
      exhausted: req.query.why === 'exhausted' || rater.finish_reason === 'exhausted',
      code,
      provider: rater.provider,
      prolificUrl,
      mturk,
    });
  });
}
