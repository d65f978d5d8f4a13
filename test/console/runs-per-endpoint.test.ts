import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { RunSupervisor } from '../../src/console/run-supervisor.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { buildTestApp } from '../helpers/test-app.js';
import { installTestLibrary } from '../generation/generation-fixtures.js';
import { signIn } from '../auth/session-helpers.js';

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const startRun = (admin: Awaited<ReturnType<typeof signIn>>, name: string, scenarios: string[]) =>
  admin.agent
    .post('/console/runs/new')
    .type('form')
    .send({ _csrf: admin.csrf, name, scenarios: scenarios.join(','), modes: ['AGENTS'], model: 'fake-model', maxTurns: '6', concurrency: '1' });

describe('GENERATION_RUNS_PER_ENDPOINT', () => {
  it('loadConfig, unset, allows one live run per endpoint; a number from 1 to 32 is taken; anything else stops the start naming the variable', () => {
    expect(loadConfig({}).generationRunsPerEndpoint).toBe(1);
    expect(loadConfig({ GENERATION_RUNS_PER_ENDPOINT: '3' }).generationRunsPerEndpoint).toBe(3);
    for (const bad of ['0', '2.5', 'many', '33']) {
      expect(() => loadConfig({ GENERATION_RUNS_PER_ENDPOINT: bad })).toThrow(
        new RegExp(`^Invalid environment variable GENERATION_RUNS_PER_ENDPOINT="${bad.replace('.', '\\.')}": must be a whole number from 1 to 32`),
      );
    }
  });

  it('POST /console/runs/new, with GENERATION_RUNS_PER_ENDPOINT=2, runs two at once on one endpoint and refuses the third with 409', async () => {
    fake = await startFakeLlm({ latencyMs: 150 });
    const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'test-key', GENERATION_RUNS_PER_ENDPOINT: '2' } });
    const scenarios = installTestLibrary(t.db, ['stranger', 'friend', 'family']);
    const admin = await signIn(t.app, t.db, 'admin');
    expect((await startRun(admin, 'first', scenarios)).status).toBe(303);
    expect((await startRun(admin, 'second', scenarios)).status).toBe(303);
    const third = await startRun(admin, 'third', scenarios);
    expect(third.status).toBe(409);
    expect(third.text).toContain('2 runs are being generated on the endpoint');
    expect(third.text).toContain('GENERATION_RUNS_PER_ENDPOINT');
    const states = t.db.prepare("SELECT name, state FROM runs WHERE kind = 'generation' ORDER BY id").all() as { name: string; state: string }[];
    expect(states.map((r) => r.name)).toEqual(['first', 'second']);
    expect(states.every((r) => r.state === 'running')).toBe(true);
    await (t.app.locals.runSupervisor as RunSupervisor).pauseAll();
  });
});
