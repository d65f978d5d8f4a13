import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

// Issue 16, point 1: a batch file's `questions` go through the batch schema like every other setting.

const M = 'gpt-4o-mini';

function setUp(questions: unknown) {
  const { db, path } = createTestDb();
  const runId = makeRun(db, { name: 'questions-run', model: M });
  const scenario = makeScenario(db);
  makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: M });
  makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: M });
  const file = join(tempDir(), 'batch.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'Two questions',
      runs: ['questions-run'],
      comparisons: [[`SCRIPT:${M}`, `AGENTS:${M}`]],
      provider: { kind: 'link' },
      consent: 'You agree to take part.',
      instructions: 'Answer both questions.',
      questions,
    }),
  );
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' }, file };
}

describe('simarena batches create with questions', () => {
  it('batches create --from FILE.json with two questions stores them, the first also as the question, tie and reason', async () => {
    const questions = [
      { id: 'natural', text: 'Which conversation sounds more natural?', allowTie: true, reason: 'required' },
      { id: 'goals', text: 'Which conversation better pursues its goals?' },
    ];
    const { db, env, file } = setUp(questions);
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const settings = JSON.parse(db.prepare('SELECT settings FROM batches').pluck().get() as string) as Record<string, unknown>;
    expect(settings.questions).toEqual([questions[0], { ...questions[1], allowTie: false, reason: 'optional' }]);
    expect(settings).toMatchObject({ question: 'Which conversation sounds more natural?', allowTie: true, reason: 'required' });
  });

  it('batches create --from FILE.json with repeated question ids or seven questions refuses with one line naming the problem and stores nothing', async () => {
    const repeated = setUp([
      { id: 'natural', text: 'Which conversation sounds more natural?' },
      { id: 'natural', text: 'Which conversation better pursues its goals?' },
    ]);
    const first = await cli(['batches', 'create', '--from', repeated.file], repeated.env);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('question ids must be distinct');
    expect(repeated.db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
    const seven = setUp(Array.from({ length: 7 }, (_, i) => ({ id: `q${i}`, text: `Question number ${i}?` })));
    const second = await cli(['batches', 'create', '--from', seven.file], seven.env);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('at most 6 questions');
  });
});
