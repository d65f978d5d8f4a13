import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

// Judge calls go through generation's model-call runner, with its one refusal rule: an HTTP 400 stops everything only
// when it is about the response format; any other (a dialogue too long for the judge) fails that one item.

const fakes: FakeLlm[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe('judge refusals', () => {
  it('evaluate, when the judge endpoint refuses one dialogue with an HTTP 400 that is not about the format, fails that dialogue and scores the rest', async () => {
    const { db, path } = createTestDb();
    const scenario = makeScenario(db);
    const runId = makeRun(db, { name: 'long' });
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT' });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS' });
    const judge = await startFakeLlm();
    fakes.push(judge);
    judge.inject({ status: 400, json: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error' } } });
    const env = { DATABASE_PATH: path, OPENAI_BASE_URL: judge.baseUrl, OPENAI_API_KEY: 'sk-x', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    const result = await cli(['evaluate', '--run', 'long', '--judge-model', 'judge-x', '--name', 'e400', '--concurrency', '1'], env);
    expect(result.stderr).not.toContain('response format');
    expect(db.prepare('SELECT state, error FROM evaluations').get()).toEqual({ state: 'complete', error: null });
    expect(db.prepare('SELECT item, status, http_status FROM evaluation_calls ORDER BY id').all()).toEqual([
      { item: 'dialogue:1', status: 'http_error', http_status: 400 },
      { item: 'dialogue:2', status: 'ok', http_status: 200 },
    ]);
    expect(db.prepare('SELECT DISTINCT dialogue_id FROM episode_scores').pluck().all()).toEqual([2]);
  });

});
