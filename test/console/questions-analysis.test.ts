// Issue 16: the console's analysis page and the API's analysis and judgments, for a batch with two questions whose
// answers disagree (test/analysis/two-question-fixture.ts). Expected counts are tallied here from the seeded votes.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { GOALS, makeTwoQuestionBatch, NATURAL, QUESTIONS } from '../analysis/two-question-fixture.js';

type Vote = 'a' | 'b' | 'tie' | null;
const count = (votes: Vote[][], v: 'a' | 'b' | 'tie') => votes.flat().filter((x) => x === v).length;
const judged = (votes: Vote[][]) => votes.flat().filter((x) => x !== null).length;

describe('console analysis with two questions', () => {
  it('GET /console/batches/:id/analysis, for a two-question batch, shows the first question with a switcher naming both; ?question= shows the other', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = await researcher.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200);
    expect(page.text).toContain('data-testid="question-switcher"');
    expect(page.text).toContain(QUESTIONS[0]!.text);
    expect(page.text).toContain(QUESTIONS[1]!.text);
    expect(page.text).toMatch(/data-testid="question-shown">Question 1 \(natural\)/);
    expect(page.text).toContain('href="?question=goals"');
    expect(page.text).toContain('data-testid="table-across-questions"');
    expect(page.text).toContain('<option value="goals">goals</option>');
    // The win-rate table row: a, b, n, wins a, wins b, ties.
    const row = (votes: Vote[][]) => `<td>${judged(votes)}</td><td>${count(votes, 'a')}</td><td>${count(votes, 'b')}</td><td>${count(votes, 'tie')}</td>`;
    expect(page.text).toContain(row(NATURAL));
    expect(page.text).toContain(`${judged(NATURAL)} judgments on 4 pairs by 3 raters`);
    const second = await researcher.agent.get(`/console/batches/${made.batchId}/analysis?question=goals`).expect(200);
    expect(second.text).toMatch(/data-testid="question-shown">Question 2 \(goals\)/);
    expect(second.text).toContain(row(GOALS));
    expect(second.text).not.toContain(row(NATURAL));
    expect(second.text).toContain(`/plots/forest.svg?question=goals`);
    // Rater quality is shown on the first question only.
    expect(page.text).toContain('id="raters"');
    expect(second.text).not.toContain('id="raters"');
    const plot = await researcher.agent.get(`/console/batches/${made.batchId}/plots/win-rate.svg?question=goals`).expect(200);
    expect(String(plot.body)).toContain('<svg');
  });

  it('GET /console/batches/:id/analysis with an unknown question answers 400 naming the batch\'s questions; a one-question batch shows no switcher', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const bad = await researcher.agent.get(`/console/batches/${made.batchId}/analysis?question=believable`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('its questions are: natural, goals');
    expect(bad.text).not.toMatch(/\bat [\w.]+ \(/);
    const badPlot = await researcher.agent.get(`/console/batches/${made.batchId}/plots/forest.svg?question=believable`);
    expect(badPlot.status).toBe(400);
    const one = makeBatchWithJudgments(t.db, { votes: NATURAL });
    const plain = await researcher.agent.get(`/console/batches/${one.batchId}/analysis`).expect(200);
    expect(plain.text).not.toContain('question-switcher');
    expect(plain.text).not.toContain('across-questions');
    expect(plain.text).not.toContain('id="export-question"');
  });
});

describe('API analysis and judgments with two questions', () => {
  it('GET /api/batches/:id/analysis, for a two-question batch, gives the first question at the top and both in questions; ?question=goals gives the second alone', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const token = tokenFor(t.db, (await signIn(t.app, t.db, 'researcher')).email);
    const whole = await request(t.app).get(`/api/batches/${made.batchId}/analysis`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(whole.body.comparisons[0]).toMatchObject({ n: judged(NATURAL), wins_a: count(NATURAL, 'a'), wins_b: count(NATURAL, 'b') });
    expect(whole.body.questions.map((q: { id: string }) => q.id)).toEqual(['natural', 'goals']);
    const goals = await request(t.app).get(`/api/batches/${made.batchId}/analysis?question=goals`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(goals.body.comparisons[0]).toMatchObject({ n: judged(GOALS), wins_a: count(GOALS, 'a'), wins_b: count(GOALS, 'b'), ties: count(GOALS, 'tie') });
    expect(goals.body.question).toMatchObject({ id: 'goals', text: QUESTIONS[1]!.text });
    expect(goals.body.questions).toBeUndefined();
    const bad = await request(t.app).get(`/api/batches/${made.batchId}/analysis?question=nope`).set('Authorization', `Bearer ${token}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain(`batch ${made.batchId} has no question "nope"; its questions are: natural, goals`);
  });

  it('GET /api/batches/:id/judgments, for a two-question batch, names each record\'s question; ?question= keeps one question\'s records', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const token = tokenFor(t.db, (await signIn(t.app, t.db, 'researcher')).email);
    const all = await request(t.app).get(`/api/batches/${made.batchId}/judgments?per_page=500`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(all.body.pagination.total).toBe(judged(NATURAL) + judged(GOALS));
    const byQuestion = (data: { question_id: string; winner: string }[], q: string) => data.filter((d) => d.question_id === q);
    expect(byQuestion(all.body.data, 'natural')).toHaveLength(judged(NATURAL));
    expect(byQuestion(all.body.data, 'goals').filter((d) => d.winner === 'tie')).toHaveLength(count(GOALS, 'tie'));
    const goals = await request(t.app).get(`/api/batches/${made.batchId}/judgments?question=goals&per_page=500`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(goals.body.pagination.total).toBe(judged(GOALS));
    expect(goals.body.data.every((d: { question_id: string }) => d.question_id === 'goals')).toBe(true);
    expect(goals.body.data.filter((d: { winner: string }) => d.winner === 'model_a')).toHaveLength(count(GOALS, 'a'));
    const bad = await request(t.app).get(`/api/batches/${made.batchId}/judgments?question=nope`).set('Authorization', `Bearer ${token}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('its questions are: natural, goals');
  });

  it('GET /api/batches/:id/export?format=arena&question=goals, for a two-question batch, streams that question\'s battles; an unknown question is a 400', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const token = tokenFor(t.db, (await signIn(t.app, t.db, 'researcher')).email);
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=arena&question=goals`).set('Authorization', `Bearer ${token}`).expect(200);
    const battles = JSON.parse(res.text) as { winner: string }[];
    expect(battles).toHaveLength(judged(GOALS));
    expect(battles.filter((b) => b.winner === 'tie')).toHaveLength(count(GOALS, 'tie'));
    const meta = await request(t.app).get(`/api/batches/${made.batchId}/export/meta?format=arena&question=goals`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(meta.body.question).toEqual({ id: 'goals', text: QUESTIONS[1]!.text });
    // The console's download form sends an empty question for "the default": the first question for arena.
    const blank = await request(t.app).get(`/api/batches/${made.batchId}/export?format=arena&question=`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(JSON.parse(blank.text)).toHaveLength(judged(NATURAL));
    const bad = await request(t.app).get(`/api/batches/${made.batchId}/export?format=arena&question=nope`).set('Authorization', `Bearer ${token}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('its questions are: natural, goals');
  });
});
