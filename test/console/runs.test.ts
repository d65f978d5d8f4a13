import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { buildTestApp } from '../helpers/test-app.js';
import { installTestLibrary } from '../generation/generation-fixtures.js';
import { signIn } from '../auth/session-helpers.js';
import type { Db } from '../../src/db/connection.js';
import type { RunSupervisor } from '../../src/console/run-supervisor.js';

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function waitForState(db: Db, runId: number, states: string[], timeoutMs = 15_000): Promise<string> {
  const start = Date.now();
  for (;;) {
    const state = db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId) as string;
    if (states.includes(state)) return state;
    if (Date.now() - start > timeoutMs) throw new Error(`run ${runId} stayed ${state}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('generation runs from the console', () => {
  it('POST /console/runs/new, with a model on the configured endpoint, generates in the background and the run page follows it', async () => {
    fake = await startFakeLlm();
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key' } });
    const scenarios = installTestLibrary(t.db, ['stranger', 'friend']);
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent
      .post('/console/runs/new')
      .type('form')
      .send({ _csrf: admin.csrf, name: 'console-gen', scenarios: scenarios.join(','), modes: ['SCRIPT', 'AGENTS'], model: 'fake-model', samples: '1', maxTurns: '4', concurrency: '2' });
    expect(res.status).toBe(303);
    const runId = t.db.prepare("SELECT id FROM runs WHERE name = 'console-gen'").pluck().get() as number;
    expect(res.headers.location).toBe(`/console/runs/${runId}`);
    expect(await waitForState(t.db, runId, ['complete', 'failed'])).toBe('complete');
    const progress = await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200);
    expect(progress.body).toMatchObject({ state: 'complete', live: false, dialogues: { total: 4, complete: 4, failed: 0 } });
    expect(progress.body.tokens.prompt).toBeGreaterThan(0);
    const page = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(page.text).toContain('Simulation card');
    expect(fake.requests.every((r) => r.body.model === 'fake-model')).toBe(true);
    const actions = t.db.prepare("SELECT action FROM audit_log WHERE target_type = 'run' ORDER BY id").pluck().all();
    expect(actions).toEqual(['run.start', 'run.finish']);
  });

  it('POST /console/runs/:id/pause then /resume, stops the run resumably and finishes it without redoing dialogues', async () => {
    fake = await startFakeLlm({ latencyMs: 150 });
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key' } });
    const scenarios = installTestLibrary(t.db, ['stranger', 'friend', 'family']);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent
      .post('/console/runs/new')
      .type('form')
      .send({ _csrf: admin.csrf, name: 'pausable', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' })
      .expect(303);
    const runId = t.db.prepare("SELECT id FROM runs WHERE name = 'pausable'").pluck().get() as number;
    const second = await admin.agent.post('/console/runs/new').type('form').send({ _csrf: admin.csrf, scenarios: 'all', modes: ['SCRIPT'], model: 'fake-model' });
    expect(second.status).toBe(409);
    expect(second.text).toContain('Another run is being generated on the endpoint');
    await admin.agent.post(`/console/runs/${runId}/pause`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(await waitForState(t.db, runId, ['paused', 'complete'])).toBe('paused');
    const doneBefore = t.db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'complete'").pluck().get(runId) as number;
    expect(doneBefore).toBeLessThan(3);
    await admin.agent.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(await waitForState(t.db, runId, ['complete', 'failed'])).toBe('complete');
    expect(t.db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'complete'").pluck().get(runId)).toBe(3);
  });

  it('runSupervisor.pauseAll, at shutdown with a run in progress, leaves it paused and resumable rather than half-counted', async () => {
    fake = await startFakeLlm({ latencyMs: 150 });
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key' } });
    const scenarios = installTestLibrary(t.db, ['stranger', 'friend']);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent
      .post('/console/runs/new')
      .type('form')
      .send({ _csrf: admin.csrf, name: 'shutdown', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' })
      .expect(303);
    const runId = t.db.prepare("SELECT id FROM runs WHERE name = 'shutdown'").pluck().get() as number;
    await (t.app.locals.runSupervisor as RunSupervisor).pauseAll();
    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('paused');
    expect(t.db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'running'").pluck().get(runId)).toBe(0);
  });

  it('POST /console/runs/new, with an unknown mode or no model, answers 400 and starts nothing', async () => {
    const t = buildTestApp();
    const admin = await signIn(t.app, t.db, 'admin');
    const res = await admin.agent.post('/console/runs/new').type('form').send({ _csrf: admin.csrf, scenarios: 'all', modes: ['POETRY'], model: 'm' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('unknown mode');
    const noModel = await admin.agent.post('/console/runs/new').type('form').send({ _csrf: admin.csrf, scenarios: 'all', modes: ['SCRIPT'], model: '' });
    expect(noModel.status).toBe(400);
    expect(t.db.prepare("SELECT count(*) FROM runs WHERE kind = 'generation'").pluck().get()).toBe(0);
  });
});
