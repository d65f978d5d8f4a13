import { z } from 'zod';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import type { Db } from '../db/connection.js';
import type { BatchView } from '../batches/batch.commands.js';
import { type ServedAnalysis, serveBatchAnalysis } from '../analysis/background-analysis.js';
import { deleteRaterData, inclusionRefusal, removePair, resolveContentReport, setRaterExcluded } from '../rating/rater-admin.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { requireBatchView } from './batch-pages.routes.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { type Page, parsePage } from './pagination.js';
import { PARTICIPANT_FORMS, participantsCsv } from './participants-csv.js';
import { type Decision, DECISIONS, decideParticipant, outcomeOf, minutesSpent } from '../recruiting/participant-decision.js';
import { findRaterSignals } from '../analysis/rater-signals.queries.js';
import { type SignalFlag, signalFlags } from '../analysis/quality-signals.js';
import { qualityFlags } from '../analysis/rater-quality.js';
import { createRaterQualityLookup, qualityOfFigures, qualityStateOf, type RaterQualityLookup, type StoredRaterQuality } from '../recruiting/rater-quality-lookup.js';
import { currentFigures, participantOf, type QualityContext, qualityContextOf } from '../recruiting/decided-participants.js';
import { listParticipantsAfter } from '../recruiting/participants.queries.js';
import { findRaterFigures } from '../analysis/rater-figures.queries.js';
import type { RaterFiguresRow } from '../analysis/page-report.js';
import {
  countBatchRaters,
  countQualityDecisions,
  raterDecisionChanges,
  countDecisionsBeforeQuality,
  listBatchRatersPage,
  listContentReports,
  listQualityDependentRaters,
  listRaterIdentities,
  type QualityDependentRater,
} from './rater-table.queries.js';

const reasonSchema = z.object({ reason: z.string().trim().min(1, 'is required').max(500) });
const deleteSchema = reasonSchema.extend({ confirm: z.literal('delete', { error: 'type "delete" to confirm' }) });
const resolveSchema = z.object({ resolution: z.string().trim().min(1, 'is required').max(500) });
const csvQuerySchema = z.object({
  form: z.enum(PARTICIPANT_FORMS).default('full'),
  amount: z
    .string()
    .regex(/^\d{1,4}(\.\d{1,2})?$/, 'must be an amount like 1.50')
    .optional(),
});
const reportsQuerySchema = z.object({ batch: z.coerce.number().int().min(1).optional(), open: z.enum(['1', '0']).optional() });

/** Raters per page on the raters and participants pages. */
const RATERS_PER_PAGE = 100;
/** Participants per part of the payment CSV. */
const CSV_PART = 2_000;
/** Raters named (HMAC) per part before other requests are answered. */
const NAMING_PART = 2_000;

/** Batches whose participants page counts are kept (the most recently counted). */
const COUNTS_MEMO_BATCHES = 32;
/**
 * Tries at reading a request's figures from the served result's page parts: a try fails when a newer result replaced
 * it meanwhile (the worker stores from its own process at any time); after the last the whole report is read.
 */
const PART_TRIES = 3;

/**
 * Where a request's rater figures come from. `parts`: the served result's stored figures (migration 028), read a page
 * of raters at a time. Otherwise `whole`: every rater's figures from its whole report, parsed once per stored result
 * (a row stored without parts), empty when none is stored.
 */
type FigureSource = { served: ServedAnalysis | null; stored: boolean; parts: boolean; whole: Map<string, StoredRaterQuality> };

/** What the page says about the stored analysis its quality figures come from. */
function analysisNote(source: FigureSource) {
  const served = source.served;
  return { stored: source.stored, computedAt: served?.computedAt ?? null, ageSeconds: served?.ageSeconds ?? null, updating: served?.updating ?? false };
}

/** Pseudonym → figures of stored figure rows. */
const figureMap = (rows: readonly RaterFiguresRow[]) => new Map(rows.map((row) => [row.judge, qualityOfFigures(row)]));

/** The payment-list counts kept per batch (decisionCounts): one map per app, created by raterRoutes. */
type CountsMemo = Map<number, { key: string; counts: Record<Decision, number> }>;

/**
 * What a batch's rows need for their quality figures and flags, read once per request: the stored analysis's figures
 * by pseudonym (never computed here: the worker computes them, issue 12), the judgments on removed pairs (which the
 * analysis leaves out), the batch's median time and onboarding threshold.
 */
function qualityContext(db: Db, lookup: RaterQualityLookup, batch: BatchView): QualityContext {
  return qualityContextOf(db, batch.id, batch.settings.onboarding?.threshold ?? null, lookup);
}

/**
 * The figure source of a served result: its page parts when it has them (and `parts` allows: the last try reads the
 * whole report), else its whole report, decompressed on the thread pool and parsed once per stored result.
 */
async function figureSourceOf(lookup: RaterQualityLookup, served: ServedAnalysis | null, parts: boolean): Promise<FigureSource> {
  if (served?.pageParts && parts) return { served, stored: true, parts: true, whole: new Map() };
  const report = (await served?.report()) ?? null;
  return { served, stored: report !== null, parts: false, whole: lookup.figures(report) };
}

/** The figures of these raters (by pseudonym) of the source's result; null when its parts were replaced meanwhile. */
function figuresOf(db: Db, batchId: number, source: FigureSource, judges: readonly string[]): Map<string, StoredRaterQuality> | null {
  if (!source.parts) return source.whole;
  return source.served?.readParts((partsId) => figureMap(findRaterFigures(db, batchId, partsId, judges))) ?? null;
}

/**
 * The batch's count on each payment list (countDecisions), kept while nothing they depend on changed: the raters'
 * rows (added, removed, status, exclusion: migration 029; a completed rater's checks, judgments and pseudonym no
 * longer change), the result the figures come from, the median time, the onboarding threshold and the judgments on
 * removed pairs. Counting them anew is an aggregate over every completed rater and their figures: 210 ms a view at
 * 50,000 raters (issue 12).
 */
async function decisionCounts(db: Db, countsMemo: CountsMemo, batch: BatchView, q: QualityContext, source: FigureSource): Promise<Record<Decision, number> | null> {
  let removed = q.removed.size;
  for (const [raterId, n] of q.removed) removed = (Math.imul(removed, 31) + Math.imul(raterId, 1_000_003) + n) | 0;
  const key = [raterDecisionChanges(db, batch.id), source.parts ? 'parts' : 'whole', source.served?.computedAt ?? '', q.medianSeconds, q.threshold, q.removed.size, removed].join('|');
  const known = countsMemo.get(batch.id);
  if (known?.key === key) return { ...known.counts };
  const counts = await countDecisions(db, batch, q, source);
  if (counts) {
    countsMemo.delete(batch.id);
    countsMemo.set(batch.id, { key, counts: { ...counts } });
    if (countsMemo.size > COUNTS_MEMO_BATCHES) countsMemo.delete(countsMemo.keys().next().value as number);
  }
  return counts;
}

/**
 * The batch's count on each payment list: the decisions fixed by status and checks counted in SQL, the rest (completed,
 * included, no failed check) from the stored figures: from the page parts counted in SQL too (countQualityDecisions),
 * from the whole report decided by decideParticipant, one small row per such rater. Null when the source's parts were
 * replaced by a newer result meanwhile.
 */
async function countDecisions(db: Db, batch: BatchView, q: QualityContext, source: FigureSource): Promise<Record<Decision, number> | null> {
  const counted = countDecisionsBeforeQuality(db, batch.id, q.threshold);
  const counts: Record<Decision, number> = { approve: counted.approve, review: counted.review, reject: counted.reject, pending: 0 };
  let raters: QualityDependentRater[];
  if (source.parts) {
    const inSql = source.served?.readParts((partsId) => countQualityDecisions(db, batch.id, q.threshold, partsId, q.medianSeconds)) ?? null;
    if (!inSql) return null;
    counts.approve += inSql.approve;
    counts.review += inSql.review;
    counts.pending += inSql.pending;
    // Only raters without a stored pseudonym are left to decide here.
    raters = inSql.unnamed > 0 ? listQualityDependentRaters(db, batch.id, q.threshold, { unnamedOnly: true }) : [];
  } else raters = listQualityDependentRaters(db, batch.id, q.threshold);
  // A rater's pseudonym is stored at consent (migration 023). Raters from before are named here, an HMAC each, once
  // per rater and in parts with other requests answered between them (a batch of 50,000 such raters on its first visit).
  const unnamedIds = raters.filter((r) => r.judge === null && q.judges.known(r.id) === undefined).map((r) => r.id);
  const unnamed = unnamedIds.length > 0 ? listRaterIdentities(db, unnamedIds) : [];
  for (let i = 0; i < unnamed.length; i += NAMING_PART) {
    for (const r of unnamed.slice(i, i + NAMING_PART)) q.judges.of(r);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const figureOf = source.parts ? figuresOf(db, batch.id, source, raters.flatMap((r) => q.judges.known(r.id) ?? [])) : source.whole;
  if (figureOf === null) return null;
  // Object literals, not spreads: this loop runs once per completed rater (50,000 in the benchmark's batch). Their
  // checks passed (the query keeps only those), so the flags left are the figures' own.
  const checksPassed = { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null };
  for (const r of raters) {
    const judge = r.judge ?? q.judges.known(r.id);
    const figures = judge === undefined ? undefined : figureOf.get(judge);
    const rater = { excluded: 0, status: 'completed', exclusion_reason: null, finish_reason: r.finish_reason, regular_judgments: r.regular_judgments };
    const quality = qualityStateOf(rater, r.regular_judgments - (q.removed.get(r.id) ?? 0), figures);
    counts[decideParticipant({ rater, flags: qualityFlags(figures, q.medianSeconds, checksPassed), quality }).decision] += 1;
  }
  return counts;
}

type RaterPage<T> = { source: FigureSource; q: QualityContext; listed: ReturnType<typeof listBatchRatersPage>; figureOf: Map<string, StoredRaterQuality>; more: T };

/**
 * A page of the batch's raters with their figures, and what else the page reads of the same result (`more`), all of
 * one stored result: the last stored analysis at once, with its age (a newer one is computed in the worker meanwhile,
 * never awaited here), from its page parts (the page's raters through the primary key) or its whole report. When a
 * newer result replaced it meanwhile (`more` or the figures' read gives null), all is read again of the new one; the
 * last try reads the whole report, which cannot be replaced under it.
 */
async function raterPageOf<T>(
  deps: ConsoleDeps,
  lookup: RaterQualityLookup,
  batch: BatchView,
  page: Page,
  more: (source: FigureSource, q: QualityContext) => Promise<T | null>,
): Promise<RaterPage<T>> {
  const { db, clock } = deps;
  for (let tries = 1; ; tries++) {
    const source = await figureSourceOf(lookup, serveBatchAnalysis(db, batch.id, { now: clock }), tries < PART_TRIES);
    const q = qualityContext(db, lookup, batch);
    const extra = await more(source, q);
    const listed = listBatchRatersPage(db, batch.id, page.perPage, page.offset);
    const figureOf = figuresOf(db, batch.id, source, listed.map((r) => q.judges.of(r)));
    if (extra !== null && figureOf) return { source, q, listed, figureOf, more: extra };
  }
}

function showRaters(deps: ConsoleDeps, lookup: RaterQualityLookup): RouteHandler {
  const { db } = deps;
  return async (req, res) => {
    const batch = requireBatchView(deps, req);
    const page = parsePage(req.query, RATERS_PER_PAGE);
    const { source, q, listed, figureOf } = await raterPageOf(deps, lookup, batch, page, async () => true);
    const signals = findRaterSignals(db, batch.id, listed.map((r) => r.id));
    const rows = listed.map((r) => {
      const p = participantOf(r, q, figureOf);
      const includeRefusal = r.excluded === 1 ? inclusionRefusal(r) : null;
      const own = signals.get(r.id);
      return { rater: r, judge: p.judge, quality: p.figures, qualityState: p.quality, flags: p.flags, includeRefusal, outcome: outcomeOf(r.status), signals: own ?? null, signalFlags: signalFlags(own, batch.settings.quality) };
    });
    renderPage(res, 'raters', { title: `Raters of ${batch.name}`, batch, rows, page, total: countBatchRaters(db, batch.id), analysis: analysisNote(source) });
  };
}

// Excluding a rater and including them again are one action in two directions: same input, same audit, same page after.
function setExclusion(deps: ConsoleDeps, excluded: boolean): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const batchId = idParam(req);
    const input = parseInput(reasonSchema, req.body, excluded ? 'exclusion' : 'inclusion');
    setRaterExcluded(db, { batchId, raterId: idParam(req, 'raterId'), excluded, reason: input.reason }, user.email, clock());
    const flash = excluded
      ? 'Rater excluded: every statistic leaves out their judgments, their pairs are served to other raters until they have K valid judgments, and they are not served again.'
      : 'Rater included again: their judgments count again.';
    redirectWithFlash(req, res, `/console/batches/${batchId}/raters`, flash);
  };
}

function deleteParticipantData(deps: ConsoleDeps, lookup: RaterQualityLookup): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const batchId = idParam(req);
    const input = parseInput(deleteSchema, req.body, 'deletion');
    const raterId = idParam(req, 'raterId');
    const result = deleteRaterData(db, { batchId, raterId, reason: input.reason }, user.email, clock());
    lookup.forget(batchId, raterId);
    redirectWithFlash(req, res, `/console/batches/${batchId}/participants`, `Participant data deleted (${result.judgments} judgments removed).`);
  };
}

function showParticipants(deps: ConsoleDeps, lookup: RaterQualityLookup, countsMemo: CountsMemo): RouteHandler {
  const { db } = deps;
  return async (req, res) => {
    const batch = requireBatchView(deps, req);
    const page = parsePage(req.query, RATERS_PER_PAGE);
    const { source, q, listed, figureOf, more: counts } = await raterPageOf(deps, lookup, batch, page, (from, context) => decisionCounts(db, countsMemo, batch, context, from));
    const flagsOf = signalFlagsOf(db, batch, listed.map((r) => r.id));
    const rows = listed.map((r) => {
      const p = participantOf(r, q, figureOf);
      return { ...p, ...decideParticipant(p), outcome: outcomeOf(r.status), minutes: minutesSpent(r), signalFlags: flagsOf(r.id) };
    });
    const total = DECISIONS.reduce((sum, d) => sum + counts[d], 0);
    renderPage(res, 'participants', { title: `Participants of ${batch.name}`, batch, rows, counts, page, total, analysis: analysisNote(source) });
  };
}

function downloadParticipantsCsv(deps: ConsoleDeps, lookup: RaterQualityLookup): RouteHandler {
  const { db, clock } = deps;
  return async (req, res) => {
    const batch = requireBatchView(deps, req);
    const query = parseInput(csvQuerySchema, req.query, 'query');
    // A payment list decides on the data as of now: the analysis worker brings the stored figures up to date
    // (the event loop serves other requests meanwhile), as the server's export bundles do.
    const figureOf = await currentFigures(db, batch.id, { lookup, clock });
    if (!figureOf) throw new HttpError(404, 'No batch has this id.');
    const q = qualityContext(db, lookup, batch);
    res.type('text/csv; charset=utf-8');
    res.attachment(`batch-${batch.id}-participants-${query.form}.csv`);
    // Written in parts of CSV_PART raters, yielding between parts, so that a batch of 50,000 raters does not hold
    // the raters' requests for the whole list. Each part is its own query (keyset on the rater id).
    for (let after = 0, header = true; ; header = false) {
      const part = listParticipantsAfter(db, batch.id, after, CSV_PART);
      const flagsOf = signalFlagsOf(db, batch, query.form === 'full' ? part.map((r) => r.id) : []);
      res.write(participantsCsv(part.map((r) => ({ ...participantOf(r, q, figureOf), signals: flagsOf(r.id) })), query.form, query.amount, { header }));
      const last = part.at(-1);
      if (!last || part.length < CSV_PART) break;
      after = last.id;
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  };
}

/** The signal flags of these raters (a page's, a CSV part's), from the signals stored with the batch's analysis (migration 078). */
function signalFlagsOf(db: Db, batch: BatchView, raterIds: readonly number[]): (raterId: number) => SignalFlag[] {
  const signals = findRaterSignals(db, batch.id, raterIds);
  return (raterId) => signalFlags(signals.get(raterId), batch.settings.quality);
}

function showContentReports(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const query = parseInput(reportsQuerySchema, req.query, 'query');
    const page = parsePage(req.query);
    const reports = listContentReports(db, { batchId: query.batch, open: query.open === '1' }, page.perPage, page.offset);
    renderPage(res, 'reports', { title: 'Reported content', reports, page });
  };
}

function resolveReport(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const input = parseInput(resolveSchema, req.body, 'resolution');
    resolveContentReport(db, { reportId: idParam(req), resolution: input.resolution }, user.email, clock());
    redirectWithFlash(req, res, '/console/reports', 'Report marked as resolved.');
  };
}

function removePairFromBatch(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const batchId = idParam(req);
    const input = parseInput(reasonSchema, req.body, 'pair removal');
    removePair(db, { batchId, pairId: idParam(req, 'pairId'), reason: input.reason }, user.email, clock());
    redirectWithFlash(req, res, '/console/reports', 'Pair taken out of the batch; it is no longer served.');
  };
}

/** Rater table with exclusions, participants (payment lists, data deletion), content reports. */
export function raterRoutes(deps: ConsoleDeps): RouteSpec[] {
  // Per app: the quality lookup's caches and the payment-list counts are shared by every request of this app.
  const lookup = createRaterQualityLookup(deps.db);
  const countsMemo: CountsMemo = new Map();
  return [
    { method: 'get', path: '/batches/:id/raters', access: 'researcher', handler: showRaters(deps, lookup) },
    { method: 'post', path: '/batches/:id/raters/:raterId/exclude', access: 'admin', handler: setExclusion(deps, true) },
    { method: 'post', path: '/batches/:id/raters/:raterId/include', access: 'admin', handler: setExclusion(deps, false) },
    { method: 'post', path: '/batches/:id/raters/:raterId/delete', access: 'admin', handler: deleteParticipantData(deps, lookup) },
    { method: 'get', path: '/batches/:id/participants', access: 'admin', handler: showParticipants(deps, lookup, countsMemo) },
    { method: 'get', path: '/batches/:id/participants.csv', access: 'admin', handler: downloadParticipantsCsv(deps, lookup) },
    { method: 'get', path: '/reports', access: 'researcher', handler: showContentReports(deps) },
    { method: 'post', path: '/reports/:id/resolve', access: 'admin', handler: resolveReport(deps) },
    { method: 'post', path: '/batches/:id/pairs/:pairId/remove', access: 'admin', handler: removePairFromBatch(deps) },
  ];
}
