import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import { fileURLToPath } from 'node:url';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/connection.js';
import { errorHandler, notFoundHandler } from './web/error-handler.js';
import { createHttpLogger } from './web/logger.js';
import { mountRaterRoutes } from './rating/rater.routes.js';
import type { AnswerThread } from './rating/answer-thread.js';
import { systemClock } from './clock.js';
import { createConsoleRouter } from './console/console.routes.js';
import { createApiRouter } from './api/api.routes.js';
import { createRunSupervisor } from './console/run-supervisor.js';
import { requireFormBody } from './web/form-body.js';
import { fixedHeaders } from './web/fixed-headers.js';
import { createTemplateCompiler } from './web/ejs-templates.js';
import { probeWrite } from './web/storage-health.js';
import { createEvaluationSupervisor } from './evaluation/evaluation-supervisor.js';
import { mountProlificWebhook, PROLIFIC_WEBHOOK_PATH } from './recruiting/prolific-webhook.routes.js';

export type AppDeps = {
  db: Db;
  config: Config;
  logger: Logger;
  sessionSecret: string;
  clock?: Clock;
  /** Where answers' transactions run when not on the request thread (src/rating/answer-thread.ts); the server starts one. */
  answerThread?: AnswerThread | null;
};

const viewsDir = fileURLToPath(new URL('../views/', import.meta.url));
const publicDir = fileURLToPath(new URL('../public/', import.meta.url));

/** Builds the Express app from its dependencies; the caller decides whether and where it listens. */
export function createApp(deps: AppDeps): Express {
  const { db, config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  // Pages are made per request and never stored (no-store): Express's default ETag hashed each whole body for nothing,
  // 15 KB per comparison page (issue 12). Routes that can answer 304 set their own tag (the stored analysis).
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy ? 1 : false);
  app.set('view engine', 'ejs');
  app.set('views', viewsDir);
  // Templates are part of the code: compile each once per process. Express caches them only when NODE_ENV is
  // 'production', which `npm start` does not set, so every rater page was compiling its EJS again (issue 12).
  app.set('view cache', true);
  // Views are compiled once per process without `with (locals)` (src/web/ejs-templates.ts); includes written from the
  // root (`include('/rater/partials/top')`) resolve without a file-system check.
  const templates = createTemplateCompiler(viewsDir);
  app.engine('ejs', (path: string, data: object, callback: (error: Error | null, html?: string) => void) => {
    let html: string;
    try {
      html = templates.template(path)(data) as string;
    } catch (error) {
      callback(error as Error);
      return;
    }
    callback(null, html);
  });

  app.use(createHttpLogger(logger));
  const clock = deps.clock ?? systemClock;

  // Console, API, landing pages, static files and /healthz share the default strict headers; rater routes set their own.
  // upgrade-insecure-requests only when the public URL is https: over plain http (a LAN pilot) the browser would ask for
  // CSS and JS over https, which nobody serves, and sign-in would never complete.
  const directives: Record<string, string[] | null> = { 'form-action': ["'self'"] };
  if (!config.publicUrl.startsWith('https:')) directives['upgrade-insecure-requests'] = null;
  const consoleHeaders = fixedHeaders(helmet({ contentSecurityPolicy: { directives } }));

  // Healthy means the database takes writes: a read-only or full disk answers 503, so a proxy or monitor sees it.
  app.get('/healthz', consoleHeaders, (_req, res) => {
    const storage = probeWrite(db, clock());
    res.set('Cache-Control', 'no-store');
    res.status(storage.writable ? 200 : 503).json(storage.writable ? { status: 'ok', database: 'ok' } : { status: 'degraded', database: 'not writable', problem: storage.problem });
  });

  app.use('/static', consoleHeaders, express.static(publicDir, { maxAge: '1h', index: false }));

  // Console and rater pages take POSTs only as HTML forms (415/400 otherwise, before any handler reads a field); the
  // refusal is a page of theirs, with their headers (the rater's from raterErrorPage, the console's set before it).
  app.use('/r', requireFormBody);

  // Rater pages (crowdworkers): their own headers per batch provider, state in signed tokens, no cookies.
  mountRaterRoutes(app, { db, sessionSecret: deps.sessionSecret, clock, answerThread: deps.answerThread ?? null });

  // Prolific's signed webhooks (src/recruiting/prolific-webhook.routes.ts): a machine's POST, no session, no form.
  app.use(PROLIFIC_WEBHOOK_PATH, consoleHeaders);
  mountProlificWebhook(app, { db, config, clock });

  app.get('/', consoleHeaders, (_req, res) => {
    res.render('home', { title: 'Welcome' });
  });

  // Generation runs started from the console run in this process under its one supervisor (so the per-endpoint limit
  // holds for every route); server.ts pauses them all at shutdown. A run that fails is logged, not only stored.
  const runs = createRunSupervisor(db, clock, {
    perEndpoint: config.generationRunsPerEndpoint,
    onError: (error, runId) => logger.error({ err: error, runId }, `generation run ${runId} started from the console failed`),
  });
  app.locals.runSupervisor = runs;
  // Evaluations started from a run page, likewise (src/evaluation/evaluation-supervisor.ts).
  const evaluations = createEvaluationSupervisor(db, clock, config);
  app.locals.evaluationSupervisor = evaluations;
  const accountDeps = { db, config, sessionSecret: deps.sessionSecret, clock, runs, evaluations };
  app.use('/console', consoleHeaders, requireFormBody, createConsoleRouter(accountDeps));
  app.use('/api', consoleHeaders, createApiRouter(accountDeps));
  app.use(consoleHeaders, notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
