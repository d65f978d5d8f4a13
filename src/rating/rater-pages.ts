import type { Request, Response } from 'express';
import type { BatchRow } from '../batches/batch.queries.js';
import { batchQuestions, type BatchSettings, type ProviderKind } from '../batches/batch.schema.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { hitWindowOf } from './answer-and-lease.js';
import type { AnswerThread } from './answer-thread.js';
import { plannedComparisons } from './attention-schedule.js';
import { createComparisonViewMemo } from './comparison-view.js';
import { createTtlMemo } from './ttl-memo.js';
import { consentTimeOfBatch, createWordsMemo } from './consent-time.queries.js';
import { createMarkdown } from './markdown.js';
import { touchRaterHolds } from './rater-flow.js';
import { raterIdFromToken, raterToken } from './rater-token.js';
import { runThreadWrite, type ThreadWriteArgs, type ThreadWriteName, type ThreadWriteResult } from './thread-writes.js';
import {
  countGoldPairs,
  countReachableRegularPairs,
  getRaterByPublicId,
  type RaterRow,
} from './rating.queries.js';
import { seeOther } from '../web/see-other.js';

// What every step of the rater's flow shares: the batch of the request, the rater from their signed token, where a
// rater belongs, and the pieces every rater page is rendered with. One instance per router (no module state).

export type RaterPagesDeps = { db: Db; sessionSecret: string; clock: Clock; random: () => number; answerThread?: AnswerThread | null };
export type BatchLocals = { batch: BatchRow; settings: BatchSettings };
export type Step = 'consent' | 'instructions' | 'next' | 'done';

const PRIVACY_NOTICE =
  'We store your answers, the time you spend on each comparison, the identifier your recruitment platform gives us, your browser type ' +
  'and a scrambled code made from your internet address (to stop one computer from taking many places; the address itself is not stored). ' +
  'We do not ask for your name or contact details. Answers are analysed and shared only under a pseudonym.';

/** What a person who cannot go on should do with their place, in the provider's own terms. */
export function returnAdvice(provider: ProviderKind): string {
  if (provider === 'prolific') return 'Please return your submission on Prolific (on your Prolific submissions page, choose "Return submission") so that your place goes to someone else.';
  if (provider === 'mturk') return 'Please return this HIT on MTurk (the "Return" button) so that it does not count against you.';
  return 'You may close this page.';
}

export function batchOf(res: Response): BatchLocals {
  return res.locals.raterBatch as BatchLocals;
}

export function tokenFrom(req: Request): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  return body?.rt ?? req.query.rt;
}

export function entryTokenFrom(req: Request): unknown {
  const body = req.body as Record<string, unknown> | undefined;
  return body?.et;
}

/** The step a rater is at, from their status alone (so reloads and returning participants land right). */
function stepOf(rater: RaterRow): Step {
  if (rater.status === 'consent') return 'consent';
  if (rater.status === 'instructions') return 'instructions';
  return rater.status === 'onboarding' || rater.status === 'rating' ? 'next' : 'done';
}

/** Where each of a rater's pages is, who the rater of a request is, and what every rater page is rendered with. */
function createRaterPlaces(db: Db, secret: string, clock: Clock) {
  const base = (b: BatchRow) => `/r/${encodeURIComponent(b.public_id)}`;
  const withToken = (path: string, rater: RaterRow) => `${path}?rt=${encodeURIComponent(raterToken(secret, rater.public_id))}`;

  /** The rater of a signed token, in this batch; seeing them keeps their reserved pairs for another lease time. */
  function requireRater(req: Request, res: Response): RaterRow {
    const id = raterIdFromToken(secret, tokenFrom(req));
    const rater = id ? getRaterByPublicId(db, id) : undefined;
    const { batch, settings } = batchOf(res);
    if (!rater || rater.batch_id !== batch.id) {
      throw new UserFacingError('This study link is not valid or has been changed. Please open the study again from the link you were given.', 403, 'bad_rater_token');
    }
    touchRaterHolds(db, rater, settings.leaseMinutes, clock());
    return rater;
  }

  function placeOf(b: BatchRow, rater: RaterRow): string {
    return withToken(`${base(b)}/${stepOf(rater)}`, rater);
  }

  /** Where a rater belongs after a change just made to their row: read again (the old row if it is gone). */
  function placeAfterChange(b: BatchRow, rater: RaterRow): string {
    return placeOf(b, getRaterByPublicId(db, rater.public_id) ?? rater);
  }

  /** Sends a rater who is not at this step to the page of theirs; true when it did (the handler then stops). */
  function redirectUnlessAt(res: Response, b: BatchRow, rater: RaterRow, step: Step): boolean {
    if (stepOf(rater) === step) return false;
    seeOther(res, placeOf(b, rater));
    return true;
  }

  function pageLocals(res: Response, rater: RaterRow | null, title: string) {
    const { batch: b } = batchOf(res);
    return {
      title,
      rt: rater ? raterToken(secret, rater.public_id) : '',
      et: '',
      csrfToken: res.locals.csrfToken as string,
      withdrawUrl: rater ? withToken(`${base(b)}/withdraw`, rater) : null,
    };
  }

  return { base, withToken, requireRater, stepOf, placeOf, placeAfterChange, redirectUnlessAt, pageLocals };
}

/** The "k of n" of a rater's pages and the facts of the consent form, from figures memoised once per router. */
function createStudyFacts(db: Db, nowMs: () => number) {
  // Rater pages promise a time from figures at most 10 s old; the console's coordinator view reads them each time.
  const wordsMemo = createWordsMemo({ ttlMs: 10_000, now: nowMs });
  // A batch's practice and attention pairs, counted for every page's "k of n": they change only when a researcher
  // edits the batch, which a page may then show up to 5 s late (issue 12: two counts of the batch's pairs a page).
  const goldMemo = createTtlMemo<number>({ ttlMs: 5_000, max: 200, now: nowMs });
  const goldPairs = (batchId: number, kind: 'onboarding' | 'attention') => goldMemo(`${batchId}|${kind}`, () => countGoldPairs(db, batchId, kind));

  const hitWindow = (settings: BatchSettings, rater: RaterRow | null) => hitWindowOf(db, settings, rater);

  /**
   * The n of "k of n": what this rater will really be shown. For a rater, the regular pairs promised at consent
   * (fewer only if their reservations lapsed while they were away); before consent, `promise` (what consent would
   * reserve now); for a preview, every place a new rater could get.
   */
  function comparisonsPerRater(b: BatchRow, settings: BatchSettings, rater: RaterRow | null, promise?: { count: number; raterPublicId: string }): number {
    const hit = hitWindow(settings, rater);
    const cap = Math.min(settings.perRaterCap, rater?.promised ?? settings.perRaterCap, hit?.regularEnd ?? Number.POSITIVE_INFINITY);
    const reachable =
      promise?.count ??
      countReachableRegularPairs(db, { batchId: b.id, raterId: rater?.id ?? null, k: settings.judgmentsPerPair, allowSameSample: settings.allowSameSample, atMost: cap });
    const planned = plannedComparisons({
      onboarding: goldPairs(b.id, 'onboarding'),
      perRaterCap: cap,
      regularReachable: reachable,
      attention: settings.attentionChecks ? { rate: settings.attentionChecks.rate, pairs: goldPairs(b.id, 'attention') } : null,
      // Attention checks fall at a phase of the rater's own id, so the count before consent uses the id they will have.
      raterPublicId: rater?.public_id ?? promise?.raterPublicId ?? 'preview',
    });
    // In a multi-HIT study, n counts the pages of the current HIT only.
    return planned - (hit?.judgedAtStart ?? 0);
  }

  function studyFacts(b: BatchRow, settings: BatchSettings, rater: RaterRow | null, promise?: { count: number; raterPublicId: string }) {
    const n = comparisonsPerRater(b, settings, rater, promise);
    return {
      question: settings.question,
      /** Every question of a comparison page, in page order (one, `question`, for most batches). */
      questions: batchQuestions(settings).map((q) => q.text),
      minutes: consentTimeOfBatch(db, b.id, settings, n, wordsMemo).minutes,
      pay: settings.pay,
      comparisons: n,
      provider: settings.provider.kind,
      privacy: PRIVACY_NOTICE,
    };
  }

  return { comparisonsPerRater, hitWindow, studyFacts };
}

type RaterPlaces = ReturnType<typeof createRaterPlaces>;

/** The pages that say what happened and what to do next, instead of a step of the flow. */
function createNotices(pageLocals: RaterPlaces['pageLocals']) {
  /** A page that says what happened and what to do next, in the rater template. */
  function notice(res: Response, status: number, rater: RaterRow | null, title: string, message: string): void {
    res.status(status).render('rater/notice', { ...pageLocals(res, rater, title), message, finishAction: null });
  }

  /** The closed (410) or paused (503) page for someone who has not started. */
  function notOpen(res: Response, b: BatchRow, settings: BatchSettings): void {
    if (b.state === 'closed') {
      notice(res, 410, null, 'This study is closed', `This study is closed and no longer accepts answers. Nothing has been recorded. ${returnAdvice(settings.provider.kind)}`);
      return;
    }
    notice(res, 503, null, 'This study is paused', 'This study is paused for a moment. Please come back to this link a little later.');
  }

  /** Before consent, when nothing is left for a new rater: nobody reads a consent form for work that is not there. */
  function studyFull(res: Response, settings: BatchSettings): void {
    notice(
      res,
      200,
      null,
      'This study is full',
      `Thank you for your interest. Every comparison of this study is taken at the moment, so there is no work for you here and nothing has been recorded. ${returnAdvice(settings.provider.kind)}`,
    );
  }

  return { notice, notOpen, studyFull };
}

export function createRaterPages(deps: RaterPagesDeps) {
  const { db, sessionSecret: secret, clock } = deps;
  const markdown = createMarkdown();
  const nowMs = () => clock().getTime();
  const comparisonView = createComparisonViewMemo(db, { now: nowMs });
  const places = createRaterPlaces(db, secret, clock);
  const facts = createStudyFacts(db, nowMs);
  const notices = createNotices(places.pageLocals);

  /**
   * One of the rater path's writes (thread-writes.ts) on the answer thread when the server runs one, else here, and
   * here too when the thread gives no reply (it ended or is restarting). `local` is how it runs here (by default the
   * same function on this handle).
   */
  async function write<K extends ThreadWriteName>(name: K, args: ThreadWriteArgs<K>, local = () => runThreadWrite(db, name, args)): Promise<ThreadWriteResult<K>> {
    const reply = deps.answerThread ? await deps.answerThread.write(name, args) : null;
    if (!reply) return local();
    if (reply.error) throw reply.error;
    return reply.value;
  }

  return { ...places, ...facts, ...notices, markdown, comparisonView, write, deps };
}

export type RaterPages = ReturnType<typeof createRaterPages>;
