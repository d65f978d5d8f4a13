import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSupervisor } from '../../src/console/run-supervisor.js';
import { signIn } from '../auth/session-helpers.js';
import { installTestLibrary } from '../generation/generation-fixtures.js';
import { type FakeLlm, callKind, startFakeLlm } from '../helpers/fake-llm.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

// A run the CLI sent through the OpenAI Batch API (`generate --batch-api`) and that stopped while its SCRIPT batch
// was out, resumed from the console: the server collects that batch before generating, as `generate --resume` does,
// so no SCRIPT dialogue is paid for twice.

const root = new URL('../../', import.meta.url).pathname;
let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const scriptChatCalls = (f: FakeLlm) => f.requests.filter((r) => callKind(r) === 'script').length;
const batchReads = (f: FakeLlm) => f.batchApi.calls.filter((c) => c.method === 'GET' && c.path.startsWith('/batches/')).length;

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `simarena generate --batch-api` on the app's database, killed while its batch is in progress. */
async function cliRunKilledWhileBatchIsOut(t: TestApp, f: FakeLlm): Promise<number> {
  f.batchApi.setPollsUntilDone(100_000);
  const env = { DATABASE_PATH: t.dbPath, OPENAI_BASE_URL: f.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json'), LOG_LEVEL: 'silent' };
  const args = ['generate', '--scenarios', 'all', '--modes', 'script,agents', '--model', 'm', '--max-turns', '4', '--run-name', 'cli-batch', '--batch-api', '--poll-seconds', '0.05'];
  const child = spawn(process.execPath, [join(root, 'bin/simarena.js'), ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
  await until(() => batchReads(f) >= 2, 'the CLI to poll its batch');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return t.db.prepare("SELECT id FROM runs WHERE name = 'cli-batch'").pluck().get() as number;
}

const settingsOf = (t: TestApp, runId: number) => JSON.parse(t.db.prepare('SELECT settings FROM runs WHERE id = ?').pluck().get(runId) as string) as { scriptBatch?: { batchId: string; pollMs?: number } };
const auditOf = (t: TestApp, runId: number) =>
  t.db.prepare("SELECT action, details FROM audit_log WHERE target_type = 'run' AND target_id = ? ORDER BY id").all(String(runId)) as { action: string; details: string | null }[];

describe('console Resume of a run whose SCRIPT batch is out', () => {
  it('collects the stored batch first (its status on the run page, Pause keeping it), then completes the SCRIPT dialogues from its answers without one SCRIPT call', async () => {
    fake = await startFakeLlm();
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key' } });
    installTestLibrary(t.db, ['stranger', 'friend']);
    const runId = await cliRunKilledWhileBatchIsOut(t, fake);
    // The batch and how often the CLI was told to read it are kept with the run.
    expect(settingsOf(t, runId).scriptBatch).toMatchObject({ batchId: 'batch_fake_1', pollMs: 50 });
    const supervisor = t.app.locals.runSupervisor as RunSupervisor;
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(page.text).toContain('/resume');

    await admin.agent.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: admin.csrf }).expect(303);
    const readsBefore = batchReads(fake);
    await until(() => batchReads(fake as FakeLlm) >= readsBefore + 2, 'the server to poll the batch');
    const polling = await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200);
    expect(polling.body).toMatchObject({ live: true, actions: { pause: true, resume: false } });
    expect(polling.body.batch_note).toMatch(/^Collecting the OpenAI batch batch_fake_1 first: in progress, 0 of 0 answered, 0 failed\./);
    expect((await admin.agent.get(`/console/runs/${runId}`).expect(200)).text).toContain('Collecting the OpenAI batch batch_fake_1 first');
    // Nothing is generated while the batch is out: no new batch, no chat call of any kind.
    expect(fake.requests).toHaveLength(0);
    expect(fake.batchApi.calls.filter((c) => c.method === 'POST' && c.path === '/batches')).toHaveLength(1);

    // Pausing while polling stops the polling and changes nothing else: the batch stays stored for the next resume.
    await admin.agent.post(`/console/runs/${runId}/pause`).type('form').send({ _csrf: admin.csrf }).expect(303);
    await supervisor.idle();
    expect(supervisor.isLive(runId)).toBe(false);
    expect(settingsOf(t, runId).scriptBatch?.batchId).toBe('batch_fake_1');
    expect(t.db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'complete'").pluck().get(runId)).toBe(0);
    expect((await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200)).body).toMatchObject({ live: false, batch_note: null, actions: { resume: true } });

    // The batch ends; Resume collects it and the engine runs.
    fake.batchApi.setPollsUntilDone(1);
    await admin.agent.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: admin.csrf }).expect(303);
    await supervisor.idle();
    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('complete');
    expect(t.db.prepare('SELECT mode, state, count(*) AS n FROM dialogues WHERE run_id = ? GROUP BY mode, state ORDER BY mode').all(runId)).toEqual([
      { mode: 'AGENTS', state: 'complete', n: 2 },
      { mode: 'SCRIPT', state: 'complete', n: 2 },
    ]);
    expect(scriptChatCalls(fake)).toBe(0);
    expect(fake.batchApi.calls.filter((c) => c.method === 'POST' && c.path === '/batches')).toHaveLength(1);
    // Each SCRIPT dialogue's turns come from the one call the batch answered, stored once.
    const scriptCalls = t.db
      .prepare("SELECT c.dialogue_id, c.provider_batch_id, count(*) AS n FROM llm_calls c JOIN dialogues d ON d.id = c.dialogue_id WHERE d.run_id = ? AND d.mode = 'SCRIPT' GROUP BY c.dialogue_id")
      .all(runId) as { provider_batch_id: string; n: number }[];
    expect(scriptCalls).toHaveLength(2);
    expect(scriptCalls.every((c) => c.provider_batch_id === 'batch_fake_1' && c.n === 1)).toBe(true);
    expect(auditOf(t, runId).map((a) => a.action)).toEqual(['run.start', 'run.pause', 'run.start', 'run.finish']);
  });

  it('a stored batch that cannot be read fails the run with the reason on its page, and Resume is offered again', async () => {
    fake = await startFakeLlm();
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key' } });
    installTestLibrary(t.db, ['stranger']);
    const runId = await cliRunKilledWhileBatchIsOut(t, fake);
    const settings = settingsOf(t, runId);
    t.db.prepare('UPDATE runs SET settings = ? WHERE id = ?').run(JSON.stringify({ ...settings, scriptBatch: { ...settings.scriptBatch, batchId: 'batch_gone' } }), runId);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: admin.csrf }).expect(303);
    await (t.app.locals.runSupervisor as RunSupervisor).idle();
    const run = t.db.prepare('SELECT state, error FROM runs WHERE id = ?').get(runId) as { state: string; error: string };
    expect(run.state).toBe('failed');
    expect(run.error).toMatch(/^The run's OpenAI batch batch_gone could not be collected: .*No such batch.*\. Resume the run to try again\.$/);
    expect(fake.requests).toHaveLength(0);
    const progress = await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200);
    expect(progress.body).toMatchObject({ state: 'failed', live: false, actions: { resume: true } });
    expect((await admin.agent.get(`/console/runs/${runId}`).expect(200)).text).toContain('could not be collected');
    expect(auditOf(t, runId).map((a) => a.action)).toEqual(['run.start', 'run.finish']);
  });

  it('Cancel while the batch is polled cancels the run for good, with nothing generated', async () => {
    fake = await startFakeLlm();
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key' } });
    installTestLibrary(t.db, ['stranger']);
    const runId = await cliRunKilledWhileBatchIsOut(t, fake);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: admin.csrf }).expect(303);
    const readsBefore = batchReads(fake);
    await until(() => batchReads(fake as FakeLlm) > readsBefore, 'the server to poll the batch');
    await admin.agent.post(`/console/runs/${runId}/cancel`).type('form').send({ _csrf: admin.csrf, confirm: 'cancel' }).expect(303);
    await (t.app.locals.runSupervisor as RunSupervisor).idle();
    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('cancelled');
    expect(fake.requests).toHaveLength(0);
    expect(auditOf(t, runId).map((a) => [a.action, a.details && JSON.parse(a.details).state])).toEqual([
      ['run.start', undefined],
      ['run.cancel', undefined],
      ['run.finish', 'cancelled'],
    ]);
  });
});
