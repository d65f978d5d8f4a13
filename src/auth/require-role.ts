import type { Request } from 'express';
import { HttpError } from '../web/http-error.js';
import { currentUser, type SessionUser } from './session-user.js';
import type { Role } from './user.queries.js';

/** Who may use a route: anyone (login page), any signed-in researcher or admin, or admins only. */
export type Access = 'public' | Role;

/** Admins may do everything a researcher may. */
export function hasRole(user: SessionUser, role: Role): boolean {
  return user.role === 'admin' || user.role === role;
}

/** Returns the signed-in user when they hold `role`, or throws 401 (nobody signed in) / 403 (wrong role). */
export function requireRole(req: Request, role: Role): SessionUser {
  const user = currentUser(req);
  if (!user) throw new HttpError(401, 'Sign in to continue.', 'unauthenticated');
  if (!hasRole(user, role)) throw new HttpError(403, role === 'admin' ? 'Only an admin may do this.' : 'You do not have permission to do this.');
  return user;
}
