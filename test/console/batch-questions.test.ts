// Issue 16, point 1 (console): a researcher adds several questions to a batch in the batch form (fixed rows, blank
// ones ignored), validated by the batch schema, and the batch page lists them.
import { describe, expect, it } from 'vitest';
import { makeBatchWithJudgments, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';

function seedRun(db: ReturnType<typeof buildTestApp>['db']): void {
  const runId = makeRun(db, { name: 'questions-run', modes: ['SCRIPT', 'AGENTS'] });
  for (let i = 0; i < 2; i++) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(4, 8) });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(4, 20) });
  }
}

const form = (overrides: Record<string, string | string[]> = {}) => ({
  name: 'Two questions',
  runs: 'questions-run',
  comparisons: 'SCRIPT:test-model vs AGENTS:test-model',
  scenarios: 'all',
  judgmentsPerPair: '3',
  question: 'Which one sounds more natural?',
  questionId: 'natural',
  context: 'scenario+profiles+goals',
  reason: 'optional',
  perRaterCap: '10',
  leaseMinutes: '20',
  providerKind: 'link',
  estimatedMinutes: '10',
  consent: 'You agree to take part.',
  instructions: 'Choose the more natural conversation.',
  ...overrides,
});

type Stored = { question: string; allowTie: boolean; reason: string; questions: { id: string; text: string; allowTie: boolean; reason: string }[] | null };

describe('several questions in the console batch form', () => {
  it('POST /console/batches/new, with question rows 3 and 5 filled and row 2 left blank, stores the questions in order after the first, and the batch page lists them', async () => {
    const t = buildTestApp();
    seedRun(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    const page = await admin.agent.get('/console/batches/new').expect(200);
    for (const n of [2, 3, 4, 5, 6]) expect(page.text).toContain(`name="q${n}Text"`);
    expect(page.text).toContain('name="questionId" value="natural"');

    const created = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({
        _csrf: admin.csrf,
        intent: 'create',
        ...form({
          q3Id: 'goals',
          q3Text: 'Which conversation better pursues its goals?',
          q3AllowTie: 'on',
          q3Reason: 'off',
          q5Id: 'real',
          q5Text: 'Which character behaves more like a real person?',
          q5Reason: 'required',
        }),
      });
    expect(created.status).toBe(303);
    const stored = JSON.parse(t.db.prepare('SELECT settings FROM batches').pluck().get() as string) as Stored;
    expect(stored.questions).toEqual([
      { id: 'natural', text: 'Which one sounds more natural?', allowTie: false, reason: 'optional' },
      { id: 'goals', text: 'Which conversation better pursues its goals?', allowTie: true, reason: 'off' },
      { id: 'real', text: 'Which character behaves more like a real person?', allowTie: false, reason: 'required' },
    ]);
    expect(stored).toMatchObject({ question: 'Which one sounds more natural?', allowTie: false, reason: 'optional' });
    const batchPage = await admin.agent.get(String(created.headers.location)).expect(200);
    expect(batchPage.text).toContain('<code>goals</code>: Which conversation better pursues its goals?');
    expect(batchPage.text).toContain('<code>real</code>: Which character behaves more like a real person?');
    // Editing shows the rows filled, closed up in order.
    const id = t.db.prepare('SELECT id FROM batches').pluck().get() as number;
    const edit = await admin.agent.get(`/console/batches/${id}/edit`).expect(200);
    expect(edit.text).toMatch(/name="q2Id" value="goals"/);
    expect(edit.text).toMatch(/name="q3Id" value="real"/);
  });

  it('POST /console/batches/new, with a single question of the default id, stores the single question as before (no questions list)', async () => {
    const t = buildTestApp();
    seedRun(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    await admin.agent.post('/console/batches/new').type('form').send({ _csrf: admin.csrf, intent: 'create', ...form({ allowTie: 'on' }) }).expect(303);
    const stored = JSON.parse(t.db.prepare('SELECT settings FROM batches').pluck().get() as string) as Stored;
    expect(stored).toMatchObject({ question: 'Which one sounds more natural?', allowTie: true, questions: null });
  });

  it('POST /console/batches/new, with a repeated question id, a bad id or a question row without text, answers 400 naming the row and keeps what was typed', async () => {
    const t = buildTestApp();
    seedRun(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    const repeated = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'create', ...form({ q2Id: 'natural', q2Text: 'Which is more believable?' }) });
    expect(repeated.status).toBe(400);
    expect(repeated.text).toContain('question ids must be distinct');
    expect(repeated.text).toContain('Which is more believable?');
    const bad = await admin.agent
      .post('/console/batches/new')
      .type('form')
      .send({ _csrf: admin.csrf, intent: 'create', ...form({ q4Id: 'Bad Id', q4Text: 'Which is more believable?', q6Id: 'empty' }) });
    expect(bad.status).toBe(400);
    // Rows are closed up: row 4 is now question 2, row 6 question 3.
    expect(bad.text).toMatch(/id="q2Id-error">must be a short id/);
    expect(bad.text).toMatch(/id="q3Text-error">/);
    expect(bad.text).toContain('value="Bad Id"');
    expect(t.db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);
  });

  it('POST /console/batches/:id/edit, once judgments exist in a two-question batch, refuses a changed second question (frozen) and saves a changed per-rater cap', async () => {
    const t = buildTestApp();
    const questions = [
      { id: 'natural', text: 'Which one sounds more natural?', allowTie: false, reason: 'optional' as const },
      { id: 'goals', text: 'Which one better pursues its goals?', allowTie: true, reason: 'off' as const },
    ];
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b']], settings: { questions } });
    const admin = await signIn(t.app, t.db, 'admin');
    const edit = await admin.agent.get(`/console/batches/${batch.batchId}/edit`).expect(200);
    expect(edit.text).toMatch(/name="q2Text" rows="2" readonly/);
    const current = JSON.parse(t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(batch.batchId) as string) as { name: string; runs: string[] };
    const base = {
      _csrf: admin.csrf,
      name: current.name,
      runs: current.runs,
      comparisons: 'SCRIPT:test-model vs AGENTS:test-model',
      scenarios: 'all',
      question: 'Which one sounds more natural?',
      questionId: 'natural',
      reason: 'optional',
      questionList: 'on',
      q2Id: 'goals',
      q2Text: 'Which one better pursues its goals?',
      q2AllowTie: 'on',
      q2Reason: 'off',
    };
    const frozen = await admin.agent.post(`/console/batches/${batch.batchId}/edit`).type('form').send({ ...base, q2Text: 'Which one is more believable?' });
    expect(frozen.status).toBe(409);
    expect(frozen.text).toContain('frozen: questions');
    await admin.agent.post(`/console/batches/${batch.batchId}/edit`).type('form').send({ ...base, perRaterCap: '25' }).expect(303);
    const after = JSON.parse(t.db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(batch.batchId) as string) as Stored & { perRaterCap: number };
    expect(after.perRaterCap).toBe(25);
    expect(after.questions).toEqual(questions);
  });
});
