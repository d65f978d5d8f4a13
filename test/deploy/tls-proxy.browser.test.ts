// A deployment as the docs describe it (docs/operator/deploying.md): Caddy terminates TLS with its internal CA in front of
// the server started with TRUST_PROXY=true and an https PUBLIC_URL; Chromium trusts Caddy's root through an NSS
// certificate database of its own (so HSTS counts, which Chromium ignores over a connection with certificate errors)
// and reaches every host on the default HTTPS port through its resolver rules: arena.test (the study's server, over
// IPv6 loopback so the browser's address differs from the proxy's), worker.mturk.com (MTurk's frame, a second
// registrable domain), www.mturk.com and app.prolific.com (where a finished rater is sent).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { addressHash } from '../../src/rating/client-address.js';
import { CHROMIUM_PATH } from '../helpers/browser.js';
import { type Caddy, startCaddy } from '../helpers/caddy.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { seedBatch } from '../rating/rating-fixtures.js';

const ADMIN = { email: 'admin@arena.test', password: 'tls-proxy-test correct horse battery staple' };
const SECRET = 'tls-proxy-test-session-secret-tls-proxy-test';
const PID = 'aa00000000000000000000aa';
const MTURK_QUERY = 'assignmentId=3ASSIGNMENT0001&hitId=3HIT000001&workerId=A1WORKER00001&turkSubmitTo=https%3A%2F%2Fwww.mturk.com';

let dir: string;
let caddy: Caddy;
let server: Awaited<ReturnType<typeof startServer>>;
let browser: Browser;
let batches: { prolific: string; mturk: string; limited: string };
let dbPath: string;

/** The batches the test walks, made before the server starts: Prolific, MTurk, and a link batch allowing one rater per address. */
function seedStudies(path: string) {
  const db = openDatabase(path);
  migrate(db);
  const prolific = seedBatch(db, { samples: 1, settings: { perRaterCap: 1, provider: { kind: 'prolific', completionCodes: { completed: 'C0MPL3TE' } } } });
  const mturk = seedBatch(db, { samples: 1, settings: { perRaterCap: 1, provider: { kind: 'mturk', completionCodes: { completed: 'MT-TLS-OK' } } } });
  const limited = seedBatch(db, { samples: 2, settings: { addressLimits: { ratersPerWindow: 1, windowMinutes: 60, activeRaters: 5 } } });
  db.close();
  return { prolific: prolific.publicId, mturk: mturk.publicId, limited: limited.publicId };
}

/** Chromium's NSS database in a home of its own, trusting Caddy's root for TLS servers (certutil, libnss3-tools). */
function trustingHome(rootCertPath: string): string {
  const home = join(dir, 'home');
  const nss = join(home, '.pki/nssdb');
  mkdirSync(nss, { recursive: true });
  execFileSync('certutil', ['-d', `sql:${nss}`, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', `sql:${nss}`, '-A', '-t', 'C,,', '-n', 'caddy-local-root', '-i', rootCertPath]);
  return home;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'simarena-tls-'));
  dbPath = join(dir, 'simarena.db');
  batches = seedStudies(dbPath);
  server = await startServer({
    DATABASE_PATH: dbPath,
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://arena.test',
    TRUST_PROXY: 'true',
    SEED_DEMO: 'false',
    SESSION_SECRET: SECRET,
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
  });
  const backend = new URL(server.baseUrl).host.replace('arena.test', '127.0.0.1');
  caddy = await startCaddy(
    dir,
    [
      `https://arena.test {\n\ttls internal\n\treverse_proxy ${backend}\n}`,
      // MTurk's worker site frames the HIT's page, as an ExternalQuestion.
      `https://worker.mturk.com {\n\ttls internal\n\theader Content-Type "text/html; charset=utf-8"\n\trespond \`<!doctype html><title>HIT</title><iframe name="hit" width="1000" height="800" src="https://arena.test/r/{query.batch}?${MTURK_QUERY}"></iframe>\`\n}`,
      `https://www.mturk.com {\n\ttls internal\n\trespond /mturk/externalSubmit "MTurk received the HIT"\n}`,
      `https://app.prolific.com {\n\ttls internal\n\trespond /submissions/complete "Prolific received {query.cc}"\n}`,
    ].join('\n'),
  );
  const to = (address: string) => `${address}:${caddy.httpsPort}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    env: { ...process.env, HOME: trustingHome(caddy.rootCertPath) },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      // Port 80 of arena.test is Caddy's TLS port: plain HTTP there fails, so a page loads over http:// only when HSTS upgraded it.
      `--host-resolver-rules=MAP arena.test:443 ${to('[::1]')}, MAP arena.test:80 ${to('[::1]')}, MAP worker.mturk.com:443 ${to('127.0.0.1')}, MAP www.mturk.com:443 ${to('127.0.0.1')}, MAP app.prolific.com:443 ${to('127.0.0.1')}`,
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await caddy?.stop();
  if (server) await stopServer(server.child);
  rmSync(dir, { recursive: true, force: true });
});

/** Every URL the page's top frame and subframes went to, to check that none left HTTPS. */
function recordNavigations(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (req) => {
    if (req.isNavigationRequest()) urls.push(req.url());
  });
  return urls;
}

/** A GET of arena.test through Caddy from a loopback address of the test's choosing, trusting Caddy's root. */
function getFrom(localAddress: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: caddy.httpsPort, servername: 'arena.test', headers: { host: 'arena.test' }, path, localAddress, ca: readFileSync(caddy.rootCertPath) },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

describe('simarena behind Caddy over HTTPS, in Chromium', () => {
  it('a Prolific rater goes from the link to Prolific\'s completion URL over HTTPS only; HSTS is sent and Chromium keeps it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const navigations = recordNavigations(page);
    try {
      const entry = await page.goto(`https://arena.test/r/${batches.prolific}?PROLIFIC_PID=${PID}&STUDY_ID=s1&SESSION_ID=x1`);
      expect(entry?.status()).toBe(200);
      expect(entry?.headers()['strict-transport-security']).toMatch(/max-age=\d{6,}/);
      await page.getByRole('button', { name: 'I agree, continue' }).click();
      await page.getByRole('button', { name: 'Start' }).click();
      await page.waitForURL(/\/c\//);
      await page.locator('#choice-left').check();
      await Promise.all([page.waitForURL('https://app.prolific.com/submissions/complete?cc=C0MPL3TE'), page.getByRole('button', { name: 'Submit answer' }).click()]);
      expect(await page.locator('body').textContent()).toBe('Prolific received C0MPL3TE');
      expect(navigations.filter((url) => !url.startsWith('https://'))).toEqual([]);
      expect(navigations.some((url) => url.includes('/done?'))).toBe(true);

      // http://arena.test is port 80, which the resolver sends to Caddy's TLS port: only Chromium's own upgrade (HSTS,
      // remembered from the responses above over a trusted connection) makes it load.
      const upgraded = await page.goto('http://arena.test/healthz');
      expect(page.url()).toBe('https://arena.test/healthz');
      expect(await upgraded?.json()).toEqual({ status: 'ok', database: 'ok' });
    } finally {
      await context.close();
    }
    const db = openDatabase(dbPath);
    try {
      expect(db.prepare("SELECT r.status FROM raters r JOIN batches b ON b.id = r.batch_id WHERE b.public_id = ?").pluck().all(batches.prolific)).toEqual(['completed']);
      expect(db.prepare('SELECT count(*) FROM judgments j JOIN batches b ON b.id = j.batch_id WHERE b.public_id = ?').pluck().get(batches.prolific)).toBe(1);
    } finally {
      db.close();
    }
  });

  it('an MTurk worker rates inside worker.mturk.com\'s HTTPS frame and the frame posts the HIT to www.mturk.com', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const navigations = recordNavigations(page);
    try {
      await page.goto(`https://worker.mturk.com/?batch=${batches.mturk}`);
      const hit = page.frameLocator('iframe[name="hit"]');
      await hit.getByRole('button', { name: 'I agree, continue' }).click();
      await hit.getByRole('button', { name: 'Start' }).click();
      await hit.locator('#choice-right').check();
      await hit.getByRole('button', { name: 'Submit answer' }).click();
      const submitted = page.waitForRequest('https://www.mturk.com/mturk/externalSubmit');
      await hit.getByRole('button', { name: /submit/i }).last().click();
      const post = await submitted;
      expect(new URLSearchParams(post.postData() ?? '').get('assignmentId')).toBe('3ASSIGNMENT0001');
      expect(new URLSearchParams(post.postData() ?? '').get('completionCode')).toBe('MT-TLS-OK');
      expect(navigations.filter((url) => !url.startsWith('https://'))).toEqual([]);
      // The frame's own cookies, if it sets any, are Secure.
      const cookies = await context.cookies('https://arena.test');
      expect(cookies.filter((c) => !c.secure)).toEqual([]);
    } finally {
      await context.close();
    }
    const db = openDatabase(dbPath);
    try {
      expect(db.prepare('SELECT j.choice FROM judgments j JOIN batches b ON b.id = j.batch_id WHERE b.public_id = ?').pluck().all(batches.mturk)).toEqual(['right']);
    } finally {
      db.close();
    }
  });

  it('an admin signs in to the console over HTTPS: the session cookie is Secure and is sent back', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const navigations = recordNavigations(page);
    try {
      await page.goto('https://arena.test/console/login');
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await Promise.all([page.waitForURL('https://arena.test/console'), page.getByRole('button', { name: 'Sign in' }).click()]);
      const cookies = await context.cookies('https://arena.test');
      expect(cookies.length).toBeGreaterThan(0);
      expect(cookies.filter((c) => !c.secure)).toEqual([]);
      const batchesPage = await page.goto('https://arena.test/console/batches');
      expect(batchesPage?.status()).toBe(200);
      expect(page.url()).toBe('https://arena.test/console/batches');
      expect(navigations.filter((url) => !url.startsWith('https://'))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('per-address limits count the client\'s address from X-Forwarded-For: a second client is let in where the first is limited', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      // The browser comes from ::1; its one rater of this batch uses up its address's place.
      await page.goto(`https://arena.test/r/${batches.limited}`);
      await page.getByRole('button', { name: 'I agree, continue' }).click();
      await page.waitForURL(/\/instructions\?/);
      const again = await (await browser.newContext()).newPage();
      const limited = await again.goto(`https://arena.test/r/${batches.limited}`);
      expect(limited?.status()).toBe(429);
      await again.context().close();
    } finally {
      await context.close();
    }
    // Another client (127.0.0.5), through the same proxy (which reaches the server from 127.0.0.1), is not limited.
    const other = await getFrom('127.0.0.5', `/r/${batches.limited}`);
    expect(other.status).toBe(200);
    expect(other.body).toContain('<h1>Consent</h1>');
    const db = openDatabase(dbPath);
    try {
      const hashes = db.prepare('SELECT r.address_hash FROM raters r JOIN batches b ON b.id = r.batch_id WHERE b.public_id = ?').pluck().all(batches.limited);
      expect(hashes).toEqual([addressHash(SECRET, batches.limited, '::1')]);
      expect(hashes).not.toContain(addressHash(SECRET, batches.limited, '127.0.0.1'));
    } finally {
      db.close();
    }
  });
});
