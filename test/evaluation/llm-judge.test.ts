import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { type FakeLlm, defaultResponder, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { makeBatch, makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(options: { models?: string[] } = {}) {
  const { db, path } = createTestDb();
  // Three pairs, three raters each: humans prefer a (SCRIPT) on pairs 1 and 2, b on pair 3.
  const batch = makeBatchWithJudgments(db, {
    votes: [
      ['a', 'a', 'b'],
      ['a', 'a', 'a'],
      ['b', 'b', 'a'],
    ],
    settings: { name: 'study-1', question: 'Which one sounds more like a natural interaction that two people would have in this scenario?' },
  });
  fake = await startFakeLlm({ models: options.models });
  const env = { DATABASE_PATH: path, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
  return { db, env, fake, batch };
}

const count = (db: Db, table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('simarena llm-judge', () => {
  it('llm-judge --batch ID --judge-model M asks each pair in both orders, blinded, and stores the answers apart from human judgments', async () => {
    const { db, env, fake, batch } = await setup();
    const humanBefore = db.prepare('SELECT * FROM judgments ORDER BY id').all();
    const result = await cli(['llm-judge', '--batch', 'study-1', '--judge-model', 'judge-x', '--name', 'j1'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Evaluation j1 \(id 1\): complete\. 6\/6 pair orders answered, 0 failed this session; 6 calls/);
    expect(fake.requests).toHaveLength(6);
    for (const request of fake.requests) {
      const prompt = promptOf(request);
      // The batch's own question, and nothing that names a mode, model, run, batch or pair.
      expect(prompt).toContain('Question: Which one sounds more like a natural interaction that two people would have in this scenario?');
      expect(prompt).not.toMatch(/SCRIPT|AGENTS|MINDREADERS|test-model|study-1|pair/i);
      expect(request.body.response_format?.json_schema?.name).toBe('pairwise_judgment');
    }
    // Dialogue a has 16 words a turn, b 30: in order "b first", b's long turns come in Interaction 1.
    const orders = fake.requests.map((r) => /Interaction 1:\n[^\n]*w0_29/.test(promptOf(r)));
    expect(orders.filter(Boolean)).toHaveLength(3);
    // The fake always answers "1": the first shown wins, so each pair gets one a and one b.
    const rows = db.prepare('SELECT pair_id, left_side, choice, winner FROM llm_judgments ORDER BY pair_id, left_side').all();
    expect(rows).toEqual(
      batch.pairIds.flatMap((pairId) => [
        { pair_id: pairId, left_side: 'a', choice: 'left', winner: 'a' },
        { pair_id: pairId, left_side: 'b', choice: 'left', winner: 'b' },
      ]),
    );
    // Human judgments are untouched: the model is never a rater.
    expect(db.prepare('SELECT * FROM judgments ORDER BY id').all()).toEqual(humanBefore);
    expect(count(db, 'raters')).toBe(3);
    expect(db.prepare('SELECT kind, batch_id, run_id FROM evaluations').get()).toEqual({ kind: 'pairwise', batch_id: batch.batchId, run_id: null });
  });

  it('llm-judge --resume J, after a stop, asks only the orders not yet answered', async () => {
    const { db, env, fake } = await setup();
    fake.setResponder((request, index) => (fake!.requests.length <= 4 ? defaultResponder(request, index) : { status: 503 }));
    const first = await cli(['llm-judge', '--batch', 'study-1', '--judge-model', 'judge-x', '--name', 'j2', '--concurrency', '1', '--max-retries', '0'], env);
    expect(first.code).toBe(1);
    expect(count(db, 'llm_judgments')).toBe(4);
    fake.setResponder(defaultResponder);
    const before = fake.requests.length;
    const resumed = await cli(['llm-judge', '--resume', 'j2'], env);
    expect(resumed.code).toBe(0);
    expect(fake.requests.length - before).toBe(2);
    expect(count(db, 'llm_judgments')).toBe(6);
  });
});

describe('simarena llm-judge, bad input', () => {
  it('llm-judge --batch with an unknown batch says so in one line and stores nothing', async () => {
    const { db, env, fake } = await setup();
    const result = await cli(['llm-judge', '--batch', 'nope', '--judge-model', 'judge-x'], env);
    expect(result).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "nope" (see "simarena batches list").' });
    expect([count(db, 'evaluations'), fake.requests.length]).toEqual([0, 0]);
  });

  it('llm-judge --batch, on a batch without pairs, says so in one line and stores nothing', async () => {
    const { db, env } = await setup();
    makeBatch(db, { settings: { name: 'empty-batch' } });
    const result = await cli(['llm-judge', '--batch', 'empty-batch', '--judge-model', 'judge-x'], env);
    expect(result).toMatchObject({ code: 1, stderr: 'error: batch "empty-batch" has no pairs to judge' });
    expect(count(db, 'evaluations')).toBe(0);
  });

  it('llm-judge --judge-model, when the endpoint does not know the model (404), says so in one line and stores nothing', async () => {
    const { db, env } = await setup({ models: ['gpt-4o'] });
    const result = await cli(['llm-judge', '--batch', 'study-1', '--judge-model', 'nonexistent'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: .* does not know judge model "nonexistent" \(HTTP 404\).*; nothing was stored$/);
    expect([count(db, 'evaluations'), count(db, 'evaluation_calls'), count(db, 'llm_judgments')]).toEqual([0, 0, 0]);
  });
});
