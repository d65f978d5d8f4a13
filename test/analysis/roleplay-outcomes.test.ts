import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { goalComparison, pearson } from '../../src/analysis/goal-comparison.js';
import { partnerGuessShares } from '../../src/analysis/partner-guesses.js';
import { loadRunPaperSection } from '../../src/analysis/paper-table.queries.js';
import { roleplayOutcomes } from '../../src/analysis/roleplay-outcomes.queries.js';
import { roleplayMarkdown } from '../../src/analysis/roleplay-report.js';
import type { Db } from '../../src/db/connection.js';
import { insertDialogue, replaceTurns } from '../../src/generation/dialogue.queries.js';
import { insertPlayer } from '../../src/live/live.queries.js';
import { insertRater } from '../../src/rating/rating.queries.js';
import { newPublicId } from '../../src/web/ids.js';
import { makeBatch, makeDialogue, makePair, makeRun, makeScenario, makeTurns, type MadeScenario } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';
import { loadExpected } from './shared-stats.js';

// The role-play outcomes of issue 52, checked against published values: Wilson intervals against the shared worked
// examples (test/fixtures/stats, Newcombe 1998), Pearson's r and mean differences against R on Anscombe's quartet
// (test/fixtures/roleplay/anscombe.json, made by scripts/roleplay-outcomes-reference.R).

const anscombe = JSON.parse(readFileSync(new URL('../fixtures/roleplay/anscombe.json', import.meta.url), 'utf8')) as {
  sets: { x: number[]; y: number[]; mean_x: number; mean_y: number; mean_difference: number; pearson_r: number }[];
};

describe('partnerGuessShares', () => {
  it('gives each condition the share judged a person with the Wilson interval of the worked examples, people first', () => {
    const [example] = loadExpected().proportions as { x: number; n: number; wilson95: [number, number] }[];
    if (!example) throw new Error('no example');
    const guesses = [
      ...Array.from({ length: example.n }, (_, i) => ({ condition: 'HUMAN_AGENT:m', guess: i < example.x ? ('person' as const) : ('ai' as const) })),
      { condition: 'HUMANS:human', guess: 'ai' as const },
      { condition: 'HUMANS:human', guess: 'person' as const },
    ];
    const rows = partnerGuessShares(guesses);
    expect(rows.map((r) => [r.condition, r.partner, r.answers, r.judged_person])).toEqual([
      ['HUMANS:human', 'person', 2, 1],
      ['HUMAN_AGENT:m', 'ai', example.n, example.x],
    ]);
    expect(rows[1]?.share).toBeCloseTo(example.x / example.n, 12);
    expect(rows[1]?.ci95?.[0]).toBeCloseTo(example.wilson95[0], 9);
    expect(rows[1]?.ci95?.[1]).toBeCloseTo(example.wilson95[1], 9);
  });
});

describe('goalComparison', () => {
  it('pearson and the mean difference match R on each of Anscombe\'s four data sets (published r = 0.816)', () => {
    for (const set of anscombe.sets) {
      expect(pearson(set.x, set.y)).toBeCloseTo(set.pearson_r, 12);
      expect(Math.abs(set.pearson_r - 0.816)).toBeLessThan(0.001);
      const [row] = goalComparison(set.x.map((x, i) => ({ condition: 'HUMANS:human', selfReport: set.y[i] as number, sotopiaGoal: x })));
      expect(row?.paired).toBe(11);
      expect(row?.mean_difference).toBeCloseTo(set.mean_difference, 12);
      expect(row?.sotopia_mean).toBeCloseTo(set.mean_x, 12);
      expect(row?.paired_self_mean).toBeCloseTo(set.mean_y, 12);
    }
  });

  it('keeps self-reports without a judge\'s score out of the paired columns, and gives no r below three pairs or without variance', () => {
    const [row] = goalComparison([
      { condition: 'HUMAN_AGENT:m', selfReport: 8, sotopiaGoal: 6 },
      { condition: 'HUMAN_AGENT:m', selfReport: 4, sotopiaGoal: 6 },
      { condition: 'HUMAN_AGENT:m', selfReport: 9, sotopiaGoal: null },
    ]);
    expect(row).toEqual({ condition: 'HUMAN_AGENT:m', self_reports: 3, self_mean: 7, paired: 2, paired_self_mean: 6, sotopia_mean: 6, mean_difference: 0, pearson_r: null });
    expect(pearson([1, 2, 3], [5, 5, 5])).toBeNull();
  });
});

/** A collected dialogue of the collection run with one player per human character and their answers. */
function collectedDialogue(db: Db, runId: number, scenario: MadeScenario, mode: 'HUMANS' | 'HUMAN_AGENT', answers: { character: 1 | 2; guess: 'person' | 'ai'; goal: number }[]) {
  const now = new Date('2026-04-06T10:00:00.000Z');
  const id = insertDialogue(db, { runId, scenarioId: scenario.scenarioId, castId: scenario.castId, sampleIndex: 0, mode, model: mode === 'HUMANS' ? 'human' : 'm', origin: 'collected', state: 'complete' }, now);
  replaceTurns(db, id, makeTurns(8));
  for (const a of answers) {
    const rater = insertRater(db, { batchId: 1, publicId: newPublicId(), provider: 'link', participantId: newPublicId(), studyId: null, sessionId: newPublicId(), submitTo: null, userAgent: null, status: 'completed' }, now);
    insertPlayer(db, { raterId: rater, batchId: 1 }, now);
    db.prepare("UPDATE live_players SET state = 'done', dialogue_id = ?, character = ?, outcome = 'finished', partner_guess = ?, goal_score = ?, matched_at = ? WHERE rater_id = ?").run(id, a.character, a.guess, a.goal, now.toISOString(), rater);
  }
  return id;
}

function scoreGoal(db: Db, evaluationId: number, dialogueId: number, speaker: 1 | 2, score: number) {
  const call = db
    .prepare("INSERT INTO evaluation_calls (evaluation_id, item, attempt, request_hash, request, status, created_at) VALUES (?, ?, 1, 'h', '{}', 'ok', '2026-04-06T10:00:00.000Z')")
    .run(evaluationId, `dialogue:${dialogueId}:${speaker}`).lastInsertRowid;
  db.prepare("INSERT INTO episode_scores (evaluation_id, dialogue_id, speaker, dimension, score, reasoning, call_id) VALUES (?, ?, ?, 'goal', ?, 'r', ?)").run(evaluationId, dialogueId, speaker, score, call);
}

describe('roleplayOutcomes', () => {
  it('reads a rating batch\'s paired collected dialogues: guesses by the condition met, self-reports beside the latest evaluation\'s goal score of the same character', () => {
    const { db } = createTestDb();
    const rp = makeBatch(db, { settings: { name: 'rp' } });
    const runId = makeRun(db, { name: 'collected' });
    const agentsRun = makeRun(db, { name: 'agents' });
    const [s1, s2] = [makeScenario(db), makeScenario(db)] as [MadeScenario, MadeScenario];
    const humans = collectedDialogue(db, runId, s1, 'HUMANS', [
      { character: 1, guess: 'person', goal: 7 },
      { character: 2, guess: 'ai', goal: 4 },
    ]);
    const mixed = collectedDialogue(db, runId, s2, 'HUMAN_AGENT', [{ character: 2, guess: 'person', goal: 9 }]);
    const rating = makeBatch(db, { comparisons: [['HUMANS:human', 'AGENTS:m'], ['HUMAN_AGENT:m', 'AGENTS:m']] });
    makePair(db, { batchId: rating.batchId, comparisonId: rating.comparisonIds[0] ?? null, dialogueA: humans, dialogueB: makeDialogue(db, { runId: agentsRun, scenario: s1, mode: 'AGENTS', model: 'm' }) });
    makePair(db, { batchId: rating.batchId, comparisonId: rating.comparisonIds[1] ?? null, dialogueA: mixed, dialogueB: makeDialogue(db, { runId: agentsRun, scenario: s2, mode: 'AGENTS', model: 'm' }) });
    const evaluation = (name: string) =>
      Number(db.prepare("INSERT INTO evaluations (name, kind, run_id, state, judge_model, endpoint_name, base_url, temperature, prompt_version, prompt_hash, created_at) VALUES (?, 'episode', ?, 'complete', 'j', 'default', 'http://x', 0, 'v1', 'h', 'now')").run(name, runId).lastInsertRowid);
    const older = evaluation('old');
    scoreGoal(db, older, humans, 1, 1);
    const latest = evaluation('new');
    scoreGoal(db, latest, humans, 1, 5);
    scoreGoal(db, latest, humans, 2, 6);
    scoreGoal(db, latest, mixed, 1, 2);
    scoreGoal(db, latest, mixed, 2, 8);
    const outcomes = roleplayOutcomes(db, rating.batchId);
    expect(outcomes?.dialogues).toBe(2);
    expect(outcomes?.partner_guesses.map((g) => [g.condition, g.partner, g.answers, g.judged_person])).toEqual([
      ['HUMANS:human', 'person', 2, 1],
      ['HUMAN_AGENT:m', 'ai', 1, 1],
    ]);
    expect(outcomes?.goals.map((g) => [g.condition, g.self_reports, g.paired, g.paired_self_mean, g.sotopia_mean, g.mean_difference])).toEqual([
      ['HUMANS:human', 2, 2, 5.5, 5.5, 0],
      ['HUMAN_AGENT:m', 1, 1, 9, 8, 1],
    ]);
    const md = roleplayMarkdown(outcomes as NonNullable<typeof outcomes>);
    expect(md).toContain('| HUMAN_AGENT:m | the model | 1 | 1 | 100.0% |');
    expect(roleplayOutcomes(db, rp.batchId)).toBeNull();
  });

  it('finds each dialogue\'s latest evaluation through the dialogue\'s own index entries, not by walking every evaluation\'s scores', () => {
    // Without migration 080 each score (paper table) or answer (this page) walked the scores of every evaluation: 8.7 s
    // for the paper table of a run of 1,000 dialogues scored twice, 32 ms on the request thread for 300 collected
    // dialogues' answers (scripts/bench/episode-scores.ts). Every statement the two reads prepare is planned here.
    const { db } = createTestDb();
    const rp = makeBatch(db, { settings: { name: 'rp' } });
    const runId = makeRun(db, { name: 'collected' });
    const [s1, s2] = [makeScenario(db), makeScenario(db)] as [MadeScenario, MadeScenario];
    const early = collectedDialogue(db, runId, s1, 'HUMANS', [{ character: 1, guess: 'person', goal: 7 }]);
    const late = collectedDialogue(db, runId, s2, 'HUMANS', [{ character: 1, guess: 'ai', goal: 3 }]);
    for (const id of [early, late]) db.prepare("INSERT INTO collected_dialogues (dialogue_id, batch_id, task, outcome, created_at) VALUES (?, ?, 'roleplay', 'complete', 'now')").run(id, rp.batchId);
    const evaluation = (name: string) =>
      Number(db.prepare("INSERT INTO evaluations (name, kind, run_id, state, judge_model, endpoint_name, base_url, temperature, prompt_version, prompt_hash, created_at) VALUES (?, 'episode', ?, 'complete', 'j', 'default', 'http://x', 0, 'v1', 'h', 'now')").run(name, runId).lastInsertRowid);
    const first = evaluation('first');
    scoreGoal(db, first, early, 1, 2);
    scoreGoal(db, first, late, 1, 9);
    // The second evaluation scored only the late dialogue: the early one keeps the first's score.
    scoreGoal(db, evaluation('second'), late, 1, 4);

    const prepared: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      prepared.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    const outcomes = roleplayOutcomes(db, rp.batchId);
    const paper = loadRunPaperSection(db, runId);
    db.prepare = prepare;

    expect(outcomes?.goals.map((g) => [g.condition, g.paired, g.paired_self_mean, g.sotopia_mean])).toEqual([['HUMANS:human', 2, 5, 3]]);
    expect(paper.evaluations.map((e) => e.name)).toEqual(['first', 'second']);
    const reading = prepared.filter((sql) => /FROM episode_scores/.test(sql));
    expect(reading.length).toBeGreaterThanOrEqual(2);
    for (const sql of reading) {
      const aliases = [...sql.matchAll(/FROM episode_scores (\w+)/g)].map((m) => m[1]);
      const params = Object.fromEntries([...sql.matchAll(/:(\w+)/g)].map((m) => [m[1], '[1]']));
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((p) => p.detail);
      const onScores = plan.filter((line) => aliases.some((a) => new RegExp(`^(SCAN|SEARCH) ${a}\\b`).test(line)));
      expect(onScores.length, sql).toBe(aliases.length);
      // Each read of the scores seeks on a constraint; none walks a whole table or index.
      for (const line of onScores) expect(line, sql).toMatch(/^SEARCH \w+ USING (COVERING )?INDEX \w+ \(dialogue_id=\?|^SEARCH \w+ USING INDEX sqlite_autoindex_episode_scores_1 \(evaluation_id=\? AND dialogue_id=\?/);
    }
  });
});
