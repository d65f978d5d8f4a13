import Database from 'better-sqlite3';
import pino from 'pino';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js';
import { csrfFrom, signIn } from '../auth/session-helpers.js';

/**
 * A refusal is a page of the path's own: on a rater path the rater template (never the product's name) with the rater
 * headers; on a console path the console's strict headers.
 */
function expectOwnRefusalPage(path: string, res: request.Response): void {
  expect(res.headers['content-security-policy'], path).toContain("form-action 'self'");
  if (!path.startsWith('/r/')) return;
  expect(res.text, path).toContain('<body class="rater">');
  expect(res.text, path).not.toMatch(/simarena/i);
  expect(res.headers['content-security-policy'], path).toContain("default-src 'self'");
  expect(res.headers['cache-control'], path).toBe('no-store');
}

describe('requests that are not forms', () => {
  it('POST /console/login and POST /r/:batch/consent, with a JSON body, answer 415 with a message and no 500, each on a page of its own (the rater template and headers on rater paths, the console headers on console paths)', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a']] });
    for (const path of ['/console/login', `/r/${batch.publicId}/consent`, `/r/${batch.publicId}/c/some-assignment`, '/console/users']) {
      const res = await request(t.app).post(path).set('Content-Type', 'application/json').send('{"email":"x@example.org","password":"p"}');
      expect(res.status, path).toBe(415);
      expect(res.text).toContain('accepts only HTML form submissions');
      expect(res.text).not.toMatch(/at \S+\.ts:\d+/);
      expectOwnRefusalPage(path, res);
    }
  });

  it('POST /console/login and POST /r/:batch/withdraw, with no body at all, answer 400 saying the form is missing, each on a page of its own', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a']] });
    for (const path of ['/console/login', `/r/${batch.publicId}/withdraw`]) {
      const res = await request(t.app).post(path);
      expect(res.status, path).toBe(400);
      expect(res.text).toContain('arrived without one');
      expectOwnRefusalPage(path, res);
    }
  });

  it('POST /console/login, as a form, still reaches the handler (a wrong password is a 401, not a 415)', async () => {
    const t = buildTestApp();
    const agent = request.agent(t.app);
    const page = await agent.get('/console/login');
    const res = await agent.post('/console/login').type('form').send({ _csrf: csrfFrom(page.text), email: 'nobody@example.org', password: 'wrong one here' });
    expect(res.status).toBe(401);
  });
});

describe('security headers everywhere', () => {
  it('GET /static/... and GET /healthz carry the same security headers as a console page', async () => {
    const t = buildTestApp();
    const page = await request(t.app).get('/console/login');
    for (const path of ['/static/css/app.css', '/healthz']) {
      const res = await request(t.app).get(path);
      expect(res.status, path).toBe(200);
      for (const header of ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'strict-transport-security', 'referrer-policy', 'cross-origin-opener-policy'])
        expect(res.headers[header], `${path} ${header}`).toBe(page.headers[header]);
    }
  });
});

describe('upgrade-insecure-requests', () => {
  it('GET /console/login, /static/... and /healthz, with a plain-http PUBLIC_URL on a LAN address, send no upgrade-insecure-requests (the browser would fetch CSS and JS over https and sign-in would never complete)', async () => {
    const t = buildTestApp({ env: { PUBLIC_URL: 'http://192.0.2.2:3000' } });
    for (const path of ['/console/login', '/static/css/app.css', '/healthz']) {
      const res = await request(t.app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-security-policy'], path).toContain("form-action 'self'");
      expect(res.headers['content-security-policy'], path).not.toContain('upgrade-insecure-requests');
    }
  });

  it('GET /console/login and /healthz, with an https PUBLIC_URL, send upgrade-insecure-requests', async () => {
    const t = buildTestApp({ env: { PUBLIC_URL: 'https://arena.example.org' } });
    for (const path of ['/console/login', '/healthz']) {
      const res = await request(t.app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-security-policy'], path).toContain('upgrade-insecure-requests');
    }
  });
});

describe('https behind a proxy', () => {
  it('POST /console/login, with an https PUBLIC_URL and TRUST_PROXY off, says to set TRUST_PROXY instead of "form has expired"', async () => {
    const t = buildTestApp({ env: { PUBLIC_URL: 'https://arena.example.org' } });
    const agent = request.agent(t.app);
    const page = await agent.get('/console/login').set('X-Forwarded-Proto', 'https');
    expect(page.headers['set-cookie']).toBeUndefined();
    const res = await agent.post('/console/login').set('X-Forwarded-Proto', 'https').type('form').send({ _csrf: csrfFrom(page.text), email: 'a@example.org', password: 'whatever it is' });
    expect(res.status).toBe(403);
    expect(res.text).toContain('set TRUST_PROXY=1');
    expect(res.text).not.toContain('This form has expired');
  });
});

describe('storage that cannot be written', () => {
  it('GET /healthz and POST /console/login, on a read-only database, answer 503 with a clear message', async () => {
    const t = buildTestApp();
    const readOnly = new Database(t.dbPath, { readonly: true });
    try {
      const app = createApp({ db: readOnly, config: t.config, logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET });
      const health = await request(app).get('/healthz');
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ status: 'degraded', database: 'not writable', problem: 'the database file or its folder is read-only' });
      // The sign-in page must store its session before it can show a form that will work.
      const login = await request(app).get('/console/login');
      expect(login.status).toBe(503);
      expect(login.headers['retry-after']).toBe('60');
      expect(login.text).toContain('problem with its storage');
    } finally {
      readOnly.close();
    }
  });

  it('POST /console/users, when the disk is full (SQLITE_FULL), answers 503 and the admin is told nothing was saved', async () => {
    const t = buildTestApp();
    const admin = await signIn(t.app, t.db, 'admin');
    // Cap the file at its current size and fill the users table's last pages: the next account needs a page the
    // "disk" no longer has, exactly as on a full disk.
    const pages = t.db.pragma('page_count', { simple: true }) as number;
    t.db.pragma(`max_page_count = ${pages}`);
    const insert = t.db.prepare("INSERT INTO users (email, password_hash, role, created_at) VALUES (?, ?, 'researcher', '2026-01-01')");
    const codes: string[] = [];
    let n = 0;
    for (const size of [60, 1]) {
      try {
        for (let i = 0; i < 100_000; i++) insert.run(`fill-${String(n++).padStart(6, '0')}@example.org`, 'x'.repeat(size));
      } catch (error) {
        codes.push(String((error as { code?: string }).code));
      }
    }
    expect(codes).toEqual(['SQLITE_FULL', 'SQLITE_FULL']);
    const res = await admin.agent.post('/console/users').type('form').send({ _csrf: admin.csrf, email: 'late@example.org', role: 'researcher', password: 'violet harbour lamp' });
    expect(res.status).toBe(503);
    expect(res.text).toContain('What you just sent was not saved');
    expect(t.db.prepare("SELECT count(*) FROM users WHERE email = 'late@example.org'").pluck().get()).toBe(0);
  });
});
