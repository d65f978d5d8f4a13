import express, { type Router } from 'express';
import { z } from 'zod';
import { authenticateApiToken } from '../auth/api-tokens.js';
import { createPassport } from '../auth/passport-setup.js';
import { mountRoutes, type RouteHandler, type RouteSpec } from '../auth/route-table.js';
import { getBatch } from '../batches/batch.commands.js';
import { getBatchRow } from '../batches/batch.queries.js';
import { raterLinks } from '../batches/rater-links.js';
import { awaitBatchAnalysis } from '../analysis/background-analysis.js';
import { selectQuestionReport } from '../analysis/question-reports.js';
import { requestedQuestion } from '../console/analysis-pages.routes.js';
import { batchProgress, countBatches, listBatchesWithProgress } from '../console/batch-progress.queries.js';
import { type ConsoleDeps, idParam } from '../console/console-deps.js';
import { findDialogueDetail, serializeDialogue } from '../console/dialogue-browser.queries.js';
import { parsePage } from '../console/pagination.js';
import { countRuns, findRunWithCounts, listRunsWithCounts, serializeRun } from '../console/run-list.queries.js';
import { parseJsonColumn } from '../db/json-column.js';
import { storedSimulationCardSchema } from '../generation/simulation-card.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { sessionMiddleware } from '../web/sessions.js';
import { csrfProtection } from '../web/csrf.js';
import { currentUser } from '../auth/session-user.js';
import { apiExportRoute, exportMetaRoute } from './api-export.js';
import { countBatchJudgmentsForApi, judgmentsCursorSchema, listBatchJudgmentsForApi, pageAfter } from './api-judgments.js';

const dialogueQuerySchema = z.object({ calls: z.enum(['0', '1', 'true', 'false']).default('1') });
/** `?after=` of the judgments list: a page's `pagination.next_after`. */
const judgmentsQuerySchema = z.looseObject({ after: judgmentsCursorSchema.optional() });
/** max_age: the oldest result, in seconds, the caller accepts; older (or 0: anything before now) waits for a fresh one. */
const analysisQuerySchema = z.object({ max_age: z.coerce.number().int().min(0).max(86_400).optional(), question: z.string().optional() });

function paginated<T>(data: T[], page: { page: number; perPage: number }, total: number) {
  return { data, pagination: { page: page.page, per_page: page.perPage, total, pages: Math.ceil(total / page.perPage) } };
}

/** No stored analysis to send (none could be computed, or the stored one turned out damaged and is being computed again). */
const analysisNotComputed = () => new HttpError(503, 'The analysis could not be computed just now; try again in a moment.');

function listBatches(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const page = parsePage(req.query);
    const rows = listBatchesWithProgress(db, page.perPage, page.offset).map((b) => ({
      id: b.id,
      name: b.name,
      state: b.state,
      created_at: b.created_at,
      created_by: b.created_by,
      judgments_per_pair: b.judgments_per_pair,
      pairs: b.pairs,
      accepted: b.accepted,
      needed: b.pairs * b.judgments_per_pair,
      raters: b.raters,
    }));
    res.json(paginated(rows, page, countBatches(db)));
  };
}

function showBatch(deps: ConsoleDeps): RouteHandler {
  const { db, clock, config } = deps;
  const batchOr404 = (id: number) => {
    const batch = getBatch(db, id);
    if (!batch) throw new HttpError(404, `No batch with id ${id}.`);
    return batch;
  };
  return (req, res) => {
    const batch = batchOr404(idParam(req));
    res.json({
      id: batch.id,
      name: batch.name,
      state: batch.state,
      settings: batch.settings,
      question_version: batch.questionVersion,
      cloned_from: batch.clonedFrom,
      created_by: batch.createdBy,
      created_at: batch.createdAt,
      opened_at: batch.openedAt,
      closed_at: batch.closedAt,
      links: raterLinks(batch, config.publicUrl),
      progress: batchProgress(db, batch.id, clock()),
    });
  };
}

function listBatchJudgments(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const row = getBatchRow(db, idParam(req));
    if (!row) throw new HttpError(404, `No batch with id ${req.params.id}.`);
    // Every question's judgments (each record names its question_id), or one question's with ?question=ID.
    const question = requestedQuestion(db, row.id, req.query) ?? null;
    const { after } = parseInput(judgmentsQuerySchema, req.query, 'query');
    if (after !== undefined && req.query.page !== undefined) throw new HttpError(400, 'Give either page or after, not both: after goes on from the page whose pagination.next_after it is.');
    const page = parsePage(req.query, 500);
    const listed = listBatchJudgmentsForApi(db, row, page.perPage, after === undefined ? { offset: page.offset } : pageAfter(after), question);
    const total = countBatchJudgmentsForApi(db, row.id, question);
    const pagination = after === undefined ? paginated(listed.records, page, total).pagination : { after, per_page: page.perPage, total };
    res.json({ data: listed.records, pagination: { ...pagination, next_after: listed.nextAfter } });
  };
}

function showBatchAnalysis(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return async (req, res) => {
    const { max_age: maxAge } = parseInput(analysisQuerySchema, req.query, 'query');
    const batchId = idParam(req);
    // ?question=ID: that question's report alone (issue 16); without it the whole report, the first question at the top.
    const question = requestedQuestion(db, batchId, req.query);
    // The stored result at once (computed in a worker process, refreshed at most every few seconds), its age in headers.
    let served = await awaitBatchAnalysis(db, batchId, { now: clock });
    if (served && maxAge !== undefined && (maxAge === 0 || (served.ageSeconds ?? Infinity) > maxAge)) {
      served = await awaitBatchAnalysis(db, batchId, { now: clock, fresh: true });
    }
    if (!served) throw new HttpError(404, `No batch with id ${req.params.id}.`);
    if (!served.computedAt || !served.stored) throw analysisNotComputed();
    res.set({ Age: String(served.ageSeconds ?? 0), 'X-Analysis-Computed-At': served.computedAt, 'X-Analysis-Updating': served.updating ? 'true' : 'false' });
    // A question's part is picked from the parsed report (decompressed on the thread pool, parsed once per result).
    if (question !== undefined) {
      const report = await served.report();
      if (!report) throw analysisNotComputed();
      res.json(selectQuestionReport(report, question));
      return;
    }
    // The whole report goes out as stored, neither parsed nor serialized again (14 MB of JSON at a million
    // judgments): to a client that accepts gzip, the stored gzip itself (0.8 MB); to another, its JSON
    // decompressed on the thread pool. Its tag names the stored result: a client that sends If-None-Match for the
    // result it holds gets 304 before any byte is read.
    const sent = served.response(req.acceptsEncodings('gzip') === 'gzip');
    if (!sent) throw analysisNotComputed();
    res.set({ ETag: sent.etag, Vary: 'Accept-Encoding' });
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    const body = await sent.body();
    if (!body) throw analysisNotComputed();
    if (sent.gzip) res.set('Content-Encoding', 'gzip');
    res.type('application/json').send(body);
  };
}

function listRuns(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const page = parsePage(req.query);
    res.json(paginated(listRunsWithCounts(db, page.perPage, page.offset).map(serializeRun), page, countRuns(db)));
  };
}

function showRun(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const run = findRunWithCounts(db, idParam(req));
    if (!run) throw new HttpError(404, `No run with id ${req.params.id}.`);
    res.json({ ...serializeRun(run), simulation_card: run.simulation_card ? parseJsonColumn(storedSimulationCardSchema, run.simulation_card, `runs.simulation_card of run ${run.id}`) : null });
  };
}

function showDialogue(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const query = parseInput(dialogueQuerySchema, req.query, 'query');
    const dialogue = findDialogueDetail(db, idParam(req));
    if (!dialogue) throw new HttpError(404, `No dialogue with id ${req.params.id}.`);
    res.json(serializeDialogue(db, dialogue, query.calls === '1' || query.calls === 'true'));
  };
}

/** The JSON API's routes with their roles (read-only; researchers and admins). */
export function apiRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/batches', access: 'researcher', handler: listBatches(deps) },
    { method: 'get', path: '/batches/:id', access: 'researcher', handler: showBatch(deps) },
    { method: 'get', path: '/batches/:id/judgments', access: 'researcher', handler: listBatchJudgments(deps) },
    { method: 'get', path: '/batches/:id/analysis', access: 'researcher', handler: showBatchAnalysis(deps) },
    apiExportRoute(deps),
    exportMetaRoute(deps),
    { method: 'get', path: '/runs', access: 'researcher', handler: listRuns(deps) },
    { method: 'get', path: '/runs/:id', access: 'researcher', handler: showRun(deps) },
    { method: 'get', path: '/dialogues/:id', access: 'researcher', handler: showDialogue(deps) },
  ];
}


/**
 * The JSON API at /api: a bearer token (`Authorization: Bearer sa_...`) or the console's session cookie. A bearer
 * header that is not a live token is refused outright (never silently downgraded to the session).
 */
export function createApiRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  const instance = createPassport(deps.db);
  const session = sessionMiddleware(deps.db, deps.sessionSecret, deps.config.secureCookies);
  const sessionAuth = [instance.initialize(), instance.session()];
  router.use((req, res, next) => {
    res.set('Cache-Control', 'no-store');
    const header = req.get('authorization');
    if (header === undefined) {
      session(req, res, (error?: unknown) => {
        if (error) {
          next(error);
          return;
        }
        sessionAuth[0]?.(req, res, () => sessionAuth[1]?.(req, res, next));
      });
      return;
    }
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const user = match?.[1] ? authenticateApiToken(deps.db, match[1], deps.clock()) : null;
    if (!user) {
      res.set('WWW-Authenticate', 'Bearer');
      next(new HttpError(401, 'The API token is missing, malformed, unknown or revoked.', 'unauthenticated'));
      return;
    }
    req.user = user;
    next();
  });
  // A cookie-authenticated write would need the console's CSRF token; only a verified API token is exempt.
  router.use(csrfProtection(deps.sessionSecret, (req) => req.sessionID ?? null, { exempt: (req) => currentUser(req)?.via === 'token' }));
  mountRoutes(router, apiRoutes(deps));
  return router;
}
