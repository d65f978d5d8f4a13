import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, defaultResponder, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { buildTestApp } from '../helpers/test-app.js';
import { installTestLibrary } from '../generation/generation-fixtures.js';
import { csrfFrom, signIn } from '../auth/session-helpers.js';
import request from 'supertest';
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

type Admin = Awaited<ReturnType<typeof signIn>>;

/** Starts a run from the console's form as an admin (303 to its page) and gives its id. */
async function startRunFromForm(admin: Admin, db: Db, fields: Record<string, string | string[]>): Promise<number> {
  await admin.agent.post('/console/runs/new').type('form').send({ _csrf: admin.csrf, ...fields }).expect(303);
  return db.prepare('SELECT id FROM runs WHERE name = ?').pluck().get(fields.name) as number;
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
    const runId = await startRunFromForm(admin, t.db, { name: 'pausable', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' });
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
    const runId = await startRunFromForm(admin, t.db, { name: 'shutdown', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' });
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

const dialoguesOf = (db: Db, runId: number) =>
  db.prepare('SELECT id, state, generation, failure_reason, meta FROM dialogues WHERE run_id = ? ORDER BY id').all(runId) as {
    id: number;
    state: string;
    generation: number;
    failure_reason: string | null;
    meta: string;
  }[];
const auditOf = (db: Db, runId: number) =>
  db.prepare("SELECT actor, action, details FROM audit_log WHERE target_type = 'run' AND target_id = ? ORDER BY id").all(String(runId)) as { actor: string; action: string; details: string | null }[];

describe('the minimum of spoken turns from the console', () => {
  it('POST /console/runs/new, with minimum spoken turns 6, stores it, shows it on the run page and fails a dialogue the model ends after five spoken turns, with the reason', async () => {
    // Each character speaks until turn #5, where the model leaves: five spoken turns, enough under the default of 4.
    fake = await startFakeLlm({ respond: (r, i) => (/You are at Turn #5\b/.test(promptOf(r)) ? { content: JSON.stringify({ action: 'leave', text: '' }) } : defaultResponder(r, i)) });
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key' } });
    const scenarios = installTestLibrary(t.db, ['stranger']);
    const admin = await signIn(t.app, t.db, 'admin');
    const form = await admin.agent.get('/console/runs/new').expect(200);
    expect(form.text).toContain('name="minSpokenTurns" min="0" max="200" step="1" value="4"');
    const runId = await startRunFromForm(admin, t.db, { name: 'six-turns', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '10', minSpokenTurns: '6' });
    expect(JSON.parse(t.db.prepare('SELECT settings FROM runs WHERE id = ?').pluck().get(runId) as string)).toMatchObject({ minSpokenTurns: 6 });
    expect(await waitForState(t.db, runId, ['complete', 'failed'])).toBe('complete');
    const reason = "only 5 spoken turn(s), fewer than the minimum of 6 set for this run";
    expect(dialoguesOf(t.db, runId)).toEqual([expect.objectContaining({ state: 'failed', failure_reason: reason })]);
    const page = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(page.text).toContain('<span data-testid="min-spoken-turns">minimum 6 spoken turns</span>');
    expect(page.text).toContain(reason.replace(/'/g, '&#39;'));
  });

  it('POST /console/runs/new, with a minimum of spoken turns out of 0–200 or not a whole number, answers 400 with a message by the field, keeps what was typed and starts nothing', async () => {
    const t = buildTestApp();
    const scenarios = installTestLibrary(t.db, ['stranger']);
    const admin = await signIn(t.app, t.db, 'admin');
    const cases: [string, string][] = [['201', 'must be 200 or fewer'], ['-1', 'must be 0 or more'], ['2.5', 'must be a whole number'], ['many', 'must be a number']];
    for (const [typed, message] of cases) {
      const res = await admin.agent
        .post('/console/runs/new')
        .type('form')
        .send({ _csrf: admin.csrf, name: 'bad-minimum', scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', minSpokenTurns: typed });
      expect(res.status, typed).toBe(400);
      expect(res.text, typed).toContain(`<p class="field-error" id="minSpokenTurns-error">${message}</p>`);
      expect(res.text, typed).toContain(`name="minSpokenTurns" min="0" max="200" step="1" value="${typed}" aria-invalid="true"`);
      expect(res.text, typed).toContain('value="bad-minimum"');
    }
    expect(t.db.prepare("SELECT count(*) FROM runs WHERE kind = 'generation'").pluck().get()).toBe(0);
  });
});

describe('generating a run\'s failed dialogues again from the console', () => {
  /** A finished run from the console form whose dialogues all failed (the fake answers garbage until `fix()`). */
  async function runWithFailures(options: { latencyMs?: number; scenarios?: ('stranger' | 'friend' | 'family')[]; failFirst?: number } = {}) {
    let fixed = false;
    fake = await startFakeLlm({
      latencyMs: options.latencyMs,
      respond: (r, i) => (fixed || (options.failFirst !== undefined && i >= options.failFirst) ? defaultResponder(r, i) : { content: 'garbage' }),
    });
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key' } });
    const scenarios = installTestLibrary(t.db, options.scenarios ?? ['stranger']);
    const admin = await signIn(t.app, t.db, 'admin');
    const runId = await startRunFromForm(admin, t.db, { name: 'holes', scenarios: scenarios.join(','), modes: ['SCRIPT', 'AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' });
    return { t, admin, runId, supervisor: t.app.locals.runSupervisor as RunSupervisor, fix: () => (fixed = true) };
  }

  it('POST /console/runs/:id/retry-failed, on a finished run with failed dialogues, queues them again through the supervisor and they complete, the earlier failure kept in meta', async () => {
    const { t, admin, runId, supervisor, fix } = await runWithFailures();
    await supervisor.idle();
    expect(dialoguesOf(t.db, runId).map((d) => [d.state, d.generation])).toEqual([['failed', 1], ['failed', 1]]);
    const before = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(before.text).toMatch(/action="\/console\/runs\/\d+\/retry-failed" class="inline" data-show-if="actions.retry_failed">/);
    expect(before.text).toContain('Generate the <span data-field="dialogues.failed">2</span> failed dialogues again');

    fix();
    const res = await admin.agent.post(`/console/runs/${runId}/retry-failed`).type('form').send({ _csrf: admin.csrf }).expect(303);
    expect(res.headers.location).toBe(`/console/runs/${runId}`);
    // The supervisor owns the resumed run, as after Resume.
    expect(supervisor.isLive(runId)).toBe(true);
    const flashed = await admin.agent.get(`/console/runs/${runId}`).expect(200);
    expect(flashed.text).toContain('2 failed dialogues queued again; the run is generating them');
    await supervisor.idle();

    expect(t.db.prepare('SELECT state FROM runs WHERE id = ?').pluck().get(runId)).toBe('complete');
    for (const d of dialoguesOf(t.db, runId)) {
      expect(d).toMatchObject({ state: 'complete', generation: 2, failure_reason: null });
      expect(JSON.parse(d.meta)).toMatchObject({ earlier_failures: [{ generation: 1, reason: expect.stringMatching(/^invalid model output after 3 attempt/) }] });
      const calls = t.db.prepare('SELECT generation, status FROM llm_calls WHERE dialogue_id = ?').all(d.id) as { generation: number; status: string }[];
      expect(calls.filter((c) => c.generation === 1).every((c) => c.status === 'invalid')).toBe(true);
      expect(calls.filter((c) => c.generation === 2).length).toBeGreaterThan(0);
      expect(calls.filter((c) => c.generation === 2).every((c) => c.status === 'ok')).toBe(true);
    }
    const audit = auditOf(t.db, runId);
    expect(audit.map((a) => a.action)).toEqual(['run.start', 'run.finish', 'runs.retry_failed', 'run.start', 'run.finish']);
    expect(audit[2]).toMatchObject({ actor: admin.email });
    expect(JSON.parse(audit[2]?.details ?? '{}')).toEqual({ dialogues: dialoguesOf(t.db, runId).map((d) => d.id) });
    const progress = await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200);
    expect(progress.body).toMatchObject({ dialogues: { complete: 2, failed: 0 }, actions: { retry_failed: false } });

    // Nothing failed any more: a second post is refused and changes nothing.
    const again = await admin.agent.post(`/console/runs/${runId}/retry-failed`).type('form').send({ _csrf: admin.csrf });
    expect(again.status).toBe(409);
    expect(again.text).toContain('This run has no failed dialogues; there is nothing to generate again.');
    expect(dialoguesOf(t.db, runId).every((d) => d.generation === 2)).toBe(true);
    expect(auditOf(t.db, runId)).toHaveLength(5);
    expect(supervisor.isLive(runId)).toBe(false);
  });

  it('POST /console/runs/:id/retry-failed, while the run is being generated with a dialogue already failed, answers 409 and queues nothing', async () => {
    // One dialogue at a time: the first gets the three garbage answers and fails; the others take a while.
    const { t, admin, runId, supervisor } = await runWithFailures({ latencyMs: 100, scenarios: ['stranger', 'friend', 'family'], failFirst: 3 });
    for (let i = 0; i < 200 && (dialoguesOf(t.db, runId).filter((d) => d.state === 'failed').length === 0 || !supervisor.isLive(runId)); i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(supervisor.isLive(runId)).toBe(true);
    const failed = dialoguesOf(t.db, runId).filter((d) => d.state === 'failed');
    expect(failed).toHaveLength(1);
    const progress = await admin.agent.get(`/console/runs/${runId}/progress.json`).expect(200);
    expect(progress.body).toMatchObject({ dialogues: { failed: 1 }, actions: { retry_failed: false, pause: true } });

    const res = await admin.agent.post(`/console/runs/${runId}/retry-failed`).type('form').send({ _csrf: admin.csrf });
    expect(res.status).toBe(409);
    expect(res.text).toContain('This run is being generated right now; pause it or let it finish, then generate its failed dialogues again.');
    expect(dialoguesOf(t.db, runId).find((d) => d.id === failed[0]?.id)).toMatchObject({ state: 'failed', generation: 1 });
    expect(auditOf(t.db, runId).map((a) => a.action)).toEqual(['run.start']);
    await supervisor.pauseAll();
  });

  it('POST /console/runs/:id/retry-failed, from a researcher, signed out, or without the CSRF token, is refused as Resume is and queues nothing', async () => {
    const { t, admin, runId, supervisor } = await runWithFailures();
    await supervisor.idle();
    const researcher = await signIn(t.app, t.db, 'researcher');
    const asResearcher = await researcher.agent.post(`/console/runs/${runId}/retry-failed`).type('form').send({ _csrf: researcher.csrf });
    expect(asResearcher.status).toBe(403);
    expect(asResearcher.text).toContain('Only an admin may do this.');
    const researcherPage = await researcher.agent.get(`/console/runs/${runId}`).expect(200);
    expect(researcherPage.text).not.toContain('/retry-failed');

    // Signed out, with a valid CSRF token of the login page: the same answer as the Resume action.
    const anonymous = request.agent(t.app);
    const csrf = csrfFrom((await anonymous.get('/console/login').expect(200)).text);
    const signedOut = await anonymous.post(`/console/runs/${runId}/retry-failed`).type('form').send({ _csrf: csrf });
    const resumeSignedOut = await anonymous.post(`/console/runs/${runId}/resume`).type('form').send({ _csrf: csrf });
    expect(signedOut.status).toBe(401);
    expect(resumeSignedOut.status).toBe(signedOut.status);

    const noCsrf = await admin.agent.post(`/console/runs/${runId}/retry-failed`).type('form').send({});
    expect(noCsrf.status).toBe(403);

    expect(dialoguesOf(t.db, runId).map((d) => [d.state, d.generation])).toEqual([['failed', 1], ['failed', 1]]);
    expect(auditOf(t.db, runId).map((a) => a.action)).toEqual(['run.start', 'run.finish']);
    expect(supervisor.isLive(runId)).toBe(false);
  });
});
