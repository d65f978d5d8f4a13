import type { IRouter, Request, RequestHandler, Response } from 'express';
import type { ZodError } from 'zod';
import type { BatchRow } from '../batches/batch.queries.js';
import { batchQuestions, type BatchSettings } from '../batches/batch.schema.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { describeIssues } from '../web/validate.js';
import { type AnswerStep, answerAndLease, isHitDone } from './answer-and-lease.js';
import { type AssignOutcome, assignNextPair } from './assign-next-pair.js';
import { mturkSubmitUrl } from './providers.js';
import { completeRater, completionCodeFor, reportContent } from './rater-flow.js';
import { batchOf, type RaterPages } from './rater-pages.js';
import { buildQuestionViews } from './question-view.js';
import { type Answer, hasUnknownChoice, judgmentFormSchema, keptAnswers, questionOfField, readAnswers, REASON_MAX, reasonOfField, reportFormSchema } from './rater.schema.js';
import { type AssignmentRow, awaitsFirstView, getAssignmentByPublicId, getPair, getRaterByPublicId, liveLeaseOf, progressOf, type RaterRow, raterProgress } from './rating.queries.js';
import { type JudgmentInput, type RecordOutcome, recordJudgment } from './record-judgment.js';
import { answerAgain, revisionRefusal } from './revise-judgment.js';
import { storedAnswersOf } from './revision.queries.js';
import type { Db } from '../db/connection.js';
import { seeOther } from '../web/see-other.js';

type Middleware = { batch: RequestHandler; body: RequestHandler; csrf: RequestHandler };

const NOTICES = ['full', 'late', 'reported', 'revised', 'unchanged', 'answered'];

/** What the comparison page says on the way in, by the `notice` its address carries. */
const NOTICE_TEXTS: Record<string, string> = {
  full: 'Your previous answer arrived after enough answers had been collected for that comparison, so it was not needed. Thank you!',
  reported: 'Thank you for your report. We will review it.',
  revised: 'Your changed answer to the previous comparison is recorded.',
  unchanged: 'Your answer to the previous comparison had already been recorded and can no longer be changed, so your new choice was not stored.',
  answered: 'You went back to a comparison you had already answered. Its answer is recorded and can no longer be changed. This is your next comparison.',
};

function comparisonUrl(pages: RaterPages, b: BatchRow, rater: RaterRow, assignmentPublicId: string): string {
  return pages.withToken(`${pages.base(b)}/c/${encodeURIComponent(assignmentPublicId)}`, rater);
}

/**
 * A batch that is not open hands out nothing new, but strands nobody: a comparison whose lease is running can
 * still be answered; after that, a closed batch ends the session with the `partial` code, and a paused one
 * offers to wait or to finish now with it.
 */
function whenNotOpen(pages: RaterPages, res: Response, b: BatchRow, rater: RaterRow): void {
  const { db, clock } = pages.deps;
  const live = liveLeaseOf(db, rater.id);
  if (live && live.expires_at > clock().toISOString()) {
    seeOther(res, comparisonUrl(pages, b, rater, live.public_id));
    return;
  }
  if (b.state === 'closed') {
    completeRater(db, rater, 'closed', clock());
    seeOther(res, pages.withToken(`${pages.base(b)}/done`, rater));
    return;
  }
  res.status(503).render('rater/notice', {
    ...pages.pageLocals(res, rater, 'This study is paused'),
    message:
      'This study is paused for a moment. You can wait and reload this page a little later to go on (your place is kept), ' +
      'or finish now: you then get your completion code for the work you have done.',
    finishAction: `${pages.base(b)}/finish`,
  });
}

/**
 * The answer's transaction (answer-and-lease.ts): on the answer thread when the server runs one, else here. When
 * the thread gives no reply (it ended or is restarting), it runs here: an answer the thread stored is then a duplicate.
 */
async function answer(pages: RaterPages, rater: RaterRow, input: JudgmentInput, step: AnswerStep): Promise<RecordOutcome> {
  const { db, clock, random, answerThread } = pages.deps;
  const reply = answerThread ? await answerThread.answer(rater, input, clock()) : null;
  if (!reply) return answerAndLease(db).immediate(rater, input, clock(), random, step);
  Object.assign(step, reply.step);
  if (reply.error) throw reply.error;
  return reply.outcome;
}

/**
 * Hands the rater their next comparison (or their end): the answer's POST does this itself and redirects straight to
 * the next comparison page, so an answered comparison costs two requests, not three (issue 12); GET /next is the
 * same step for every other way in (a reload, a return, a notice).
 */
async function goToNext(pages: RaterPages, res: Response, b: BatchRow, settings: BatchSettings, rater: RaterRow, notice: string | null, answering = false, assigned: AssignOutcome | null = null): Promise<void> {
  const { db, clock, random } = pages.deps;
  const { base, withToken } = pages;
  // An answer's POST only ever redirects (a reload must not post it again): a page it would show is GET /next's.
  const page = (show: () => void) => (answering ? seeOther(res, withToken(`${base(b)}/next`, rater)) : show());
  if (b.state !== 'open') {
    page(() => whenNotOpen(pages, res, b, rater));
    return;
  }
  if (isHitDone(db, settings, rater)) {
    seeOther(res, withToken(`${base(b)}/hit-done`, rater));
    return;
  }
  const now = clock();
  const outcome = assigned ?? (await pages.write('assignNextPair', [rater.id, now, answering], () => assignNextPair(db, rater.id, { now, random, redirecting: answering })));
  if (outcome.kind === 'assigned') {
    seeOther(res, `${comparisonUrl(pages, b, rater, outcome.assignment.public_id)}${notice && NOTICES.includes(notice) ? `&notice=${notice}` : ''}`);
    return;
  }
  if (outcome.kind === 'done') {
    // Everyone who started is given their code: a rater whose promise ran short (their reservations lapsed while
    // they were away, or a late answer filled a reserved pair) is thanked as done.
    await pages.write('completeRater', [rater, outcome.reason, clock()]);
    seeOther(res, `${withToken(`${base(b)}/done`, rater)}${outcome.reason === 'exhausted' ? '&why=exhausted' : ''}`);
    return;
  }
  if (outcome.kind === 'limited') {
    page(() => {
      res.set('Retry-After', '600');
      pages.notice(
        res,
        429,
        rater,
        'Please wait a moment',
        'Too many sessions of this study are open from your internet connection at the moment. Please finish the other sessions, or reload this page in about ten minutes.',
      );
    });
    return;
  }
  if (outcome.kind === 'batch-not-open') {
    page(() => whenNotOpen(pages, res, b, rater));
    return;
  }
  seeOther(res, pages.placeAfterChange(b, rater));
}

/**
 * A refused answer as its page shows it: the message; the on-page number of its question on a page of several; and
 * when it is about a reason, that reason box's question, beside which the message also stands (issue 49).
 */
type FormRefusal = { message: string; question: number | null; reason: number | null };

/** What the page fills its answers with: as sent (a refused answer) or as stored (an answer being changed). */
type AnswerForm = { choices: string[]; reasons: string[]; confidences?: string[] };

/** The first problem of an answer form that does not parse, as its page shows it. */
function refusalOfForm(error: ZodError, count: number): FormRefusal {
  const field = error.issues[0]?.path[0];
  const question = count > 1 ? questionOfField(field) : null;
  const message = error.issues[0]?.message ?? describeIssues(error);
  return { message: question ? `Question ${question}: ${message}` : message, question, reason: reasonOfField(field) };
}

/**
 * The form of an answered assignment (issue 49), which the page offers to change: the answers as stored, unless the
 * page is shown again with what the rater sent.
 */
function revisingForm(db: Db, assignment: AssignmentRow, form: AnswerForm): AnswerForm {
  if (form.choices.some((c) => c !== '') || form.reasons.some((r) => r !== '') || form.confidences?.some((c) => c !== '')) return form;
  const stored = storedAnswersOf(db, assignment.id);
  return { choices: stored.map((a) => a.choice), reasons: stored.map((a) => a.reason ?? ''), confidences: stored.map((a) => (a.confidence === null ? '' : String(a.confidence))) };
}

/**
 * `error` names the refused answer; `errorQuestion` is its question's number on the page when it is about one. An
 * answered assignment's page is the one that changes its answer (revise-judgment.ts): it says so, and counts as the
 * comparison it was.
 */
async function renderComparison(
  pages: RaterPages,
  req: Request,
  res: Response,
  rater: RaterRow,
  assignmentPublicId: string,
  status: number,
  error: FormRefusal | null,
  form: AnswerForm,
  known?: AssignmentRow,
): Promise<void> {
  const { db, clock } = pages.deps;
  const { base, withToken } = pages;
  const { batch: b, settings } = batchOf(res);
  const assignment = known ?? getAssignmentByPublicId(db, assignmentPublicId);
  if (!assignment || assignment.rater_id !== rater.id) throw new UserFacingError('This comparison is not one of yours. Go back to your current comparison.', 404, 'no_assignment');
  const pair = getPair(db, assignment.pair_id);
  if (!pair) throw new UserFacingError('This comparison no longer exists. Go back to the study link to continue.', 404);
  const now = clock();
  // Serving the page is what turns the short hold of a new lease into the full lease time.
  const expiresAt = awaitsFirstView(assignment) ? await pages.write('markAssignmentViewed', [assignment, now, settings.leaseMinutes]) : assignment.expires_at;
  // The rater's row was read at the start of this request, before anything changed it.
  const progress = progressOf(rater);
  const expiresIn = Math.round((Date.parse(expiresAt) - now.getTime()) / 1000);
  const notice = typeof req.query.notice === 'string' ? req.query.notice : null;
  const revising = assignment.state === 'answered';
  // In a multi-HIT study, pages are counted within the current HIT.
  const k = progress.judged + (revising ? 0 : 1) - (pages.hitWindow(settings, rater)?.judgedAtStart ?? 0);
  const n = Math.max(k, pages.comparisonsPerRater(b, settings, rater));
  res.status(status).render('rater/comparison', {
    ...pages.pageLocals(res, rater, `Comparison ${k} of ${n}`),
    action: `${base(b)}/c/${encodeURIComponent(assignment.public_id)}`,
    reportUrl: withToken(`${base(b)}/c/${encodeURIComponent(assignment.public_id)}/report`, rater),
    k,
    n,
    view: pages.comparisonView(pair, assignment.left_side, settings.context),
    questions: buildQuestionViews(settings),
    reasonMax: REASON_MAX,
    leaseMinutes: settings.leaseMinutes,
    expiresIn,
    practice: pair.kind === 'onboarding',
    notice: (notice && NOTICE_TEXTS[notice]) ?? null,
    error: error?.message ?? null,
    errorQuestion: error?.question ?? null,
    errorReason: error?.reason ?? null,
    form: revising ? revisingForm(db, assignment, form) : form,
    revising,
    nextUrl: withToken(`${base(b)}/next`, rater),
  });
}

function showNext(pages: RaterPages): RequestHandler {
  return async (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (pages.redirectUnlessAt(res, b, rater, 'next')) return;
    await goToNext(pages, res, b, settings, rater, typeof req.query.notice === 'string' ? req.query.notice : null);
  };
}

// The end of one HIT of a multi-HIT study: submit it to MTurk, then accept another to go on.
function showHitDone(pages: RaterPages): RequestHandler {
  const { db } = pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (!isHitDone(db, settings, rater) || !rater.submit_to || !rater.session_id) {
      seeOther(res, pages.placeOf(b, rater));
      return;
    }
    const progress = raterProgress(db, rater.id);
    const code = completionCodeFor(settings, 'completed');
    res.render('rater/hit-done', {
      ...pages.pageLocals(res, rater, 'This HIT is done'),
      remaining: Math.min(settings.perRaterCap, rater.promised ?? settings.perRaterCap) - progress.regularJudged,
      code,
      mturk: { action: mturkSubmitUrl(rater.submit_to), assignmentId: rater.session_id, outcome: 'completed', code: code ?? '' },
    });
  };
}

/** Whether the rater may still change their answer to this answered assignment (revise-judgment.ts). */
function mayRevise(pages: RaterPages, res: Response, rater: RaterRow, assignment: AssignmentRow): boolean {
  const { batch, settings } = batchOf(res);
  const pair = getPair(pages.deps.db, assignment.pair_id);
  return pair !== undefined && revisionRefusal(pages.deps.db, rater, assignment, batch, settings, pair) === null;
}

function showComparison(pages: RaterPages): RequestHandler {
  const { db, clock } = pages.deps;
  const { base, withToken } = pages;
  return async (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    if (pages.redirectUnlessAt(res, b, rater, 'next')) return;
    const assignment = getAssignmentByPublicId(db, String(req.params.assignmentId));
    const mine = assignment && assignment.rater_id === rater.id;
    // Back to a comparison already answered: the page that changes its answer while it may change, else the next
    // comparison, saying that answer is final (issue 49). Never this page's form for another comparison.
    if (mine && assignment.state === 'answered' && !mayRevise(pages, res, rater, assignment)) {
      seeOther(res, `${withToken(`${base(b)}/next`, rater)}&notice=answered`);
      return;
    }
    const ended = b.state === 'closed' && mine && !(assignment.state === 'leased' && assignment.expires_at > clock().toISOString());
    if (ended) {
      seeOther(res, withToken(`${base(b)}/next`, rater));
      return;
    }
    await renderComparison(pages, req, res, rater, String(req.params.assignmentId), 200, null, { choices: [], reasons: [] }, assignment);
  };
}

function submitAnswer(pages: RaterPages): RequestHandler {
  const { db, clock } = pages.deps;
  const { base, withToken } = pages;
  return async (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    const assignmentPublicId = String(req.params.assignmentId);
    const raw = req.body as Record<string, unknown>;
    const count = batchQuestions(batchOf(res).settings).length;
    const form = keptAnswers(raw, count);
    const parsed = judgmentFormSchema.safeParse(req.body);
    if (!parsed.success) {
      if (hasUnknownChoice(raw)) throw new UserFacingError('Unknown choice. Go back and choose one of the conversations.', 400, 'bad_choice');
      await renderComparison(pages, req, res, rater, assignmentPublicId, 400, refusalOfForm(parsed.error, count), form);
      return;
    }
    const read = readAnswers(parsed.data, count);
    if ('missing' in read) {
      await renderComparison(pages, req, res, rater, assignmentPublicId, 400, { message: read.message, question: count > 1 ? read.missing : null, reason: null }, form);
      return;
    }
    // A batch has at least one question (batch.schema.ts), so the first answer is there.
    const [first, ...later] = read.answers as [Answer, ...Answer[]];
    const input = {
      assignmentPublicId,
      choice: first.choice,
      reason: first.reason,
      confidence: first.confidence,
      activeMs: parsed.data.active_ms ?? null,
      signals: parsed.data.signals ?? null,
      laterAnswers: later,
    };
    const step: AnswerStep = { leasing: false, answered: undefined, next: null };
    let nextFailed = false;
    let outcome: RecordOutcome;
    try {
      outcome = await answer(pages, rater, input, step);
    } catch (error) {
      if (!step.leasing) throw error;
      nextFailed = true;
      step.answered = undefined;
      outcome = recordJudgment(db, rater.id, input, clock(), answerAgain);
    }
    if (outcome.kind === 'closed') {
      completeRater(db, rater, 'closed', clock());
      seeOther(res, withToken(`${base(b)}/done`, rater));
      return;
    }
    if (outcome.kind === 'rejected') {
      if (outcome.status === 400) {
        const reason = outcome.code.startsWith('reason_') ? (outcome.question ?? null) : null;
        await renderComparison(pages, req, res, rater, assignmentPublicId, 400, { message: outcome.message, question: count > 1 ? (outcome.question ?? null) : null, reason }, form);
        return;
      }
      throw new UserFacingError(outcome.message, outcome.status, outcome.code);
    }
    // The rater as the answer left them (read inside the transaction when it stored or was a duplicate).
    const after = step.answered ?? getRaterByPublicId(db, rater.public_id) ?? rater;
    if (pages.redirectUnlessAt(res, b, after, 'next')) return;
    // A late answer that was not needed is thanked on the way (GET /next carries the notice to whatever comes next).
    if (outcome.kind === 'full') {
      seeOther(res, `${withToken(`${base(b)}/next`, after)}&notice=full`);
      return;
    }
    // A changed answer, or one that could no longer change, is said so on the next page.
    const notice = outcome.kind === 'revised' ? 'revised' : outcome.kind === 'final' ? 'unchanged' : null;
    if (nextFailed) {
      seeOther(res, `${withToken(`${base(b)}/next`, after)}${notice ? `&notice=${notice}` : ''}`);
      return;
    }
    await goToNext(pages, res, b, batchOf(res).settings, after, notice, true, step.next);
  };
}

// Content reports ------------------------------------------------------------------------
function showReportForm(pages: RaterPages): RequestHandler {
  const { db } = pages.deps;
  const { base } = pages;
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    const assignment = getAssignmentByPublicId(db, String(req.params.assignmentId));
    if (!assignment || assignment.rater_id !== rater.id) throw new UserFacingError('This comparison is not one of yours. Go back to your current comparison.', 404, 'no_assignment');
    res.render('rater/report', {
      ...pages.pageLocals(res, rater, 'Report a problem'),
      action: `${base(b)}/c/${encodeURIComponent(assignment.public_id)}/report`,
      backUrl: comparisonUrl(pages, b, rater, assignment.public_id),
      error: null,
      form: {},
    });
  };
}

function submitReport(pages: RaterPages): RequestHandler {
  const { db, clock } = pages.deps;
  const { base } = pages;
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = pages.requireRater(req, res);
    const assignmentPublicId = String(req.params.assignmentId);
    const parsed = reportFormSchema.safeParse(req.body);
    const back = comparisonUrl(pages, b, rater, assignmentPublicId);
    if (!parsed.success) {
      res.status(400).render('rater/report', {
        ...pages.pageLocals(res, rater, 'Report a problem'),
        action: `${base(b)}/c/${encodeURIComponent(assignmentPublicId)}/report`,
        backUrl: back,
        error: describeIssues(parsed.error).replace(/^[a-z_]+: /, ''),
        form: req.body as Record<string, unknown>,
      });
      return;
    }
    if (!reportContent(db, rater, assignmentPublicId, parsed.data.which, parsed.data.reason, clock())) {
      throw new UserFacingError('This comparison is not one of yours. Go back to your current comparison.', 404, 'no_assignment');
    }
    seeOther(res, `${back}&notice=reported`);
  };
}

/** The next comparison, the comparison page and its answer, and content reports. */
export function comparisonRoutes(router: IRouter, pages: RaterPages, mw: Middleware): void {
  router.get('/r/:batchId/next', mw.batch, mw.csrf, showNext(pages));
  router.get('/r/:batchId/hit-done', mw.batch, mw.csrf, showHitDone(pages));
  router.get('/r/:batchId/c/:assignmentId', mw.batch, mw.csrf, showComparison(pages));
  router.post('/r/:batchId/c/:assignmentId', mw.batch, mw.body, mw.csrf, submitAnswer(pages));
  router.get('/r/:batchId/c/:assignmentId/report', mw.batch, mw.csrf, showReportForm(pages));
  router.post('/r/:batchId/c/:assignmentId/report', mw.batch, mw.body, mw.csrf, submitReport(pages));
}
