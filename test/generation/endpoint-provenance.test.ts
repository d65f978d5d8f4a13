import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointAddress } from '../../src/generation/endpoint-address.js';
import { signIn } from '../auth/session-helpers.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { installTestLibrary } from './generation-fixtures.js';

// Issue 40, item 6: a run resumed after its endpoint was fixed must say which endpoint served each call.

const fakes: FakeLlm[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe('endpoint of each call', () => {
  it('generate --resume, after the first endpoint died mid-run and OPENAI_BASE_URL was fixed, records each call, the run and its card at the address that served it', async () => {
    const t = buildTestApp();
    installTestLibrary(t.db, ['stranger', 'friend']);
    const first = await startFakeLlm();
    const second = await startFakeLlm();
    fakes.push(first, second);
    // The first server answers the first dialogue's two turns, then goes away in the middle of the third call.
    first.setResponder((_request, index) => {
      if (index < 2) return { content: JSON.stringify({ action: 'speak', text: `line ${index}` }) };
      void first.close();
      return { hang: true };
    });
    const env = { DATABASE_PATH: t.dbPath, OPENAI_API_KEY: 'sk-provenance', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    const failed = await cli(
      ['generate', '--scenarios', 'all', '--modes', 'agents', '--model', 'gpt-4o-mini', '--max-turns', '2', '--concurrency', '1', '--max-retries', '1', '--run-name', 'moved'],
      { ...env, OPENAI_BASE_URL: first.baseUrl },
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `error: cannot reach the endpoint "default" at ${first.baseUrl} (ECONNREFUSED) after 2 attempt(s): check OPENAI_BASE_URL (or the endpoint's baseUrl) and that the server is running, then resume with: simarena generate --resume moved`,
    );

    const resumed = await cli(['generate', '--resume', 'moved'], { ...env, OPENAI_BASE_URL: second.baseUrl });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Run moved (id 1): complete. 2/2 dialogues complete');

    const calls = t.db.prepare('SELECT dialogue_id, turn_idx, attempt, status, base_url FROM llm_calls ORDER BY id').all();
    expect(calls).toEqual([
      { dialogue_id: 1, turn_idx: 0, attempt: 1, status: 'ok', base_url: first.baseUrl },
      { dialogue_id: 1, turn_idx: 1, attempt: 1, status: 'ok', base_url: first.baseUrl },
      { dialogue_id: 2, turn_idx: 0, attempt: 1, status: 'network_error', base_url: first.baseUrl },
      { dialogue_id: 2, turn_idx: 0, attempt: 2, status: 'network_error', base_url: first.baseUrl },
      { dialogue_id: 2, turn_idx: 0, attempt: 3, status: 'ok', base_url: second.baseUrl },
      { dialogue_id: 2, turn_idx: 1, attempt: 1, status: 'ok', base_url: second.baseUrl },
    ]);
    expect(second.requests).toHaveLength(2);
    // The run names where it now sends its calls; its card lists both addresses with what each served.
    expect(t.db.prepare('SELECT base_url FROM runs WHERE id = 1').pluck().get()).toBe(second.baseUrl);
    const card = JSON.parse(t.db.prepare('SELECT simulation_card FROM runs WHERE id = 1').pluck().get() as string) as Record<string, unknown>;
    expect(card.models).toEqual({ model: 'gpt-4o-mini', endpoint: 'default', base_url: second.baseUrl });
    expect(card.endpoints).toEqual([
      { base_url: first.baseUrl, calls: 4, ok: 2, dialogues: 1 },
      { base_url: second.baseUrl, calls: 2, ok: 2, dialogues: 1 },
    ]);

    const show = await cli(['runs', 'show', 'moved'], env);
    expect(show.stdout).toContain(`- ${first.baseUrl}: 4 call(s), 2 ok, answering 1 dialogue(s)\n- ${second.baseUrl}: 2 call(s), 2 ok, answering 1 dialogue(s)`);
    const shown = await cli(['calls', 'show', '2'], env);
    expect(shown.stdout).toMatch(new RegExp(`== call 3: turn 0, character 1, attempt 1, network_error.*\\nendpoint ${first.baseUrl}\\n`));
    expect(shown.stdout).toMatch(new RegExp(`== call 5: turn 0, character 1, attempt 3, ok .*\\nendpoint ${second.baseUrl}\\n`));
    const json = JSON.parse((await cli(['calls', 'show', '2', '--json'], env)).stdout) as { id: number; base_url: string }[];
    expect(json.map((c) => [c.id, c.base_url])).toEqual([
      [3, first.baseUrl],
      [4, first.baseUrl],
      [5, second.baseUrl],
      [6, second.baseUrl],
    ]);

    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = await researcher.agent.get('/console/runs/1');
    expect(page.status).toBe(200);
    expect(page.text).toContain(`${first.baseUrl}: 4 call(s), 2 ok, answering 1 dialogue(s)`);
    expect(page.text).toContain(`${second.baseUrl}: 2 call(s), 2 ok, answering 1 dialogue(s)`);
    // Keys are never stored with the address.
    expect(JSON.stringify(t.db.prepare('SELECT * FROM llm_calls').all())).not.toContain('sk-provenance');
  });

  it('evaluate --resume, after the judge endpoint was unreachable and OPENAI_BASE_URL was fixed, records each judge call and the evaluation at its address', async () => {
    const { db, path } = createTestDb();
    const scenario = makeScenario(db);
    const runId = makeRun(db, { name: 'judged' });
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT' });
    const dead = await startFakeLlm();
    const live = await startFakeLlm();
    fakes.push(live);
    await dead.close();
    const env = { DATABASE_PATH: path, OPENAI_API_KEY: 'sk-provenance', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    const failed = await cli(['evaluate', '--run', 'judged', '--judge-model', 'judge-x', '--name', 'e1', '--max-retries', '0'], { ...env, OPENAI_BASE_URL: dead.baseUrl });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`cannot reach the endpoint "default" at ${dead.baseUrl} (ECONNREFUSED)`);
    const resumed = await cli(['evaluate', '--resume', 'e1'], { ...env, OPENAI_BASE_URL: live.baseUrl });
    expect(resumed.code).toBe(0);
    expect(db.prepare('SELECT attempt, status, base_url FROM evaluation_calls ORDER BY id').all()).toEqual([
      { attempt: 1, status: 'network_error', base_url: dead.baseUrl },
      { attempt: 2, status: 'ok', base_url: live.baseUrl },
    ]);
    expect(db.prepare('SELECT state, base_url FROM evaluations').get()).toEqual({ state: 'complete', base_url: live.baseUrl });
  });

  it('endpointAddress, for a base URL carrying credentials or a query, keeps only the address', () => {
    expect(endpointAddress('https://user:sk-secret@llm.example.org/v1?api-key=sk-other#x')).toBe('https://llm.example.org/v1');
    expect(endpointAddress('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000/v1');
    expect(endpointAddress('http://localhost:11434')).toBe('http://localhost:11434');
  });
});
