import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const M = 'gpt-4o-mini';

/** A database with one draft Prolific batch (id 1), and the CLI's environment without PUBLIC_URL. */
async function setUp() {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'cli-run', model: M });
  const scenario = makeScenario(db);
  makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
  makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M });
  const file = join(tempDir(), 'batch.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'SCRIPT vs AGENTS',
      runs: ['cli-run'],
      comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]],
      provider: { kind: 'prolific', completionCodes: { completed: 'C1A2B3C4', screenedOut: 'S1A2B3C4', noConsent: 'N1A2B3C4' } },
      consent: 'You agree to take part.',
      instructions: 'Choose the more natural conversation.',
      pay: '£2.00',
    }),
  );
  const env = { DATABASE_PATH: path };
  expect((await cli(['batches', 'create', '--from', file], env)).code).toBe(0);
  return { db, path, env };
}

/** Starts the real server on the database once (with the given environment) and stops it. */
async function serveOnce(env: Record<string, string>): Promise<string> {
  const { child, output, baseUrl } = await startServer({ SEED_DEMO: 'false', ...env });
  await stopServer(child);
  expect(output()).toContain('Admin console:');
  return baseUrl;
}

describe('simarena batches link and open: the public URL', () => {
  it('batches link, when neither PUBLIC_URL is set nor a server has run on the database, prints no link and says why', async () => {
    const { env } = await setUp();
    const link = await cli(['batches', 'link', '1'], env);
    expect(link.code).toBe(1);
    expect(link.stdout).toBe('');
    expect(link.stderr).toBe(
      'error: No public URL is known for this database: set PUBLIC_URL to the address raters reach the server at, or start the server once on this database (it records the address it serves).',
    );
  });

  it('batches link, after the server ran on the database on a port of its own, prints a link to that server and says which address it used', async () => {
    const { env, path } = await setUp();
    const baseUrl = await serveOnce({ DATABASE_PATH: path });
    expect(baseUrl).not.toBe('http://127.0.0.1:3000');
    const link = await cli(['batches', 'link', '1'], env);
    expect(link.code).toBe(0);
    expect(link.stdout).toMatch(new RegExp(`^${baseUrl.replace(/[.]/g, '\\.')}/r/[A-Za-z0-9_-]{20,}\\?PROLIFIC_PID=`));
    expect(link.stderr).toContain(`note: the link uses ${baseUrl}, the public URL the server last started with on this database`);
  });

  it("batches link, with PUBLIC_URL set in the CLI's environment, uses it over the server's and says so", async () => {
    const { env, path } = await setUp();
    await serveOnce({ DATABASE_PATH: path });
    const link = await cli(['batches', 'link', '1'], { ...env, PUBLIC_URL: 'https://rate.example.org' });
    expect(link.code).toBe(0);
    expect(link.stdout).toMatch(/^https:\/\/rate\.example\.org\/r\//);
    expect(link.stderr).toContain('note: the link uses https://rate.example.org, from PUBLIC_URL in this environment');
  });

  it("batches open, for a Prolific batch on a database whose server runs with an https PUBLIC_URL, judges the https check by the server's URL, not the CLI's own environment", async () => {
    const { env, db, path } = await setUp();
    await serveOnce({ DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' });
    const opened = await cli(['batches', 'open', '1'], env);
    expect(opened).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
    expect(opened.stderr).not.toContain('is not https');
    expect(opened.stderr).toContain('note: the https check uses https://rate.example.org, the public URL the server last started with on this database');
    expect(db.prepare('SELECT state FROM batches WHERE id = 1').pluck().get()).toBe('open');
  });

  it('batches open, for a Prolific batch on a database whose server runs on plain http, warns with the address the server serves', async () => {
    const { env, path } = await setUp();
    const baseUrl = await serveOnce({ DATABASE_PATH: path });
    const opened = await cli(['batches', 'open', '1'], env);
    expect(opened.code).toBe(0);
    expect(opened.stderr).toContain(`The public URL ${baseUrl} points at a loopback address, this machine itself: nobody else can open it. Publishing on Prolific is refused until PUBLIC_URL is an https address participants reach`);
  });
});
