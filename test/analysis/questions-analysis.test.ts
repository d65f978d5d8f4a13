// Issue 16: a batch with two questions is analysed per question. The fixture's two questions disagree on purpose; every
// expected count here is tallied in the test from the seeded vote arrays, not taken from the code under test.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getBatchAnalysis } from '../../src/analysis/analysis-cache.js';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { GOALS, makeTwoQuestionBatch, NATURAL, QUESTIONS } from './two-question-fixture.js';

const NOW = new Date('2026-02-01T10:00:00.000Z');
type Vote = 'a' | 'b' | 'tie' | null;

function tally(votes: Vote[][]) {
  const flat = votes.flat().filter((v): v is 'a' | 'b' | 'tie' => v !== null);
  return { n: flat.length, wins_a: flat.filter((v) => v === 'a').length, wins_b: flat.filter((v) => v === 'b').length, ties: flat.filter((v) => v === 'tie').length };
}

/** Same winner on the same assignment (pair i, rater r), over all and over assignments where both answers are decisive. */
function crossTally(first: Vote[][], later: Vote[][]) {
  let assignments = 0;
  let same = 0;
  let decisive = 0;
  let sameDecisive = 0;
  first.forEach((row, i) =>
    row.forEach((x, r) => {
      const y = later[i]?.[r] ?? null;
      if (x === null || y === null) return;
      assignments++;
      if (x === y) same++;
      if (x !== 'tie' && y !== 'tie') {
        decisive++;
        if (x === y) sameDecisive++;
      }
    }),
  );
  return { assignments, same, decisive, sameDecisive };
}

describe('analysis of a batch with two questions', () => {
  it('getBatchAnalysis, for a batch whose two questions disagree, reports each question on its own rows and the first at the top', () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const natural = tally(NATURAL);
    const goals = tally(GOALS);
    // The two questions must really differ, or this test could not tell them apart.
    expect(natural.wins_a).not.toBe(goals.wins_a);
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    expect(report.comparisons[0]).toMatchObject(natural);
    expect(report.n_judgments).toBe(natural.n);
    expect(report.question).toEqual({ id: 'natural', text: QUESTIONS[0]!.text, index: 0 });
    expect(report.questions!.map((q) => [q.id, q.text])).toEqual(QUESTIONS.map((q) => [q.id, q.text]));
    expect(report.questions![0]!.comparisons[0]).toMatchObject(natural);
    const second = report.questions![1]!;
    expect(second.comparisons[0]).toMatchObject(goals);
    expect(second.comparisons[0]!.win_rate_a).toBeCloseTo(goals.wins_a / (goals.wins_a + goals.wins_b), 10);
    // Each question counts each rater once per pair: the same three raters, not six.
    expect(second.n_raters).toBe(3);
    expect(report.n_raters).toBe(3);
    // The goals question allows ties (its own setting), the first does not.
    expect(report.settings.ties_allowed).toBe(false);
    expect(second.settings.ties_allowed).toBe(true);
    const cross = crossTally(NATURAL, GOALS);
    expect(report.cross_question).toEqual({
      reference: 'natural',
      rows: [
        {
          question_id: 'goals',
          text: QUESTIONS[1]!.text,
          assignments: cross.assignments,
          same_winner: cross.same,
          same_winner_share: cross.same / cross.assignments,
          both_decisive: cross.decisive,
          same_among_decisive: cross.sameDecisive,
          same_among_decisive_share: cross.sameDecisive / cross.decisive,
        },
      ],
    });
  });

  it('getBatchAnalysis with a question, for the second question, gives that question\'s report at the top with no other question in it', () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0, question: 'goals' })!;
    expect(report.comparisons[0]).toMatchObject(tally(GOALS));
    expect(report.question).toMatchObject({ id: 'goals', index: 1 });
    expect(report.questions).toBeUndefined();
    expect(() => getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0, question: 'nope' })).toThrow(/no question "nope"; its questions are: natural, goals/);
  });

  it('getBatchAnalysis, for a one-question batch, has no question fields at all (the report is as before questions existed)', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: NATURAL });
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    expect(Object.keys(report)).not.toContain('question');
    expect(Object.keys(report)).not.toContain('questions');
    expect(Object.keys(report)).not.toContain('cross_question');
    expect(getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0, question: 'natural' })).toEqual(report);
  });

  it('an excluded rater and a gold pair, in a two-question batch, are counted once per question (not once per row)', () => {
    const { db } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    db.prepare("UPDATE raters SET excluded = 1, exclusion_reason = 'speeding' WHERE id = ?").run(made.raterIds[0]);
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    const without = (votes: Vote[][]) => tally(votes.map((row) => row.map((v, r) => (r === 0 ? null : v))));
    expect(report.comparisons[0]).toMatchObject(without(NATURAL));
    expect(report.questions![1]!.comparisons[0]).toMatchObject(without(GOALS));
    const rater0 = NATURAL.filter((row) => row[0] !== null).length;
    expect(report.exclusions.raters).toEqual([expect.objectContaining({ judgments: rater0 })]);
    expect(report.questions![1]!.exclusions.raters).toEqual([expect.objectContaining({ judgments: GOALS.filter((row) => row[0] !== null).length })]);
  });
});

describe('simarena analyze with questions', () => {
  it('simarena analyze --batch, for a two-question batch, prints one section per question titled by its text, the first first, and the agreement across questions', async () => {
    const { db, path } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const md = await cli(['analyze', '--batch', String(made.batchId), '--format', 'md', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(md.code).toBe(0);
    const first = md.stdout.indexOf(`## Question 1 (natural): ${QUESTIONS[0]!.text}`);
    const second = md.stdout.indexOf(`## Question 2 (goals): ${QUESTIONS[1]!.text}`);
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(md.stdout).toContain('## Agreement across questions');
    // Rater quality on the first question only.
    expect(md.stdout.slice(first, second)).toContain('### Raters');
    expect(md.stdout.slice(second)).not.toContain('### Raters');
    const html = await cli(['analyze', '--batch', String(made.batchId), '--format', 'html', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(html.stdout).toContain('id="question-goals"');
    expect(html.stdout).toContain('id="plot-goals-forest"');
    expect(html.stdout).toContain('id="plot-natural-forest"');
  });

  it('simarena analyze --question, with the second question, prints that question\'s JSON; with an unknown id, fails naming the batch\'s questions', async () => {
    const { db, path } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const run = await cli(['analyze', '--batch', String(made.batchId), '--question', 'goals', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AnalysisReport;
    expect(report.comparisons[0]).toMatchObject(tally(GOALS));
    expect(report.question?.id).toBe('goals');
    const md = await cli(['analyze', '--batch', String(made.batchId), '--question', 'goals', '--format', 'md', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(md.stdout).toContain(`**Question 2 (goals): ${QUESTIONS[1]!.text}**`);
    expect(md.stdout).not.toContain(QUESTIONS[0]!.text);
    const bad = await cli(['analyze', '--batch', String(made.batchId), '--question', 'believable'], { DATABASE_PATH: path });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(`batch ${made.batchId} has no question "believable"; its questions are: natural, goals`);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('simarena analyze --judgments, for a file with a question_id column, reports each question; a file without it as before', async () => {
    const dir = tempDir();
    const file = join(dir, 'two.csv');
    const rows = ['item_id,rater_id,label,condition_a,condition_b,question_id'];
    const label = (v: 'a' | 'b' | 'tie') => (v === 'a' ? 'A' : v === 'b' ? 'B' : 'tie');
    NATURAL.forEach((row, i) =>
      row.forEach((v, r) => {
        if (v === null) return;
        rows.push(`p${i},r${r},${label(v)},A,B,natural`);
        const g = GOALS[i]?.[r];
        if (g) rows.push(`p${i},r${r},${label(g)},A,B,goals`);
      }),
    );
    writeFileSync(file, `${rows.join('\n')}\n`);
    const run = await cli(['analyze', '--judgments', file, '--bootstrap', '0']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as AnalysisReport;
    expect(report.comparisons[0]).toMatchObject(tally(NATURAL));
    expect(report.questions!.map((q) => q.id)).toEqual(['natural', 'goals']);
    expect(report.questions![1]!.comparisons[0]).toMatchObject(tally(GOALS));
    expect(report.cross_question!.rows[0]).toMatchObject({ assignments: crossTally(NATURAL, GOALS).assignments, same_winner: crossTally(NATURAL, GOALS).same });
    const only = JSON.parse((await cli(['analyze', '--judgments', file, '--bootstrap', '0', '--question', 'goals'])).stdout) as AnalysisReport;
    expect(only.comparisons[0]).toMatchObject(tally(GOALS));
    const bad = await cli(['analyze', '--judgments', file, '--question', 'nope']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('has no question "nope"; its questions are: natural, goals');
    const plain = join(dir, 'one.csv');
    writeFileSync(plain, `${rows.filter((l) => !l.endsWith(',goals')).map((l) => l.replace(/,[^,]*$/, '')).join('\n')}\n`);
    const one = JSON.parse((await cli(['analyze', '--judgments', plain, '--bootstrap', '0'])).stdout) as AnalysisReport;
    expect(one.comparisons[0]).toMatchObject(tally(NATURAL));
    expect(Object.keys(one)).not.toContain('questions');
  });

  it('simarena analyze --judgments, on the judgments export of a two-question batch, gives the same win rates per question as the batch\'s own analysis', async () => {
    const { db, path } = createTestDb();
    const made = makeTwoQuestionBatch(db);
    const out = join(tempDir(), 'export.csv');
    expect((await cli(['export', '--batch', String(made.batchId), '--format', 'judgments-csv', '--out', out], { DATABASE_PATH: path })).code).toBe(0);
    const fromFile = JSON.parse((await cli(['analyze', '--judgments', out, '--bootstrap', '0'])).stdout) as AnalysisReport;
    const fromBatch = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    expect(fromFile.questions!.map((q) => q.id)).toEqual(['natural', 'goals']);
    for (const k of [0, 1]) {
      const file = fromFile.questions![k]!.comparisons[0]!;
      const batch = fromBatch.questions![k]!.comparisons[0]!;
      expect([file.n, file.wins_a, file.wins_b, file.ties, file.win_rate_a]).toEqual([batch.n, batch.wins_a, batch.wins_b, batch.ties, batch.win_rate_a]);
    }
    expect(fromFile.cross_question!.rows[0]).toMatchObject({ assignments: fromBatch.cross_question!.rows[0]!.assignments, same_winner: fromBatch.cross_question!.rows[0]!.same_winner });
  });
});
