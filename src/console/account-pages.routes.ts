import { listAudit } from '../audit/audit.queries.js';
import { listApiTokens } from '../auth/api-token.queries.js';
import { createApiToken, revokeApiToken } from '../auth/api-tokens.js';
import { newUserSchema, tokenNameSchema } from '../auth/auth.schema.js';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import { addUser, resetUserPassword, setUserEnabled } from '../auth/user.commands.js';
import { findUserById, listUsers } from '../auth/user.queries.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { listBatchesWithProgress } from './batch-progress.queries.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { redirectWithFlash, redirectWithSecret, renderPage, takeShownOnce } from '../web/console-page.js';
import { fieldErrorsOf } from '../web/field-errors.js';
import { listRunsWithCounts } from './run-list.queries.js';
import { z } from 'zod';

const auditQuerySchema = z.object({ before: z.coerce.number().int().min(1).optional() });

function showDashboard(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (_req, res) => {
    const openReports = db.prepare('SELECT count(*) FROM content_reports WHERE resolved_at IS NULL').pluck().get() as number;
    renderPage(res, 'dashboard', {
      title: 'Dashboard',
      batches: listBatchesWithProgress(db, 10, 0),
      runs: listRunsWithCounts(db, 5, 0),
      openReports,
    });
  };
}

function showAuditLog(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const query = parseInput(auditQuerySchema, req.query, 'audit query');
    const entries = listAudit(db, 100, query.before);
    renderPage(res, 'audit', { title: 'Audit log', entries, nextBefore: entries.length === 100 ? entries.at(-1)?.id : null });
  };
}

function showUsers(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const shown = takeShownOnce(req, 'password');
    renderPage(res, 'users', { title: 'Users', users: listUsers(db), created: shown && { email: shown.label, password: shown.secret }, form: {}, errors: {} });
  };
}

function submitNewUser(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return async (req, res, user) => {
    const body = req.body as Record<string, unknown>;
    const parsed = newUserSchema.safeParse({ ...body, password: body.password || undefined });
    if (!parsed.success) {
      res.status(400);
      renderPage(res, 'users', { title: 'Users', users: listUsers(db), created: null, form: body, errors: fieldErrorsOf(parsed.error) });
      return;
    }
    const result = await addUser(db, parsed.data, user.email, clock());
    redirectWithSecret(req, res, '/console/users', { kind: 'password', label: parsed.data.email, secret: result.password });
  };
}

function submitUserDisabled(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const id = idParam(req);
    if (id === user.id) throw new HttpError(409, 'You cannot disable your own account.');
    setUserEnabled(db, id, false, user.email, clock());
    redirectWithFlash(req, res, '/console/users', 'Account disabled.');
  };
}

function submitUserEnabled(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    setUserEnabled(db, idParam(req), true, user.email, clock());
    redirectWithFlash(req, res, '/console/users', 'Account enabled.');
  };
}

function submitPasswordReset(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return async (req, res, user) => {
    const target = findUserById(db, idParam(req));
    if (!target) throw new HttpError(404, 'No such user.');
    const password = await resetUserPassword(db, target, undefined, user.email, clock());
    redirectWithSecret(req, res, '/console/users', { kind: 'password', label: target.email, secret: password });
  };
}

function showTokens(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res, user) => {
    const shown = takeShownOnce(req, 'token');
    renderPage(res, 'tokens', { title: 'API tokens', tokens: listApiTokens(db, user.id), created: shown && { name: shown.label, secret: shown.secret }, publicUrl: deps.config.publicUrl });
  };
}

function submitNewToken(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const input = parseInput(tokenNameSchema, req.body, 'token');
    const created = createApiToken(db, user, input.name, user.email, clock());
    redirectWithSecret(req, res, '/console/tokens', { kind: 'token', label: created.name, secret: created.secret });
  };
}

function submitTokenRevoked(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    revokeApiToken(db, idParam(req), user, clock());
    redirectWithFlash(req, res, '/console/tokens', 'Token revoked; it no longer works.');
  };
}

/** Dashboard, audit log, users (admin) and the signed-in person's API tokens. */
export function accountRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/', access: 'researcher', handler: showDashboard(deps) },
    { method: 'get', path: '/audit', access: 'admin', handler: showAuditLog(deps) },
    { method: 'get', path: '/users', access: 'admin', handler: showUsers(deps) },
    { method: 'post', path: '/users', access: 'admin', handler: submitNewUser(deps) },
    { method: 'post', path: '/users/:id/disable', access: 'admin', handler: submitUserDisabled(deps) },
    { method: 'post', path: '/users/:id/enable', access: 'admin', handler: submitUserEnabled(deps) },
    { method: 'post', path: '/users/:id/reset-password', access: 'admin', handler: submitPasswordReset(deps) },
    { method: 'get', path: '/tokens', access: 'researcher', handler: showTokens(deps) },
    { method: 'post', path: '/tokens', access: 'researcher', handler: submitNewToken(deps) },
    { method: 'post', path: '/tokens/:id/revoke', access: 'researcher', handler: submitTokenRevoked(deps) },
  ];
}

