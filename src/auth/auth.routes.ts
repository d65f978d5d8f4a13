import type { Request, Response } from 'express';
import type passport from 'passport';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { recordAudit } from '../audit/audit.queries.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { parseInput } from '../web/validate.js';
import { loginSchema, passwordChangeSchema } from './auth.schema.js';
import { EMAIL_ADDRESS } from '../web/email-address.js';
import type { PublicRouteHandler, RouteHandler, RouteSpec } from './route-table.js';
import type { SessionUser } from './session-user.js';
import { changeOwnPassword } from './user.commands.js';
import { deviceNonceFor, setDeviceCookie } from './device-cookie.js';
import {
  blockedMessage,
  DEFAULT_LOGIN_THROTTLE,
  type LoginThrottleOptions,
  reserveLoginAttempt,
  settleLoginAttempt,
  throttleKeys,
} from './login-throttle.js';
import { findUserByEmail } from './user.queries.js';

/** Only same-site console paths are followed after login (no open redirect). */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/console(\/[A-Za-z0-9/_?=&.-]*)?$/.test(value) ? value : '/console';
}

function authenticate(instance: passport.Authenticator, req: Request, res: Response): Promise<SessionUser | null> {
  return new Promise((resolve, reject) => {
    instance.authenticate('local', (error: unknown, user: SessionUser | false) => (error ? reject(error) : resolve(user || null)))(req, res, () => undefined);
  });
}

function logIn(req: Request, user: SessionUser): Promise<void> {
  // passport ≥ 0.6 regenerates the session on login (no session fixation) and keeps nothing from before.
  return new Promise((resolve, reject) => req.logIn(user, (error: unknown) => (error ? reject(error) : resolve())));
}

export type AuthDeps = {
  db: Db;
  clock: Clock;
  sessionSecret: string;
  config: { secureCookies: boolean };
  loginThrottle?: LoginThrottleOptions | undefined;
};

function loginPage(res: Response, values: { next: string; email: string; error: string | null }): void {
  renderPage(res, 'login', { title: 'Sign in', ...values });
}

/** What the sign-in routes need: the app's dependencies and its passport instance. */
export type AuthRouteDeps = AuthDeps & { instance: passport.Authenticator };

function showLogin(_deps: AuthRouteDeps): PublicRouteHandler {
  return async (req, res, user) => {
    if (user) {
      res.redirect(303, safeNext(req.query.next));
      return;
    }
    // Saving the anonymous session fixes its id, to which the form's CSRF token is bound. It is saved before the
    // page is sent, so that storage that cannot be written is an error page, not a form that cannot work.
    req.session.started = true;
    await new Promise<void>((resolve, reject) => req.session.save((error: unknown) => (error ? reject(error) : resolve())));
    loginPage(res, { next: safeNext(req.query.next), email: '', error: null });
  };
}

function submitLogin(deps: AuthRouteDeps): PublicRouteHandler {
  const { db, clock, instance } = deps;
  const throttle = deps.loginThrottle ?? DEFAULT_LOGIN_THROTTLE;
  return async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const next = safeNext(body.next);
    const input = loginSchema.safeParse(body);
    req.session.started = true;
    if (!input.success) {
      res.status(400);
      loginPage(res, { next, email: '', error: 'Enter your email and password.' });
      return;
    }
    const email = input.data.email;
    // Only a well-formed address is kept in the audit log: people type passwords into the email field.
    const auditEmail = EMAIL_ADDRESS.test(email.toLowerCase()) ? email.toLowerCase() : null;
    const account = findUserByEmail(db, email.toLowerCase());
    const keys = throttleKeys({ email, address: req.ip ?? 'unknown', deviceNonce: deviceNonceFor(req, deps.sessionSecret, account?.id) }, throttle);
    const reservation = reserveLoginAttempt(db, keys, clock(), throttle);
    if (reservation.blocked) {
      // Not audited: under a guessing attack that would be one stored row per refused request.
      res.status(429).set('Retry-After', String(reservation.blocked.retryAfterSeconds));
      loginPage(res, { next, email, error: blockedMessage(reservation.blocked) });
      return;
    }
    const user = await authenticate(instance, req, res);
    if (!user) {
      recordAudit(db, { actor: 'anonymous', action: 'login.failed', details: { email: auditEmail } }, clock());
      res.status(401);
      loginPage(res, { next, email, error: 'The email or password is not correct.' });
      return;
    }
    settleLoginAttempt(db, keys);
    await logIn(req, user);
    setDeviceCookie(res, deps.sessionSecret, user.id, deps.config.secureCookies);
    recordAudit(db, { actor: user.email, action: 'login', targetType: 'user', targetId: user.email }, clock());
    res.redirect(303, next);
  };
}

function submitLogout(deps: AuthRouteDeps): RouteHandler {
  const { db, clock } = deps;
  return async (req, res, user) => {
    recordAudit(db, { actor: user.email, action: 'logout', targetType: 'user', targetId: user.email }, clock());
    await new Promise<void>((resolve, reject) => req.logOut((error: unknown) => (error ? reject(error) : resolve())));
    res.redirect(303, '/console/login');
  };
}

function showPasswordForm(_deps: AuthRouteDeps): RouteHandler {
  return (_req, res) => renderPage(res, 'password', { title: 'Change password', error: null });
}

function submitPasswordChange(deps: AuthRouteDeps): RouteHandler {
  const { db, clock } = deps;
  return async (req, res, user) => {
    try {
      const input = parseInput(passwordChangeSchema, req.body, 'password change');
      await changeOwnPassword(db, user.id, input.current, input.password, clock());
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status !== 400) throw error;
      res.status(400);
      renderPage(res, 'password', { title: 'Change password', error: error.message });
      return;
    }
    // The change ended every session of this user (new session version); this one goes on under a new id.
    await logIn(req, user);
    redirectWithFlash(req, res, '/console', 'Your password was changed.');
  };
}

/** Sign-in (throttled per account, address and device: login-throttle.ts), sign-out and password change. */
export function authRoutes(deps: AuthRouteDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/login', access: 'public', handler: showLogin(deps) },
    { method: 'post', path: '/login', access: 'public', handler: submitLogin(deps) },
    { method: 'post', path: '/logout', access: 'researcher', handler: submitLogout(deps) },
    { method: 'get', path: '/account/password', access: 'researcher', handler: showPasswordForm(deps) },
    { method: 'post', path: '/account/password', access: 'researcher', handler: submitPasswordChange(deps) },
  ];
}

