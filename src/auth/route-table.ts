import type { Request, Response, Router } from 'express';
import { type Access, requireRole } from './require-role.js';
import { currentUser, type SessionUser } from './session-user.js';

// Console and API routes are declared as data: each names who may use it, and mountRoutes puts the role
// check in front of every handler. The role-matrix test walks these same lists, so a route cannot be added
// without a declared role, nor escape the test.

type Method = 'get' | 'post';

/** A handler behind a role check: it always has the signed-in user. */
export type RouteHandler = (req: Request, res: Response, user: SessionUser) => unknown;
/** A handler anyone may reach: the user when signed in, else null. */
export type PublicRouteHandler = (req: Request, res: Response, user: SessionUser | null) => unknown;

export type RouteSpec =
  | { method: Method; path: string; access: 'public'; handler: PublicRouteHandler }
  | { method: Method; path: string; access: Exclude<Access, 'public'>; handler: RouteHandler };

/** Mounts each route behind its role check; `onAnonymous` may answer a signed-out visitor (e.g. redirect to the login). */
export function mountRoutes(router: Router, routes: readonly RouteSpec[], onAnonymous?: (req: Request, res: Response) => boolean): void {
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      if (route.access === 'public') {
        await route.handler(req, res, currentUser(req));
        return;
      }
      if (!currentUser(req) && onAnonymous?.(req, res)) return;
      const user = requireRole(req, route.access);
      await route.handler(req, res, user);
    });
  }
}
