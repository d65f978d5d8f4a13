import type { Express } from 'express';
import request from 'supertest';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { addUser } from '../../src/auth/user.commands.js';
import { findUserByEmail, type Role } from '../../src/auth/user.queries.js';
import type { Db } from '../../src/db/connection.js';

export const PASSWORD = 'correct horse battery';

/** The CSRF token a console page embeds in its forms. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF token on the page');
  return match[1];
}

export async function makeUser(db: Db, role: Role, email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.org`): Promise<{ id: number; email: string }> {
  const { id } = await addUser(db, { email, role, password: PASSWORD }, 'test', new Date());
  return { id, email };
}

export type SignedIn = { agent: ReturnType<typeof request.agent>; csrf: string; email: string; id: number };

/**
 * A browser's agent behind a proxy that ends TLS (as deployed: docs/operator/deploying.md), for an app whose PUBLIC_URL
 * is https and TRUST_PROXY is set: every request says X-Forwarded-Proto: https, and the session cookie, marked Secure,
 * is sent back, as a browser sends it over its https leg. (superagent's cookie jar holds a Secure cookie back from the
 * test's plain-http hop to the app, so the jar is read as for https here.)
 */
export function agentBehindTls(app: Express): ReturnType<typeof request.agent> {
  const agent = request.agent(app).set('X-Forwarded-Proto', 'https');
  type Jar = { getCookies: (access: { domain: string; path: string; secure: boolean; script: boolean }) => { toValueString: () => string } };
  const inner = agent as unknown as { jar: Jar; _attachCookies: (req: { url: string; cookies: string }) => void };
  inner._attachCookies = (req) => {
    const url = new URL(req.url);
    req.cookies = inner.jar.getCookies({ domain: url.hostname, path: url.pathname, secure: true, script: false }).toValueString();
  };
  return agent;
}

/**
 * Signs a new user of `role` in through the real login form and returns the cookie-keeping agent and a CSRF token;
 * `behindTls` for an app with an https PUBLIC_URL (agentBehindTls).
 */
export async function signIn(app: Express, db: Db, role: Role, options: { behindTls?: boolean } = {}): Promise<SignedIn> {
  const user = await makeUser(db, role);
  const agent = options.behindTls ? agentBehindTls(app) : request.agent(app);
  const page = await agent.get('/console/login').expect(200);
  await agent
    .post('/console/login')
    .type('form')
    .send({ _csrf: csrfFrom(page.text), email: user.email, password: PASSWORD })
    .expect(303);
  const home = await agent.get('/console').expect(200);
  return { agent, csrf: csrfFrom(home.text), ...user };
}

export function tokenFor(db: Db, email: string): string {
  const user = findUserByEmail(db, email);
  if (!user) throw new Error(`no user ${email}`);
  return createApiToken(db, user, 'test', 'test', new Date()).secret;
}
