import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import { type BatchRow, getBatchRowByPublicId } from '../batches/batch.queries.js';
import { type BatchSettings, batchSettingsSchema } from '../batches/batch.schema.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { csrfProtection } from '../web/csrf.js';
import { HttpError } from '../web/http-error.js';
import { describeIssues } from '../web/validate.js';
import { assignNextPair, onboardingSize } from './assign-next-pair.js';
import { expectedMinutes, plannedComparisons } from './attention-schedule.js';
import { buildComparisonView } from './comparison-view.js';
import { createMarkdown } from './markdown.js';
import { MTURK_PREVIEW_ASSIGNMENT, mturkSubmitUrl, prolificCompletionUrl, readEntryParams } from './providers.js';
import { raterHeaders } from './rater-headers.js';
import {
  answerConsent,
  completeRater,
  completionCodeFor,
  enterRater,
  finishInstructions,
  outcomeOf,
  reportContent,
  withdrawRater,
} from './rater-flow.js';
import { consentFormSchema, judgmentFormSchema, REASON_MAX, reportFormSchema } from './rater.schema.js';
import { isPreviewToken, raterIdFromToken, raterToken } from './rater-token.js';
import {
  activeTimesOfBatch,
  countGoldPairs,
  countReachableRegularPairs,
  firstRegularPairId,
  getAssignmentByPublicId,
  getPair,
  getRaterByPublicId,
  type RaterRow,
  raterProgress,
} from './rating.queries.js';
import { recordJudgment } from './record-judgment.js';

export type RaterRouterDeps = { db: Db; sessionSecret: string; clock: Clock; random?: () => number };

type BatchLocals = { batch: BatchRow; settings: BatchSettings };

const PRIVACY_NOTICE =
  'We store your answers, the time you spend on each comparison, the identifier your recruitment platform gives us and your browser type. ' +
  'We do not ask for your name or contact details. Answers are analysed and shared only under a pseudonym.';

function batchOf(res: Response): BatchLocals {
  return res.locals.raterBatch as BatchLocals;
}

function tokenFrom(req: Request): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  return body?.rt ?? req.query.rt;
}

/**
 * Every rater page: the batch from its public id, no caching, and the provider's own security headers.
 * Draft batches exist only for the console's preview.
 */
function withBatch(db: Db, options: { allowDraft?: boolean } = {}): RequestHandler {
  const headers = raterHeaders();
  return (req, res, next) => {
    const batch = getBatchRowByPublicId(db, String(req.params.batchId));
    res.set('Cache-Control', 'no-store');
    if (!batch || (batch.state === 'draft' && !options.allowDraft)) {
      headers.link(req, res, () => next(new HttpError(404, 'There is no study at this address. Check the link you were given.')));
      return;
    }
    const settings = batchSettingsSchema.parse(JSON.parse(batch.settings));
    res.locals.raterBatch = { batch, settings } satisfies BatchLocals;
    headers[settings.provider.kind](req, res, next);
  };
}

export function raterRouter(deps: RaterRouterDeps): Router {
  const { db, sessionSecret: secret, clock } = deps;
  const random = deps.random ?? Math.random;
  const markdown = createMarkdown();
  const router = Router();
  const batch = withBatch(db);
  const body = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const csrf = csrfProtection(secret, (req) => {
    const id = raterIdFromToken(secret, tokenFrom(req));
    return id ? `rater:${id}` : null;
  });

  const base = (b: BatchRow) => `/r/${encodeURIComponent(b.public_id)}`;
  const withToken = (path: string, rater: RaterRow) => `${path}?rt=${encodeURIComponent(raterToken(secret, rater.public_id))}`;

  function requireRater(req: Request, res: Response): RaterRow {
    const id = raterIdFromToken(secret, tokenFrom(req));
    const rater = id ? getRaterByPublicId(db, id) : undefined;
    if (!rater || rater.batch_id !== batchOf(res).batch.id) {
      throw new HttpError(403, 'This study link is not valid or has been changed. Please open the study again from the link you were given.', 'bad_rater_token');
    }
    return rater;
  }

  /** The step a rater is at, from their status alone (so reloads and returning participants land right). */
  function stepOf(rater: RaterRow): 'consent' | 'instructions' | 'next' | 'done' {
    return rater.status === 'consent'
      ? 'consent'
      : rater.status === 'instructions'
        ? 'instructions'
        : rater.status === 'onboarding' || rater.status === 'rating'
          ? 'next'
          : 'done';
  }

  /** Where a rater belongs now. */
  function placeOf(b: BatchRow, rater: RaterRow): string {
    return withToken(`${base(b)}/${stepOf(rater)}`, rater);
  }

  /** Where a rater belongs after a change just made to their row: read again (the old row if it is gone). */
  function placeAfterChange(b: BatchRow, rater: RaterRow): string {
    return placeOf(b, getRaterByPublicId(db, rater.public_id) ?? rater);
  }

  /** Sends a rater who is not at this step to the page of theirs; true when it did (the handler then stops). */
  function redirectUnlessAt(res: Response, b: BatchRow, rater: RaterRow, step: ReturnType<typeof stepOf>): boolean {
    if (stepOf(rater) === step) return false;
    res.redirect(303, placeOf(b, rater));
    return true;
  }

  function pageLocals(res: Response, rater: RaterRow | null, title: string) {
    const { batch: b } = batchOf(res);
    return {
      title,
      rt: rater ? raterToken(secret, rater.public_id) : '',
      csrfToken: res.locals.csrfToken as string,
      withdrawUrl: rater ? withToken(`${base(b)}/withdraw`, rater) : null,
    };
  }

  /** The n of "k of n": what this rater will really be shown, so the count never promises more than the batch holds. */
  function comparisonsPerRater(b: BatchRow, settings: BatchSettings, rater: RaterRow | null): number {
    return plannedComparisons({
      onboarding: onboardingSize(db, b.id),
      perRaterCap: settings.perRaterCap,
      regularReachable: countReachableRegularPairs(db, {
        batchId: b.id,
        raterId: rater?.id ?? null,
        k: settings.judgmentsPerPair,
        allowSameSample: settings.allowSameSample,
      }),
      attention: settings.attentionChecks ? { rate: settings.attentionChecks.rate, pairs: countGoldPairs(db, b.id, 'attention') } : null,
      raterPublicId: rater?.public_id ?? 'preview',
    });
  }

  function studyFacts(b: BatchRow, settings: BatchSettings, rater: RaterRow | null) {
    const n = comparisonsPerRater(b, settings, rater);
    return {
      question: settings.question,
      minutes: expectedMinutes(activeTimesOfBatch(db, b.id), n, settings.estimatedMinutes),
      pay: settings.pay,
      comparisons: n,
      provider: settings.provider.kind,
      privacy: PRIVACY_NOTICE,
    };
  }

  function notOpen(res: Response, b: BatchRow, rater: RaterRow | null): void {
    const closed = b.state === 'closed';
    res.status(closed ? 410 : 503).render('rater/notice', {
      ...pageLocals(res, rater, closed ? 'This study is closed' : 'This study is paused'),
      message: closed
        ? 'This study is closed and no longer accepts answers. Thank you for your interest.'
        : 'This study is paused for a moment. Please come back to this page a little later; your place is kept.',
    });
  }

  // Entry -----------------------------------------------------------------------------
  router.get('/:batchId', batch, csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const params = readEntryParams(settings.provider, req.query as Record<string, unknown>);
    if (params.kind === 'missing') {
      res.status(400).render('rater/notice', {
        ...pageLocals(res, null, 'This link is incomplete'),
        message: `This study link is missing ${params.missing.length === 1 ? 'a parameter' : 'parameters'} it needs: ${params.missing.join(', ')}. Please open the study again from your ${settings.provider.kind === 'mturk' ? 'MTurk' : 'Prolific'} page.`,
      });
      return;
    }
    if (params.kind === 'invalid') {
      res.status(400).render('rater/notice', { ...pageLocals(res, null, 'This link is not valid'), message: params.message });
      return;
    }
    if (params.kind === 'mturk-preview') {
      renderPreview(res, b, settings, 'mturk');
      return;
    }
    if (b.state !== 'open') {
      notOpen(res, b, null);
      return;
    }
    const entered = enterRater(db, b, params, req.get('user-agent') ?? null, clock(), settings.blockParticipantsOf);
    if (entered.kind === 'blocked') {
      res.status(403).render('rater/notice', { ...pageLocals(res, null, 'You have already taken part'), message: entered.message });
      return;
    }
    if (entered.kind === 'refused') {
      res.status(403).render('rater/notice', { ...pageLocals(res, null, 'This session belongs to someone else'), message: entered.message });
      return;
    }
    res.redirect(303, placeOf(b, entered.rater));
  });

  // Preview: the pages of a batch as a rater sees them, for the console; records nothing.
  function renderPreview(res: Response, b: BatchRow, settings: BatchSettings, kind: 'mturk' | 'console'): void {
    const pairId = firstRegularPairId(db, b.id);
    const pairRow = pairId === undefined ? undefined : getPair(db, pairId);
    res.render('rater/preview', {
      ...pageLocals(res, null, kind === 'mturk' ? 'Preview of this task' : 'Preview'),
      kind,
      facts: studyFacts(b, settings, null),
      consentHtml: markdown(settings.consent),
      instructionsHtml: markdown(settings.instructions),
      allowTie: settings.allowTie,
      reasonMode: settings.reason,
      // The example's sides are drawn like an assignment's, so Conversation 1 of the preview is not always condition a.
      view: pairRow ? buildComparisonView(db, pairRow, random() < 0.5 ? 'a' : 'b', settings.context) : null,
    });
  }

  router.get('/:batchId/preview', withBatch(db, { allowDraft: true }), csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    if (!isPreviewToken(secret, b.public_id, req.query.pt)) throw new HttpError(403, 'This preview link is not valid.', 'bad_preview_token');
    renderPreview(res, b, settings, 'console');
  });

  // Consent and instructions ------------------------------------------------------------
  router.get('/:batchId/consent', batch, csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = requireRater(req, res);
    if (redirectUnlessAt(res, b, rater, 'consent')) return;
    res.render('rater/consent', {
      ...pageLocals(res, rater, 'Consent'),
      action: `${base(b)}/consent`,
      consentHtml: markdown(settings.consent),
      facts: studyFacts(b, settings, rater),
      error: null,
    });
  });

  router.post('/:batchId/consent', batch, body, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    const parsed = consentFormSchema.safeParse(req.body);
    if (!parsed.success) throw new HttpError(400, describeIssues(parsed.error));
    answerConsent(db, rater, parsed.data.decision === 'agree', clock());
    res.redirect(303, placeAfterChange(b, rater));
  });

  router.get('/:batchId/instructions', batch, csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = requireRater(req, res);
    if (redirectUnlessAt(res, b, rater, 'instructions')) return;
    res.render('rater/instructions', {
      ...pageLocals(res, rater, 'Instructions'),
      action: `${base(b)}/instructions`,
      instructionsHtml: markdown(settings.instructions),
      facts: studyFacts(b, settings, rater),
      allowTie: settings.allowTie,
      reasonMode: settings.reason,
      onboarding: onboardingSize(db, b.id),
    });
  });

  router.post('/:batchId/instructions', batch, body, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    finishInstructions(db, rater, clock());
    res.redirect(303, placeAfterChange(b, rater));
  });

  // Comparisons --------------------------------------------------------------------------
  router.get('/:batchId/next', batch, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    if (redirectUnlessAt(res, b, rater, 'next')) return;
    if (b.state !== 'open') {
      notOpen(res, b, rater);
      return;
    }
    const outcome = assignNextPair(db, rater.id, { now: clock(), random });
    if (outcome.kind === 'assigned') {
      const notice = typeof req.query.notice === 'string' && ['full', 'late', 'reported'].includes(req.query.notice) ? `&notice=${req.query.notice}` : '';
      res.redirect(303, `${withToken(`${base(b)}/c/${encodeURIComponent(outcome.assignment.public_id)}`, rater)}${notice}`);
      return;
    }
    if (outcome.kind === 'done' && (outcome.reason === 'cap' || outcome.judged > 0)) {
      completeRater(db, rater, clock());
      res.redirect(303, `${withToken(`${base(b)}/done`, rater)}${outcome.reason === 'exhausted' ? '&why=exhausted' : ''}`);
      return;
    }
    if (outcome.kind === 'done') {
      res.render('rater/notice', {
        ...pageLocals(res, rater, 'No more comparisons'),
        message:
          'No more comparisons are available right now, thank you. ' +
          (rater.provider === 'link' ? 'You may close this page.' : 'Please return this study on your recruitment platform so that your place goes to someone else.'),
      });
      return;
    }
    if (outcome.kind === 'batch-not-open') {
      notOpen(res, b, rater);
      return;
    }
    res.redirect(303, placeAfterChange(b, rater));
  });

  function renderComparison(req: Request, res: Response, rater: RaterRow, assignmentPublicId: string, status: number, error: string | null, form: { choice?: string; reason?: string }) {
    const { batch: b, settings } = batchOf(res);
    const assignment = getAssignmentByPublicId(db, assignmentPublicId);
    if (!assignment || assignment.rater_id !== rater.id) throw new HttpError(404, 'This comparison is not one of yours. Go back to your current comparison.', 'no_assignment');
    const pair = getPair(db, assignment.pair_id);
    if (!pair) throw new HttpError(404, 'This comparison no longer exists.');
    const progress = raterProgress(db, rater.id);
    const now = clock();
    const expiresIn = Math.round((Date.parse(assignment.expires_at) - now.getTime()) / 1000);
    const notice = typeof req.query.notice === 'string' ? req.query.notice : null;
    const n = Math.max(progress.judged + 1, comparisonsPerRater(b, settings, rater));
    res.status(status).render('rater/comparison', {
      ...pageLocals(res, rater, `Comparison ${progress.judged + 1} of ${n}`),
      action: `${base(b)}/c/${encodeURIComponent(assignment.public_id)}`,
      reportUrl: withToken(`${base(b)}/c/${encodeURIComponent(assignment.public_id)}/report`, rater),
      k: progress.judged + 1,
      n,
      view: buildComparisonView(db, pair, assignment.left_side, settings.context),
      question: settings.question,
      allowTie: settings.allowTie,
      reasonMode: settings.reason,
      reasonMax: REASON_MAX,
      leaseMinutes: settings.leaseMinutes,
      expiresIn,
      practice: pair.kind === 'onboarding',
      notice: notice === 'full' ? 'Your previous answer arrived after enough answers had been collected for that comparison, so it was not needed. Thank you!' : notice === 'reported' ? 'Thank you for your report. We will review it.' : null,
      error,
      form,
    });
  }

  router.get('/:batchId/c/:assignmentId', batch, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    if (redirectUnlessAt(res, b, rater, 'next')) return;
    const assignment = getAssignmentByPublicId(db, String(req.params.assignmentId));
    if (assignment && assignment.rater_id === rater.id && assignment.state === 'answered') {
      res.redirect(303, withToken(`${base(b)}/next`, rater));
      return;
    }
    renderComparison(req, res, rater, String(req.params.assignmentId), 200, null, {});
  });

  router.post('/:batchId/c/:assignmentId', batch, body, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    const assignmentPublicId = String(req.params.assignmentId);
    const raw = req.body as Record<string, unknown>;
    const form = { choice: typeof raw.choice === 'string' ? raw.choice : undefined, reason: typeof raw.reason === 'string' ? raw.reason : undefined };
    const parsed = judgmentFormSchema.safeParse(req.body);
    if (!parsed.success) {
      if (typeof raw.choice === 'string' && !['left', 'right', 'tie'].includes(raw.choice)) throw new HttpError(400, 'Unknown choice. Please choose one of the conversations.', 'bad_choice');
      renderComparison(req, res, rater, assignmentPublicId, 400, describeIssues(parsed.error).replace(/^[a-z_]+: /, ''), form);
      return;
    }
    const outcome = recordJudgment(
      db,
      rater.id,
      { assignmentPublicId, choice: parsed.data.choice, reason: parsed.data.reason, activeMs: parsed.data.active_ms ?? null },
      clock(),
    );
    if (outcome.kind === 'rejected') {
      if (outcome.status === 400) {
        renderComparison(req, res, rater, assignmentPublicId, 400, outcome.message, form);
        return;
      }
      throw new HttpError(outcome.status, outcome.message, outcome.code);
    }
    const after = getRaterByPublicId(db, rater.public_id) ?? rater;
    if (after.status === 'screened_out') {
      res.redirect(303, withToken(`${base(b)}/done`, after));
      return;
    }
    res.redirect(303, `${withToken(`${base(b)}/next`, after)}${outcome.kind === 'full' ? '&notice=full' : ''}`);
  });

  // Content reports ------------------------------------------------------------------------
  router.get('/:batchId/c/:assignmentId/report', batch, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    const assignment = getAssignmentByPublicId(db, String(req.params.assignmentId));
    if (!assignment || assignment.rater_id !== rater.id) throw new HttpError(404, 'This comparison is not one of yours.', 'no_assignment');
    res.render('rater/report', {
      ...pageLocals(res, rater, 'Report a problem'),
      action: `${base(b)}/c/${encodeURIComponent(assignment.public_id)}/report`,
      backUrl: withToken(`${base(b)}/c/${encodeURIComponent(assignment.public_id)}`, rater),
      error: null,
      form: {},
    });
  });

  router.post('/:batchId/c/:assignmentId/report', batch, body, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    const assignmentPublicId = String(req.params.assignmentId);
    const parsed = reportFormSchema.safeParse(req.body);
    const back = withToken(`${base(b)}/c/${encodeURIComponent(assignmentPublicId)}`, rater);
    if (!parsed.success) {
      res.status(400).render('rater/report', {
        ...pageLocals(res, rater, 'Report a problem'),
        action: `${base(b)}/c/${encodeURIComponent(assignmentPublicId)}/report`,
        backUrl: back,
        error: describeIssues(parsed.error).replace(/^[a-z_]+: /, ''),
        form: req.body as Record<string, unknown>,
      });
      return;
    }
    if (!reportContent(db, rater, assignmentPublicId, parsed.data.which, parsed.data.reason, clock())) {
      throw new HttpError(404, 'This comparison is not one of yours.', 'no_assignment');
    }
    res.redirect(303, `${back}&notice=reported`);
  });

  // Withdraw and done ----------------------------------------------------------------------
  router.get('/:batchId/withdraw', batch, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    res.render('rater/withdraw', { ...pageLocals(res, rater, 'Withdraw from this study'), action: `${base(b)}/withdraw`, backUrl: placeOf(b, rater) });
  });

  router.post('/:batchId/withdraw', batch, body, csrf, (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = requireRater(req, res);
    withdrawRater(db, rater, clock());
    res.redirect(303, placeAfterChange(b, rater));
  });

  router.get('/:batchId/done', batch, csrf, (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = requireRater(req, res);
    const outcome = outcomeOf(rater);
    if (!outcome) {
      res.redirect(303, placeOf(b, rater));
      return;
    }
    const code = completionCodeFor(settings, outcome);
    const prolificUrl = rater.provider === 'prolific' && code ? prolificCompletionUrl(code) : null;
    const mturk = rater.provider === 'mturk' && rater.submit_to && rater.session_id !== MTURK_PREVIEW_ASSIGNMENT && outcome !== 'withdrew'
      ? { action: mturkSubmitUrl(rater.submit_to), assignmentId: rater.session_id ?? '', outcome, code: code ?? '' }
      : null;
    res.render('rater/done', {
      ...pageLocals(res, rater, outcome === 'completed' ? 'Thank you' : outcome === 'withdrew' ? 'You have withdrawn' : 'Thank you for your time'),
      withdrawUrl: null,
      outcome,
      exhausted: req.query.why === 'exhausted',
      code,
      provider: rater.provider,
      prolificUrl,
      mturk,
    });
  });

  return router;
}
