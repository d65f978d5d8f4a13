import type { IRouter, Request, RequestHandler, Response } from 'express';
import type { BatchRow } from '../batches/batch.queries.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { newPublicId } from '../web/ids.js';
import { csrfTokenFor } from '../web/signing.js';
import { describeIssues } from '../web/validate.js';
import { onboardingSize } from './assign-next-pair.js';
import { addressHash, addressHolder } from './client-address.js';
import { buildComparisonView } from './comparison-view.js';
import { readEntryParams } from './providers.js';
import { buildQuestionViews } from './question-view.js';
import { answerConsent } from './rater-flow.js';
import { batchOf, entryTokenFrom, type RaterPages, returnAdvice, tokenFrom } from './rater-pages.js';
import { type EntryDecision, findReturningRaterNow, planPromise } from './rater-pool.js';
import { consentFormSchema } from './rater.schema.js';
import { entryFromToken, type EntryIdentity, entryToken, isPreviewToken } from './rater-token.js';
import { firstRegularPairId, getPair } from './rating.queries.js';
import { seeOther } from '../web/see-other.js';

type Middleware = { batch: RequestHandler; previewBatch: RequestHandler; body: RequestHandler; csrf: RequestHandler };

function hashOf(pages: RaterPages, req: Request, b: BatchRow): string | null {
  return addressHash(pages.deps.sessionSecret, b.public_id, req.ip);
}

/** Every answer an entry decision can have but "open" (consent) and "returning" (their place). */
function renderRefusal(pages: RaterPages, res: Response, settings: BatchSettings, decision: Exclude<EntryDecision, { kind: 'open' | 'returning' }>): void {
  const { notice } = pages;
  if (decision.kind === 'full') {
    pages.studyFull(res, settings);
  } else if (decision.kind === 'limited') {
    res.set('Retry-After', String(decision.retryAfterMinutes * 60));
    notice(res, 429, null, 'Please try again later', decision.message);
  } else if (decision.kind === 'blocked') {
    notice(res, 403, null, 'You have already taken part', decision.message);
  } else if (decision.kind === 'refused') {
    notice(res, 403, null, 'This session belongs to someone else', decision.message);
  } else {
    notice(
      res,
      200,
      null,
      'You have already done this study',
      'You have already done all the comparisons this study has for you, in an earlier HIT. Thank you! There is nothing to do in this HIT: ' +
        returnAdvice('mturk'),
    );
  }
}

function renderConsent(pages: RaterPages, res: Response, b: BatchRow, settings: BatchSettings, entry: EntryIdentity, promise: number, raterPublicId: string): void {
  const { sessionSecret: secret, clock } = pages.deps;
  const et = entryToken(secret, b.public_id, { entry, raterPublicId }, clock());
  res.render('rater/consent', {
    ...pages.pageLocals(res, null, 'Consent'),
    et,
    // The form is bound to its entry token, as a rater's forms are bound to their rater token.
    csrfToken: csrfTokenFor(secret, `entry:${et}`),
    action: `${pages.base(b)}/consent`,
    consentHtml: pages.markdown(settings.consent),
    facts: pages.studyFacts(b, settings, null, { count: promise, raterPublicId }),
  });
}

// Preview: the pages of a batch as a rater sees them, for the console and MTurk's preview; records nothing.
function renderPreview(pages: RaterPages, res: Response, b: BatchRow, settings: BatchSettings, kind: 'mturk' | 'console'): void {
  const { db, random } = pages.deps;
  const pairId = firstRegularPairId(db, b.id);
  const pairRow = pairId === undefined ? undefined : getPair(db, pairId);
  res.render('rater/preview', {
    ...pages.pageLocals(res, null, kind === 'mturk' ? 'Preview of this task' : 'Preview'),
    kind,
    facts: pages.studyFacts(b, settings, null),
    consentHtml: pages.markdown(settings.consent),
    instructionsHtml: pages.markdown(settings.instructions),
    allowTie: settings.allowTie,
    reasonMode: settings.reason,
    questions: buildQuestionViews(settings),
    // The example's sides are drawn like an assignment's, so Conversation 1 of the preview is not always condition a.
    view: pairRow ? buildComparisonView(db, pairRow, random() < 0.5 ? 'a' : 'b', settings.context) : null,
  });
}

// Entry: reads the provider's ids, continues the person's rater if they have one, and otherwise shows consent.
// No rater and no reserved pair is created here (issue 10): a GET of the link costs the study nothing. It holds, for a
// few minutes, a place of the client's address (issue 49), so that the per-address limit is said before consent.
function showEntry(pages: RaterPages): RequestHandler {
  const { db, clock } = pages.deps;
  const { notice } = pages;
  return async (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const params = readEntryParams(settings.provider, req.query as Record<string, unknown>);
    const platform = settings.provider.kind === 'mturk' ? 'MTurk' : 'Prolific';
    if (params.kind === 'missing') {
      notice(
        res,
        400,
        null,
        'This link is incomplete',
        `This study link is missing ${params.missing.length === 1 ? 'a parameter' : 'parameters'} it needs: ${params.missing.join(', ')}. Please open the study again from your ${platform} page.`,
      );
      return;
    }
    if (params.kind === 'invalid') {
      notice(res, 400, null, 'This link is not valid', params.message);
      return;
    }
    if (params.kind === 'mturk-preview') {
      // A worker previewing a HIT with no work left is told before accepting it, not after.
      if (b.state === 'open' && planPromise(db, b, settings, clock()).length === 0) {
        notice(res, 200, null, 'This study is full', 'Thank you for your interest. Every comparison of this study is taken at the moment. Please do not accept this HIT.');
        return;
      }
      renderPreview(pages, res, b, settings, 'mturk');
      return;
    }
    const entry: EntryIdentity = params.kind === 'link' ? { kind: 'link', nonce: newPublicId() } : params;
    const now = clock();
    if (b.state !== 'open') {
      // Someone who started before the batch closed or paused still reaches their place (and their code).
      const returning = findReturningRaterNow(db, b, entry, now);
      if (returning?.kind === 'returning') seeOther(res, pages.placeOf(b, returning.rater));
      else pages.notOpen(res, b, settings);
      return;
    }
    // The consent form's rater id, known before the decision: the place the decision holds for it is its own.
    const raterPublicId = newPublicId();
    const hold = { holder: addressHolder(pages.deps.sessionSecret, b.public_id, entry, raterPublicId), raterPublicId };
    const decision = await pages.write('decideEntry', [b, settings, entry, hashOf(pages, req, b), now, hold]);
    if (decision.kind === 'returning') seeOther(res, pages.placeOf(b, decision.rater));
    else if (decision.kind === 'open') renderConsent(pages, res, b, settings, entry, decision.promise, raterPublicId);
    else renderRefusal(pages, res, settings, decision);
  };
}

function showPreview(pages: RaterPages): RequestHandler {
  const { sessionSecret: secret } = pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    if (!isPreviewToken(secret, b.public_id, req.query.pt)) throw new UserFacingError('This preview link is not valid. Open the preview again from the console.', 403, 'bad_preview_token');
    renderPreview(pages, res, b, settings, 'console');
  };
}

// Consent ------------------------------------------------------------------------------
// Raters made before consent moved to the POST (status "consent") still see their consent page here.
function showConsent(pages: RaterPages): RequestHandler {
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (pages.redirectUnlessAt(res, b, rater, 'consent')) return;
    res.render('rater/consent', {
      ...pages.pageLocals(res, rater, 'Consent'),
      action: `${pages.base(b)}/consent`,
      consentHtml: pages.markdown(settings.consent),
      facts: pages.studyFacts(b, settings, rater),
    });
  };
}

function submitConsent(pages: RaterPages): RequestHandler {
  const { db, sessionSecret: secret, clock } = pages.deps;
  return async (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const parsed = consentFormSchema.safeParse(req.body);
    if (!parsed.success) throw new UserFacingError(`${describeIssues(parsed.error).replace(/^[a-z_]+: /, '')} Go back and choose one of the buttons.`, 400);
    const agree = parsed.data.decision === 'agree';
    if (tokenFrom(req) !== undefined) {
      const rater = pages.requireRater(req, res);
      answerConsent(db, rater, agree, clock());
      seeOther(res, pages.placeAfterChange(b, rater));
      return;
    }
    const now = clock();
    const signed = entryFromToken(secret, b.public_id, entryTokenFrom(req), now);
    if (!signed) throw new UserFacingError('This consent form has expired. Please open the study again from the link you were given.', 403, 'bad_entry_token');
    const { entry, raterPublicId } = signed;
    if (b.state !== 'open') {
      const returning = findReturningRaterNow(db, b, entry, now);
      if (returning?.kind === 'returning') seeOther(res, pages.placeOf(b, returning.rater));
      else pages.notOpen(res, b, settings);
      return;
    }
    const admission = await pages.write('admitRater', [b, settings, entry, { agree, raterPublicId, userAgent: req.get('user-agent') ?? null, addressHash: hashOf(pages, req, b), now }]);
    if (admission.kind === 'admitted' || admission.kind === 'returning') seeOther(res, pages.placeOf(b, admission.rater));
    else renderRefusal(pages, res, settings, admission);
  };
}

// Instructions ---------------------------------------------------------------------------
function showInstructions(pages: RaterPages): RequestHandler {
  const { db } = pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (pages.redirectUnlessAt(res, b, rater, 'instructions')) return;
    res.render('rater/instructions', {
      ...pages.pageLocals(res, rater, 'Instructions'),
      action: `${pages.base(b)}/instructions`,
      instructionsHtml: pages.markdown(settings.instructions),
      facts: pages.studyFacts(b, settings, rater),
      allowTie: settings.allowTie,
      reasonMode: settings.reason,
      questions: buildQuestionViews(settings),
      onboarding: onboardingSize(db, b.id),
    });
  };
}

function submitInstructions(pages: RaterPages): RequestHandler {
  const { clock } = pages.deps;
  return async (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    await pages.write('finishInstructions', [rater, clock()]);
    seeOther(res, pages.placeAfterChange(b, rater));
  };
}

/** Entry, preview, consent and instructions: the steps before the first comparison. */
export function entryRoutes(router: IRouter, pages: RaterPages, mw: Middleware): void {
  router.get('/r/:batchId', mw.batch, mw.csrf, showEntry(pages));
  router.get('/r/:batchId/preview', mw.previewBatch, mw.csrf, showPreview(pages));
  router.get('/r/:batchId/consent', mw.batch, mw.csrf, showConsent(pages));
  router.post('/r/:batchId/consent', mw.batch, mw.body, mw.csrf, submitConsent(pages));
  router.get('/r/:batchId/instructions', mw.batch, mw.csrf, showInstructions(pages));
  router.post('/r/:batchId/instructions', mw.batch, mw.body, mw.csrf, submitInstructions(pages));
}
