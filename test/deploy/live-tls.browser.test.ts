// The live role-play transport behind the TLS proxy the deployment docs describe (docs/operator/deploying.md): Caddy
// with its internal CA in front of the server (TRUST_PROXY=true, an https PUBLIC_URL), two participants in Chromium
// (trusting Caddy's root through an NSS database of their own, as test/deploy/tls-proxy.browser.test.ts does). Their
// pages' event streams go through Caddy, which must pass each event on as it comes (server-sent events are not
// buffered by Caddy's reverse_proxy), and their turns are POSTed through it.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { CHROMIUM_PATH } from '../helpers/browser.js';
import { type Caddy, startCaddy } from '../helpers/caddy.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { startServer, stopServer } from '../helpers/start-server.js';

let dir: string;
let caddy: Caddy;
let server: Awaited<ReturnType<typeof startServer>>;
let browser: Browser;
let publicId: string;

function seed(path: string): string {
  const db = openDatabase(path);
  migrate(db);
  makeScenario(db, { secrets: ['TLS-SECRET-ONE', 'TLS-SECRET-TWO'] });
  const now = new Date();
  const created = createBatch(db, launchReady({ name: 'TLS live', task: 'roleplay', run: 'tls-live', partner: { waitSeconds: 120, sameAddress: true }, turns: { max: 6, min: 2, turnSeconds: 60 } }), { actor: 'test', now });
  transitionBatch(db, created.batchId, 'open', 'test', now);
  const id = db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string;
  db.close();
  return id;
}

function trustingHome(rootCertPath: string): string {
  const home = join(dir, 'home');
  const nss = join(home, '.pki/nssdb');
  mkdirSync(nss, { recursive: true });
  execFileSync('certutil', ['-d', `sql:${nss}`, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', `sql:${nss}`, '-A', '-t', 'C,,', '-n', 'caddy-local-root', '-i', rootCertPath]);
  return home;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'simarena-live-tls-'));
  const dbPath = join(dir, 'simarena.db');
  publicId = seed(dbPath);
  server = await startServer({ DATABASE_PATH: dbPath, HOST: '127.0.0.1', PUBLIC_URL: 'https://arena.test', TRUST_PROXY: 'true', SEED_DEMO: 'false', SESSION_SECRET: 'live-tls-test-session-secret-live-tls-test' });
  caddy = await startCaddy(dir, `https://arena.test {\n\ttls internal\n\treverse_proxy ${new URL(server.baseUrl).host}\n}`);
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    env: { ...process.env, HOME: trustingHome(caddy.rootCertPath) },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', `--host-resolver-rules=MAP arena.test:443 127.0.0.1:${caddy.httpsPort}`],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await caddy?.stop();
  if (server) await stopServer(server.child);
  rmSync(dir, { recursive: true, force: true });
});

describe('live role-play behind Caddy over HTTPS, in Chromium', () => {
  it('two participants are matched through the proxy and a turn sent by one appears on the other\'s page while its stream stays open', async () => {
    const contexts = [await browser.newContext(), await browser.newContext()];
    const pages = await Promise.all(contexts.map((c) => c.newPage()));
    try {
      for (const page of pages) {
        await page.goto(`https://arena.test/r/${publicId}`);
        await page.getByRole('button', { name: 'I agree, continue' }).click();
        await page.getByRole('button', { name: 'I am ready: find me a partner' }).click();
        await page.waitForURL(/\/live\?rt=/);
      }
      for (const page of pages) await page.locator('#chat-heading').waitFor({ timeout: 20_000 });
      const characters = await Promise.all(pages.map((p) => p.locator('main.live').getAttribute('data-character')));
      const [speaker, listener] = characters[0] === '1' ? [pages[0], pages[1]] : [pages[1], pages[0]];
      if (!speaker || !listener) throw new Error('no pages');
      await speaker.locator('#turn-text').fill('Hello over TLS.');
      await speaker.getByRole('button', { name: 'Send' }).click();
      // The stream stays open: an event held in a proxy's buffer would only come when the stream ends, never here.
      await listener.locator('#chat-log li', { hasText: 'Hello over TLS.' }).waitFor({ timeout: 5_000 });
      await expect(listener.locator('#turn-status').textContent()).resolves.toMatch(/^Your turn/);
      expect(new URL(speaker.url()).protocol).toBe('https:');
    } finally {
      for (const c of contexts) await c.close();
    }
  }, 90_000);
});
