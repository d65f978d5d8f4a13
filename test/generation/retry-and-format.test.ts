import { afterEach, describe, expect, it } from 'vitest';
import { createRun } from '../../src/generation/create-run.js';
import { listRunDialogues, listTurns } from '../../src/generation/dialogue.queries.js';
import { executeRun } from '../../src/generation/execute-run.js';
import { parseRetryAfter } from '../../src/generation/llm-client.js';
import { retryDelayMs } from '../../src/generation/retry-delay.js';
import { type FakeLlm, callKind, startFakeLlm } from '../helpers/fake-llm.js';
import { createTestDb } from '../helpers/test-db.js';
import { fastBackoff, installTestLibrary, llmFor } from './generation-fixtures.js';

const now = new Date('2026-03-01T12:00:00.000Z');
let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('retryDelayMs and Retry-After', () => {
  it('retryDelayMs, without Retry-After, doubles per retry with jitter between half and all of the step, capped', () => {
    const backoff = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, null, () => 0, backoff))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, null, () => 0.999999, backoff))).toEqual([100, 200, 400, 800, 1000]);
  });

  it('retryDelayMs, with a Retry-After, waits what the server asked', () => {
    expect(retryDelayMs(1, 2500, () => 0.5, { baseMs: 100, maxMs: 1000 })).toBe(2500);
    expect(parseRetryAfter('3', 0)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:05 GMT', 1000)).toBe(4000);
    expect(parseRetryAfter('soon', 0)).toBeNull();
  });

  it('executeRun, on a 429 with Retry-After from the server, waits what the server asked, not its own backoff', async () => {
    const { db } = createTestDb();
    installTestLibrary(db);
    fake = await startFakeLlm();
    fake.inject({ status: 429, headers: { 'retry-after': '1' } });
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl }, now);
    const retries: { status: string; delayMs: number }[] = [];
    const outcome = await executeRun(db, runId, { llm: llmFor(fake), backoff: { baseMs: 1, maxMs: 1000 }, onRetry: (r) => retries.push(r) });
    expect(outcome.state).toBe('complete');
    expect(retries.map((r) => [r.status, r.delayMs])).toEqual([['HTTP 429', 1000]]);
    const [first, second] = fake.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990);
  });
});

describe('executeRun, response formats', () => {
  it('executeRun, with response format json_object, sends json_object and accepts the same answers', async () => {
    const { db } = createTestDb();
    installTestLibrary(db);
    fake = await startFakeLlm();
    const runId = createRun(db, { scenarios: 'all', modes: ['script', 'agents'], model: 'm', baseUrl: fake.baseUrl, responseFormat: 'json_object', maxTurns: 2 }, now);
    const outcome = await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    expect(outcome).toMatchObject({ state: 'complete', complete: 2 });
    expect(fake.requests.map((r) => r.body.response_format)).toEqual([{ type: 'json_object' }, { type: 'json_object' }, { type: 'json_object' }]);
  });

  it('executeRun, with json_schema, asks for the script with the two character names as the only speakers', async () => {
    const { db } = createTestDb();
    installTestLibrary(db);
    fake = await startFakeLlm();
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl }, now);
    await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    const format = fake.requests.find((r) => callKind(r) === 'script')?.body.response_format;
    expect(format?.json_schema?.schema).toMatchObject({
      properties: { turns: { items: { properties: { speaker: { enum: ['Ana Silva', 'Ben Okoro'] } } } } },
      additionalProperties: false,
    });
    const [d] = listRunDialogues(db, runId);
    expect(listTurns(db, d?.id ?? 0).map((t) => t.speaker)).toEqual([1, 2, 1, 2]);
  });

  it('executeRun, when a SCRIPT names a speaker outside the cast, retries and records the invalid attempt', async () => {
    const { db } = createTestDb();
    installTestLibrary(db);
    fake = await startFakeLlm();
    fake.inject({ content: JSON.stringify({ turns: [{ speaker: 'Narrator', action: 'speak', text: 'Once upon a time' }] }) });
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl }, now);
    await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    expect(db.prepare('SELECT attempt, status, error FROM llm_calls ORDER BY attempt').all()).toEqual([
      { attempt: 1, status: 'invalid', error: expect.stringContaining('turns.0.speaker') },
      { attempt: 2, status: 'ok', error: null },
    ]);
    expect(listRunDialogues(db, runId)[0]?.state).toBe('complete');
  });
});
