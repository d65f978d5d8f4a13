import express, { type Router } from 'express';
import { authRoutes } from '../auth/auth.routes.js';
import { createPassport } from '../auth/passport-setup.js';
import { mountRoutes, type RouteSpec } from '../auth/route-table.js';
import { currentUser } from '../auth/session-user.js';
import { csrfProtection } from '../web/csrf.js';
import { explainInsecureRequest } from '../web/proxy-setup.js';
import { sessionMiddleware } from '../web/sessions.js';
import type { ConsoleDeps } from './console-deps.js';
import { accountRoutes } from './account-pages.routes.js';
import { analysisRoutes } from './analysis-pages.routes.js';
import { batchRoutes } from './batch-pages.routes.js';
import { pooledAnalysisRoutes } from './pooled-analysis.routes.js';
import { dialogueRoutes } from './dialogue-pages.routes.js';
import { raterRoutes } from './rater-pages.routes.js';
import { prolificRoutes } from './prolific-pages.routes.js';
import { mturkRoutes } from './mturk-pages.routes.js';
import { formatTime } from './format-time.js';
import { runRoutes } from './run-pages.routes.js';
import { scenarioRoutes } from './scenario-pages.routes.js';
import { evaluationRoutes } from './evaluation-pages.routes.js';
import { roleplayRoutes } from './roleplay-pages.routes.js';
import { roleplayFormRoutes } from './roleplay-form.routes.js';

/** Every console route with its role; the role-matrix test walks this same list. */
export function consoleRoutes(deps: ConsoleDeps, instance = createPassport(deps.db)): RouteSpec[] {
  return [
    ...authRoutes({ ...deps, instance }),
    ...accountRoutes(deps),
    ...roleplayFormRoutes(deps),
    ...batchRoutes(deps),
    ...roleplayRoutes(deps),
    ...analysisRoutes(deps),
    ...pooledAnalysisRoutes(deps),
    ...raterRoutes(deps),
    ...prolificRoutes(deps),
    ...mturkRoutes(deps),
    ...runRoutes(deps),
    ...evaluationRoutes(deps),
    ...dialogueRoutes(deps),
    ...scenarioRoutes(deps),
  ];
}

/** The admin and researcher console at /console: sessions, passport, CSRF on every form, a role on every route. */
export function createConsoleRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  const instance = createPassport(deps.db);
  router.use(express.urlencoded({ extended: false, limit: '300kb' }));
  router.use(sessionMiddleware(deps.db, deps.sessionSecret, deps.config.secureCookies));
  router.use(instance.initialize());
  router.use(instance.session());
  router.use(csrfProtection(deps.sessionSecret, (req) => req.sessionID ?? null, { explainFailure: (req) => explainInsecureRequest(deps.config, req) }));
  router.use((req, res, next) => {
    res.locals.user = currentUser(req);
    res.locals.flash = req.session.flash ?? null;
    res.locals.formatTime = formatTime;
    if (req.session.flash) delete req.session.flash;
    res.set('Cache-Control', 'no-store');
    next();
  });
  mountRoutes(router, consoleRoutes(deps, instance), (req, res) => {
    if (req.method !== 'GET') return false;
    res.redirect(303, `/console/login?next=${encodeURIComponent(req.originalUrl)}`);
    return true;
  });
  return router;
}
