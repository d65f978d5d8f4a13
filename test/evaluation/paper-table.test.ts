import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { humanMajorities, judgeHumanAgreement, judgePositionBias, judgeVerdicts } from '../../src/analysis/llm-judge-agreement.js';
import { meanWithCi, type PaperDialogue, type PaperJudgment, type PaperScore, paperSection, SOTOPIA_SCORE_SCALE, tQuantile975 } from '../../src/analysis/paper-table.js';
import { type FakeLlm, answerFromSchema, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { makeBatchWithJudgments, makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { replaceScenarioFacts } from '../../src/scenarios/scenario.queries.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('LLM judge against the human majority', () => {
  it('judgeVerdicts and humanMajorities, on hand-made answers, give the winner when both orders agree and a tie otherwise', () => {
    const verdicts = judgeVerdicts([
      { pair: '1', leftSide: 'a', choice: 'left', winner: 'a' },
      { pair: '1', leftSide: 'b', choice: 'right', winner: 'a' },
      { pair: '2', leftSide: 'a', choice: 'left', winner: 'a' },
      { pair: '2', leftSide: 'b', choice: 'left', winner: 'b' },
    ]);
    expect([...verdicts]).toEqual([['1', 'a'], ['2', 'tie']]);
    const humans = humanMajorities([
      { pair: '1', winner: 'a' }, { pair: '1', winner: 'b' }, { pair: '1', winner: 'a' },
      { pair: '2', winner: 'a' }, { pair: '2', winner: 'b' },
    ]);
    expect([...humans]).toEqual([['1', 'a'], ['2', 'tie']]);
  });

  it('judgeHumanAgreement, on four pairs, gives percent and Cohen\u2019s kappa computed by hand, without and with ties', () => {
    const judge = new Map([['1', 'a'], ['2', 'a'], ['3', 'b'], ['4', 'tie']] as const);
    const humans = new Map([['1', 'a'], ['2', 'b'], ['3', 'b'], ['4', 'a']] as const);
    const result = judgeHumanAgreement(new Map(judge), new Map(humans));
    // Without ties: pairs 1-3; agree on 1 and 3: po = 2/3; judge a,a,b; humans a,b,b: pe = (2/3)(1/3) + (1/3)(2/3) = 4/9; kappa = (2/3 - 4/9)/(5/9) = 0.4.
    expect(result.without_ties.n).toBe(3);
    expect(result.without_ties.percent).toBeCloseTo(2 / 3, 12);
    expect(result.without_ties.cohen_kappa).toBeCloseTo(0.4, 12);
    // With ties: po = 2/4; judge a 2, b 1, tie 1; humans a 2, b 2: pe = (2/4)(2/4) + (1/4)(2/4) = 3/8; kappa = (1/2 - 3/8)/(5/8) = 0.2.
    expect(result.with_ties.percent).toBe(0.5);
    expect(result.with_ties.cohen_kappa).toBeCloseTo(0.2, 12);
    expect(result.convention).toMatch(/MT-Bench/);
  });

  it('judgePositionBias, when the judge always picks the first shown, reports a first-shown rate of 1 and no consistent pair', () => {
    const bias = judgePositionBias([
      { pair: '1', leftSide: 'a', choice: 'left', winner: 'a' },
      { pair: '1', leftSide: 'b', choice: 'left', winner: 'b' },
    ]);
    expect(bias).toMatchObject({ n: 2, first_shown_rate: 1, consistent_pairs: 0, pairs_both_orders: 2 / 2, consistency: 0 });
  });

  it('tQuantile975 and meanWithCi match Student\u2019s t tables', () => {
    expect(tQuantile975(3)).toBeCloseTo(3.182446, 5);
    expect(tQuantile975(11)).toBeCloseTo(2.200985, 3);
    expect(tQuantile975(30)).toBeCloseTo(2.042272, 4);
    expect(tQuantile975(1000)).toBeCloseTo(1.962339, 4);
    const m = meanWithCi([4, 6, 8]);
    // sd 2, n 3: half-width 4.302653 * 2 / sqrt(3).
    expect(m.mean).toBe(6);
    expect(m.ci95![1] - 6).toBeCloseTo((4.302653 * 2) / Math.sqrt(3), 5);
  });
});

describe('the interval of a 0-10 Sotopia-Eval score', () => {
  it('meanWithCi, with the scale, clips the t interval of scores near the top at 10 and keeps its lower bound', () => {
    // mean 9.25, sd 1.5, n 4: t(3) 3.182446, half-width 3.182446 * 1.5 / 2 = 2.3868345; unclipped [6.8631655, 11.6368345].
    const unclipped = meanWithCi([10, 10, 10, 7]);
    expect(unclipped.ci95![1]).toBeCloseTo(11.6368345, 5);
    const clipped = meanWithCi([10, 10, 10, 7], SOTOPIA_SCORE_SCALE);
    expect(clipped.mean).toBe(9.25);
    expect(clipped.ci95![0]).toBeCloseTo(6.8631655, 5);
    expect(clipped.ci95![1]).toBe(10);
    expect(meanWithCi([0, 0, 3], SOTOPIA_SCORE_SCALE).ci95![0]).toBe(0);
  });

  it('paperSection, for dialogues scored near 10, gives goal and believability intervals inside 0-10 and says in its notes that they are clipped', () => {
    const dialogues: PaperDialogue[] = [1, 2, 3, 4].map((id) => ({ id, mode: 'SCRIPT', model: 'm', endReason: null, condition: 'SCRIPT:m', category: 'mixed', turns: [] }));
    const scores: PaperScore[] = [10, 10, 10, 7].flatMap((score, i) =>
      ([1, 2] as const).flatMap((speaker) => ['goal', 'believability'].map((dimension) => ({ dialogueId: i + 1, speaker, dimension, score }))),
    );
    const section = paperSection({ of: 'run', dialogues, scores, deals: [], judgments: [], judge: null, judgeAnswers: [], evaluations: [{ name: 'ev', judge_model: 'j', prompt_version: 'v1' }] });
    const row = section.rows.find((r) => r.scope === 'all')!;
    expect(row.goal.ci95![1]).toBe(10);
    expect(row.believability.ci95![1]).toBe(10);
    expect(section.notes.join(' ')).toContain('Student t 95% interval over dialogues clipped to the 0-10 scale');
  });
});

describe('paperSection', () => {
  it('gives each condition its win rate in all judgments and in each category, ties and other comparisons left out, counted by hand', () => {
    const dialogue = (id: number, condition: string, category: string): PaperDialogue => {
      const [mode, model] = condition.split(':') as [string, string];
      return { id, mode, model, endReason: null, condition, category, turns: [{ speaker: 1, action: 'speak', text: 'one two three four' }] };
    };
    const verdicts = (conditionA: string, conditionB: string, category: string | null, winners: string): PaperJudgment[] =>
      [...winners].map((w, i) => ({ pair: `${category}-${i}`, conditionA, conditionB, category, winner: w === 'a' ? 'a' : w === 'b' ? 'b' : 'tie' }));
    const S = 'SCRIPT:m';
    const A = 'AGENTS:m';
    const M = 'MINDREADERS:m';
    const section = paperSection({
      judgments: [
        ...verdicts(S, A, 'cooperative', 'aabt'), // S 2 of 3, A 1 of 3
        ...verdicts(A, S, 'competitive', 'abbtt'), // A 1 of 3, S 2 of 3
        ...verdicts(S, M, 'competitive', 'bb'), // S 0 of 2, M 2 of 2
        ...verdicts(A, S, null, 'a'), // in no category: counted in all only
      ],
      judge: null,
      judgeAnswers: [],
      evaluations: [],
      dialogues: [dialogue(1, S, 'cooperative'), dialogue(2, S, 'competitive'), dialogue(3, A, 'cooperative'), dialogue(4, A, 'competitive'), dialogue(5, M, 'competitive')],
      scores: [],
      deals: [],
    });
    const rate = (condition: string, scope: string) => {
      const row = section.rows.find((r) => r.condition === condition && r.scope === scope);
      return row && [row.human_win_rate.n, row.human_win_rate.rate];
    };
    expect(rate(S, 'all')).toEqual([9, 4 / 9]);
    expect(rate(S, 'cooperative')).toEqual([3, 2 / 3]);
    expect(rate(S, 'competitive')).toEqual([5, 2 / 5]);
    expect(rate(A, 'all')).toEqual([7, 3 / 7]);
    expect(rate(A, 'cooperative')).toEqual([3, 1 / 3]);
    expect(rate(A, 'competitive')).toEqual([3, 1 / 3]);
    expect(rate(M, 'all')).toEqual([2, 1]);
    expect(rate(M, 'competitive')).toEqual([2, 1]);
    // A condition with no dialogue in a category has no row there.
    expect(rate(M, 'cooperative')).toBeUndefined();
    expect(section.rows.map((r) => r.words_per_turn)).toEqual(section.rows.map(() => 4));
  });
});

describe('analyze --batch with evaluations and an LLM judge', () => {
  it('analyze --batch ID, after evaluate and llm-judge, reports per condition the human and judge win rates, goal and believability with intervals, and the agreement', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatchWithJudgments(db, {
      category: 'cooperative',
      votes: [
        ['a', 'a', 'b'],
        ['a', 'a', 'a'],
        ['b', 'b', 'a'],
      ],
      settings: { name: 'paper-batch' },
    });
    // A judge that prefers the shorter interaction (a, SCRIPT: 16 words a turn) in either order, and scores goals by length.
    fake = await startFakeLlm({
      respond: (request) => {
        const prompt = promptOf(request);
        const format = request.body.response_format?.json_schema;
        if (format?.name === 'pairwise_judgment') {
          const longFirst = /Interaction 1:\n[^\n]*w0_29/.test(prompt);
          return { content: JSON.stringify({ reasoning: 'shorter turns read as more natural', answer: longFirst ? '2' : '1' }) };
        }
        const answer = answerFromSchema(format?.schema) as Record<string, Record<string, { score: number }>>;
        const long = prompt.includes('w0_29');
        for (const agent of ['agent_1_evaluation', 'agent_2_evaluation']) {
          answer[agent]!.goal!.score = long ? 3 : agent === 'agent_1_evaluation' ? 8 : 9;
          answer[agent]!.believability!.score = long ? 4 : 7;
        }
        return { content: JSON.stringify(answer) };
      },
    });
    const env = { DATABASE_PATH: path, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    // Before any model: the paper table is there, with notes saying what is missing.
    const before = JSON.parse((await cli(['analyze', '--batch', 'paper-batch', '--bootstrap', '0'], env)).stdout);
    expect(before.paper.llm_judge).toBeNull();
    expect(before.paper.notes.join(' ')).toContain('No episode evaluation covers these dialogues');

    expect((await cli(['evaluate', '--run', String(batch.runId), '--judge-model', 'judge-x', '--name', 'ev'], env)).code).toBe(0);
    expect((await cli(['llm-judge', '--batch', 'paper-batch', '--judge-model', 'judge-x', '--name', 'lj'], env)).code).toBe(0);
    const result = await cli(['analyze', '--batch', 'paper-batch', '--bootstrap', '0'], env);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    const row = (condition: string, scope: string) => report.paper.rows.find((r: { condition: string; scope: string }) => r.condition === condition && r.scope === scope);
    const script = row('SCRIPT:test-model', 'all');
    // Humans: a won 2 + 3 + 1 of 9 decisive judgments.
    expect(script.human_win_rate).toMatchObject({ n: 9, rate: 6 / 9 });
    expect(script.llm_judge_win_rate).toMatchObject({ n: 6, rate: 1 });
    expect(row('AGENTS:test-model', 'all').llm_judge_win_rate).toMatchObject({ n: 6, rate: 0 });
    // Goal per dialogue is the mean of its two characters: 8.5 for each SCRIPT dialogue, 3 for each AGENTS one.
    expect(script.goal).toEqual({ n: 3, mean: 8.5, ci95: [8.5, 8.5] });
    expect(row('AGENTS:test-model', 'all').goal).toMatchObject({ n: 3, mean: 3 });
    expect(script.believability.mean).toBe(7);
    expect(script.words_per_turn).toBe(16);
    expect(row('SCRIPT:test-model', 'cooperative')).toMatchObject({ dialogues: 3, human_win_rate: { n: 9 } });
    // No sale scenario: no deal asked.
    expect(script.deal_rate).toEqual({ n: 0, rate: null, ci95: null });
    // Judge verdicts a, a, a; human majorities a, a, b: 2 of 3 agree; kappa 0 (the judge used one category).
    expect(report.paper.llm_judge.agreement.without_ties).toMatchObject({ n: 3, percent: 2 / 3, cohen_kappa: 0 });
    expect(report.paper.llm_judge.position_bias).toMatchObject({ n: 6, first_shown_rate: 0.5, consistency: 1 });
    expect(report.paper.evaluations).toEqual([{ name: 'ev', judge_model: 'judge-x', prompt_version: 'v1' }]);
    // Human statistics are unchanged by the model: still 9 judgments from 3 raters.
    expect([report.n_judgments, report.n_raters]).toEqual([9, 3]);

    const md = await cli(['analyze', '--batch', 'paper-batch', '--bootstrap', '0', '--format', 'md'], env);
    expect(md.stdout).toContain('## Paper table: per condition');
    expect(md.stdout).toMatch(/\| SCRIPT:test-model \| all \| 3 \| 66\.7% \[[\d.]+%, [\d.]+%\] \(n 9\) \| 100\.0% .* \| 8\.50 \[8\.50, 8\.50\] \(n 3\) \|/);
    expect(md.stdout).toContain('## LLM judge beside the humans');
    const html = await cli(['analyze', '--batch', 'paper-batch', '--bootstrap', '0', '--format', 'html'], env);
    expect(html.stdout).toContain('<h2>Paper table: per condition</h2>');
  });
});

describe('the console analysis page', () => {
  it('GET /console/batches/:id/analysis, for a batch with judgments, shows the paper table with its notes on what comes from a model', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', 'a']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(page.text).toContain('<h2 id="paper-table-per-condition">Paper table: per condition</h2>');
    expect(page.text).toMatch(/<td>SCRIPT:test-model<\/td><td>all<\/td><td>2<\/td><td>75\.0% \[/);
    expect(page.text).toContain('From a model: the LLM judge win rate');
  });
});

describe('the console analysis page, section by section', () => {
  /** How many times each second-level heading appears on a page. */
  const headingCounts = (html: string) => {
    const counts = new Map<string, number>();
    for (const [, title] of html.matchAll(/<h2[^>]*>([^<]*)<\/h2>/g)) counts.set(title as string, (counts.get(title as string) ?? 0) + 1);
    return counts;
  };

  it('GET /console/batches/:id/analysis, after evaluate and llm-judge, shows each section once, the paper table, the LLM judge and the evaluations used among them', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']], settings: { name: 'sections' } });
    fake = await startFakeLlm({ respond: (request) => ({ content: JSON.stringify(answerFromSchema(request.body.response_format?.json_schema?.schema)) }) });
    const env = { DATABASE_PATH: t.dbPath, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    expect((await cli(['evaluate', '--run', String(batch.runId), '--judge-model', 'judge-x', '--name', 'ev'], env)).code).toBe(0);
    expect((await cli(['llm-judge', '--batch', 'sections', '--judge-model', 'judge-x', '--name', 'lj'], env)).code).toBe(0);
    const researcher = await signIn(t.app, t.db, 'researcher');

    const page = await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    const counts = headingCounts(page.text);
    for (const title of ['Paper table: per condition', 'LLM judge beside the humans', 'Episode evaluations used', 'Win rates']) expect(counts.get(title)).toBe(1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
  });

  it('GET /console/batches/:id/analysis, for a one-question batch with no evaluation, shows each section once', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', 'a']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    const counts = headingCounts(page.text);
    expect(counts.get('Paper table: per condition')).toBe(1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
  });
});

describe('simarena evaluations', () => {
  it('evaluations metrics --run R, on hand-written mutual-friend dialogues, reports the leakage position per condition without any model', async () => {
    const { db, path } = createTestDb();
    const scenario = makeScenario(db, { category: 'cooperative' });
    replaceScenarioFacts(db, scenario.scenarioId, [
      { owner: 1, kind: 'mutual_friend', value: 'Kwame Asante', aliases: ['Kwame'] },
      { owner: 2, kind: 'mutual_friend', value: 'Kwame Asante', aliases: ['Kwame'] },
    ]);
    const runId = makeRun(db, { name: 'leaky' });
    const say = (speaker: 1 | 2, text: string) => ({ speaker, action: 'speak' as const, text });
    makeDialogue(db, { runId, scenario, mode: 'SCRIPT', turns: [say(1, 'You must know Kwame!'), say(2, 'Of course.'), say(1, 'Great.')] });
    makeDialogue(db, { runId, scenario, mode: 'AGENTS', turns: [say(1, 'Hello there.'), say(2, 'Nice party.'), say(1, 'Do you know any doctors?'), say(2, 'Kwame Asante, a cardiologist.')] });
    const env = { DATABASE_PATH: path, ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    const result = await cli(['evaluations', 'metrics', '--run', 'leaky', '--format', 'json'], env);
    expect(result.code).toBe(0);
    const section = JSON.parse(result.stdout);
    const row = (condition: string) => section.rows.find((r: { condition: string; scope: string }) => r.condition === condition && r.scope === 'all');
    expect(row('SCRIPT:test-model').mutual_friend_position).toBe(0);
    expect(row('AGENTS:test-model').mutual_friend_position).toBe(1);
    expect(row('SCRIPT:test-model').goal).toEqual({ n: 0, mean: null, ci95: null });
    expect(section.notes.join(' ')).toContain('No episode evaluation covers these dialogues');
    expect(section.notes.join(' ')).not.toContain('Human win rate');
    const md = await cli(['evaluations', 'metrics', '--run', 'leaky'], env);
    expect(md.stdout).toMatch(/\| SCRIPT:test-model \| all \| 1 \| – \| – \| – \| – \| – \| 0\.00 \| 0\.00 \| 0\.0% \| 2\.3 \|/);
    const unknown = await cli(['evaluations', 'metrics', '--run', 'nope'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: no run "nope": see simarena runs list' });
  });
});
