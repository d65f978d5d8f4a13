// Issue 11, point 4: generation fills its holes. Failed dialogues generated again, a changed seed after an invalid
// answer, a log line per retry, the minimum of spoken turns and the SCRIPT cut recorded in meta.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listDialogueCalls } from '../../src/generation/call.queries.js';
import { createRun } from '../../src/generation/create-run.js';
import { listRunDialogues, listTurns } from '../../src/generation/dialogue.queries.js';
import { type RetryNotice, executeRun, requestSeed } from '../../src/generation/execute-run.js';
import type { ChatRequest } from '../../src/generation/llm-client.js';
import { type FakeLlm, type FakeRequest, callKind, defaultResponder, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { fastBackoff, installTestLibrary, llmFor } from './generation-fixtures.js';

const now = new Date('2026-03-01T12:00:00.000Z');
let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup() {
  const { db, path } = createTestDb();
  installTestLibrary(db);
  fake = await startFakeLlm();
  const env = { DATABASE_PATH: path, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
  return { db, fake, env };
}

const names = (r: FakeRequest) => {
  const m = /Participants: (.+) and (.+)/.exec(promptOf(r));
  return [m?.[1]?.trim() ?? 'A', m?.[2]?.trim() ?? 'B'] as const;
};
const script = (r: FakeRequest, actions: string[]) => {
  const [a, b] = names(r);
  return { content: JSON.stringify({ turns: actions.map((action, i) => ({ speaker: i % 2 === 0 ? a : b, action, text: action === 'leave' ? '' : `line ${i}` })) }) };
};
const sentSeed = (request: string) => (JSON.parse(request) as ChatRequest).seed;

describe('a retry after an invalid answer', () => {
  it('executeRun, after an invalid answer, sends the next request with a changed seed (stored) and a seeded server then answers validly', async () => {
    const { db, fake } = await setup();
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl, seed: 11 }, now);
    const [dialogue] = listRunDialogues(db, runId);
    const firstSeed = dialogue?.seed ?? null;
    // A seeded server: the same request and seed always get the same answer; this seed gets an invalid one.
    fake.setResponder((r) => (r.body.seed === firstSeed ? { content: 'not json at all' } : defaultResponder(r, 0)));
    const notices: RetryNotice[] = [];
    const outcome = await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff, onRetry: (n) => notices.push(n) });
    expect(outcome).toMatchObject({ state: 'complete', complete: 1, failed: 0 });
    const calls = listDialogueCalls(db, dialogue?.id ?? 0);
    expect(calls.map((c) => [c.attempt, c.status])).toEqual([[1, 'invalid'], [2, 'ok']]);
    expect(sentSeed(calls[0]?.request ?? '{}')).toBe(firstSeed);
    const retried = sentSeed(calls[1]?.request ?? '{}');
    expect(retried).not.toBe(firstSeed);
    expect(retried).toBe(requestSeed(firstSeed, 1, 1));
    expect(notices).toEqual([expect.objectContaining({ status: 'invalid', attempt: 1, nextSeed: retried, final: false })]);
  });

  it('simarena generate, on invalid answers, prints one line per invalid answer with the new seed, and one when the dialogue gives up', async () => {
    const { db, fake, env } = await setup();
    fake.setResponder(() => ({ content: '{"turns": "nope"}' }));
    const result = await cli(['generate', '--scenarios', 'all', '--modes', 'script', '--model', 'm', '--run-name', 'bad', '--max-invalid-retries', '1'], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n').filter((l) => l.includes('invalid answer'));
    expect(lines).toHaveLength(2);
    const seeds = (db.prepare('SELECT request FROM llm_calls ORDER BY attempt').pluck().all() as string[]).map(sentSeed);
    expect(lines[0]).toBe(`[bad] dialogue 1 turn 0: invalid answer (turns: Invalid input: expected array, received string); retrying with seed ${seeds[1]}`);
    expect(lines[1]).toBe('[bad] dialogue 1 turn 0: invalid answer (turns: Invalid input: expected array, received string); no retries left, the dialogue fails');
    expect(result.stdout).toContain('0/1 dialogues complete, 1 failed');
  });
});

describe('simarena generate --resume RUN --retry-failed', () => {
  it('generate --resume --retry-failed, after a dialogue failed, generates it again with new calls against the fake server; the earlier calls and the failure stay on record', async () => {
    const { db, fake, env } = await setup();
    let serverFixed = false;
    fake.setResponder((r) => (serverFixed ? defaultResponder(r, 0) : { content: 'garbage' }));
    const first = await cli(['generate', '--scenarios', 'all', '--modes', 'script,agents', '--model', 'm', '--run-name', 'holes', '--max-invalid-retries', '0'], env);
    expect(first.code).toBe(0);
    expect(db.prepare("SELECT count(*) FROM dialogues WHERE state = 'failed'").pluck().get()).toBe(2);
    const plain = await cli(['generate', '--resume', 'holes'], env);
    expect(plain.stdout).toBe('Run holes (id 1) is already complete; 2 dialogue(s) failed: generate them again with simarena generate --resume holes --retry-failed.');

    serverFixed = true;
    const again = await cli(['generate', '--resume', 'holes', '--retry-failed'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Generating 2 failed dialogue(s) of run holes again (their earlier calls are kept).');
    expect(again.stdout).toContain('Run holes (id 1): complete. 2/2 dialogues complete, 0 failed');
    for (const d of listRunDialogues(db, 1)) {
      expect(d).toMatchObject({ state: 'complete', generation: 2, failure_reason: null });
      expect(JSON.parse(d.meta)).toMatchObject({ earlier_failures: [{ generation: 1, reason: expect.stringMatching(/^invalid model output after 1 attempt/) }] });
      const calls = listDialogueCalls(db, d.id);
      expect(calls.filter((c) => c.generation === 1).map((c) => c.status)).toEqual(['invalid']);
      expect(calls.filter((c) => c.generation === 2).every((c) => c.status === 'ok')).toBe(true);
      // The new generation sends its own seed, so a seeded server does not repeat the failed answer.
      const firstOfEach = [1, 2].map((g) => sentSeed(calls.find((c) => c.generation === g && c.turn_idx === 0)?.request ?? '{}'));
      expect(firstOfEach[0]).not.toBe(firstOfEach[1]);
      expect(listTurns(db, d.id).length).toBeGreaterThanOrEqual(4);
    }
    const card = JSON.parse(db.prepare('SELECT simulation_card FROM runs WHERE id = 1').pluck().get() as string) as { regenerated: unknown[]; counts: unknown };
    expect(card.counts).toMatchObject({ complete: 2, failed: 0 });
    expect(card.regenerated).toHaveLength(2);
    expect(card.regenerated[0]).toMatchObject({ generation: 2, state: 'complete', earlier_failures: [{ generation: 1 }] });
  });

  it('generate --retry-failed without --resume exits 1 with one line saying what it needs', async () => {
    const { env } = await setup();
    const result = await cli(['generate', '--retry-failed'], env);
    expect(result).toMatchObject({ code: 1, stderr: 'error: --retry-failed needs --resume RUN (the run whose failed dialogues to generate again)' });
  });
});

describe('the minimum of spoken turns and the SCRIPT cut', () => {
  it('executeRun, for a SCRIPT cut at its first leave below --min-spoken-turns, marks it failed with the reason and records the cut in meta', async () => {
    const { db, fake } = await setup();
    fake.setResponder((r) => (callKind(r) === 'script' ? script(r, ['leave', 'speak', 'speak', 'speak', 'speak']) : defaultResponder(r, 0)));
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl }, now);
    const outcome = await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    expect(outcome).toMatchObject({ state: 'complete', complete: 0, failed: 1 });
    const [d] = listRunDialogues(db, runId);
    expect(d).toMatchObject({ state: 'failed', failure_reason: "only 0 spoken turn(s), fewer than the minimum of 4 set for this run" });
    expect(JSON.parse(d?.meta ?? '{}')).toEqual({ script_cut: { original_turns: 5, kept_turns: 1, cut_at: 'leave' } });
    // Kept for inspection, but a failed dialogue never enters a batch.
    expect(listTurns(db, d?.id ?? 0).map((t) => t.action)).toEqual(['leave']);
  });

  it('executeRun, with --min-spoken-turns 2, completes a SCRIPT cut at a leave after two spoken turns and records the cut', async () => {
    const { db, fake } = await setup();
    fake.setResponder((r) => script(r, ['speak', 'non-verbal', 'leave', 'speak']));
    const runId = createRun(db, { scenarios: 'all', modes: ['script'], model: 'm', baseUrl: fake.baseUrl, minSpokenTurns: 2 }, now);
    await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    const [d] = listRunDialogues(db, runId);
    expect(d).toMatchObject({ state: 'complete', end_reason: 'left' });
    expect(JSON.parse(d?.meta ?? '{}')).toEqual({ script_cut: { original_turns: 4, kept_turns: 3, cut_at: 'leave' } });
  });

  it('executeRun, for an AGENTS dialogue left after three turns, fails it under the default minimum of 4 spoken turns', async () => {
    const { db, fake } = await setup();
    fake.setResponder((r) => ({ content: JSON.stringify(/You are at Turn #3\b/.test(promptOf(r)) ? { action: 'leave', text: '' } : { action: 'speak', text: 'hi' }) }));
    const runId = createRun(db, { scenarios: 'all', modes: ['agents'], model: 'm', baseUrl: fake.baseUrl }, now);
    await executeRun(db, runId, { llm: llmFor(fake), backoff: fastBackoff });
    const [d] = listRunDialogues(db, runId);
    expect(d).toMatchObject({ state: 'failed', end_reason: 'left', failure_reason: "only 3 spoken turn(s), fewer than the minimum of 4 set for this run" });
  });
});
