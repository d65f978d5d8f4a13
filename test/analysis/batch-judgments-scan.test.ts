// loadBatchJudgments reads a batch's judgments in one pass over its id range and joins them to their pairs and raters
// itself (issue 12: SQLite's join, through an index and a sort, was most of a million-judgment analysis). Checked here
// against SQLite's own join of the same rows, as the analysis read them before, on batches whose judgments interleave
// and with every rule that leaves a judgment out.
import { describe, expect, it } from 'vitest';
import { findBatchForAnalysis, loadBatchJudgments } from '../../src/analysis/batch-judgments.queries.js';
import type { Db } from '../../src/db/connection.js';
import { judgePseudonym } from '../../src/rating/judge-pseudonym.js';
import { makeBatchWithJudgments, makeDialogue, makeJudgment, makePair, makeRater, makeScenario, makeTurns } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

/** What SQLite's joins give for the batch and question: the rows the analysis uses, the dropped counts and the attention tallies. */
function joinedBySqlite(db: Db, batchId: number, questionId: string) {
  const salt = db.prepare<[number], string>('SELECT judge_salt FROM batches WHERE id = ?').pluck().get(batchId) as string;
  const nameOf = (id: number) => {
    const r = db.prepare<[number, number], { provider: string; participant_id: string | null; public_id: string }>('SELECT provider, participant_id, public_id FROM raters WHERE id = ? AND batch_id = ?').get(id, batchId);
    return r ? judgePseudonym(salt, { provider: r.provider, participantId: r.participant_id, raterPublicId: r.public_id }) : `rater:${id}`;
  };
  const rows = db
    .prepare<[number, string], { pair_id: number; rater_id: number; winner: string; left_side: string; active_ms: number; condition_a: string; condition_b: string; scenario_id: string }>(
      `SELECT j.pair_id, j.rater_id, j.winner, j.left_side, j.active_ms, c.condition_a, c.condition_b, p.scenario_id
       FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN comparisons c ON c.id = p.comparison_id
       JOIN scenarios s ON s.id = p.scenario_id JOIN raters r ON r.id = j.rater_id
       WHERE j.batch_id = ? AND j.question_id = ? AND j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NULL
         AND r.excluded = 0 AND r.status <> 'screened_out'
       ORDER BY j.id`,
    )
    .all(batchId, questionId)
    .map((r) => ({ item: String(r.pair_id), rater: nameOf(r.rater_id), outcome: r.winner, left: r.left_side, seconds: r.active_ms / 1000, a: r.condition_a, b: r.condition_b, scenario: r.scenario_id }));
  const dropped = db
    .prepare<[number, string], { gold: number; removed: number }>(
      `SELECT coalesce(sum(CASE WHEN j.is_gold = 1 OR p.kind <> 'regular' THEN 1 ELSE 0 END), 0) AS gold,
              coalesce(sum(CASE WHEN j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS removed
       FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.batch_id = ? AND j.question_id = ?`,
    )
    .get(batchId, questionId) as { gold: number; removed: number };
  const attention = db
    .prepare<[number], { rater_id: number; correct: number; answered: number }>(
      `SELECT j.rater_id, coalesce(sum(j.correct), 0) AS correct, count(*) AS answered
       FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.batch_id = ? AND p.kind = 'attention' AND j.correct IS NOT NULL GROUP BY j.rater_id`,
    )
    .all(batchId)
    .map((a) => [nameOf(a.rater_id), { correct: a.correct, answered: a.answered }]);
  return { rows, dropped, attention };
}

function readByScan(db: Db, batchId: number, questionId: string) {
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) throw new Error('no batch');
  const { table, exclusions, attention } = loadBatchJudgments(db, batch, questionId);
  const rows = Array.from({ length: table.n }, (_, j) => {
    const item = table.item[j] as number;
    const comparison = table.comparisons[table.itemComparison[item] as number];
    return {
      item: table.itemNames[item],
      rater: table.raterNames[table.rater[j] as number],
      outcome: ['a', 'b', 'tie'][table.outcome[j] as number],
      left: ['a', 'b'][table.left[j] as number],
      seconds: table.seconds[j],
      a: comparison?.a,
      b: comparison?.b,
      scenario: table.scenarioNames[table.itemScenario[item] as number],
    };
  });
  const dropped = Object.fromEntries(exclusions.dropped.map((d) => [d.reason.startsWith('gold') ? 'gold' : 'removed', d.judgments]));
  return { rows, dropped: { gold: dropped.gold ?? 0, removed: dropped.removed ?? 0 }, attention: [...attention], exclusions: exclusions.raters };
}

describe('loadBatchJudgments (one pass over the batch, joined in JavaScript)', () => {
  it('gives the rows, dropped counts and attention tallies of SQLite\'s join, in id order, with batches interleaved', () => {
    const { db } = createTestDb();
    const one = makeBatchWithJudgments(db, { votes: [['a', 'b', 'tie', 'a'], ['b', 'b', 'a', null], ['a', null, 'b', 'b']], settings: { allowTie: true } });
    const two = makeBatchWithJudgments(db, { votes: [['b', 'a'], ['a', 'a']] });
    // Later judgments of both batches alternate, so each batch's id range holds the other's rows too.
    const late = makeRater(db, { batchId: one.batchId });
    for (let i = 0; i < 6; i++) {
      const raterId = i < 3 ? late : makeRater(db, { batchId: one.batchId });
      makeJudgment(db, { pairId: one.pairIds[i % 3]!, raterId, winner: i % 2 === 0 ? 'b' : 'a', leftSide: i % 2 === 0 ? 'b' : 'a', activeMs: 1000 * (i + 1) });
      makeJudgment(db, { pairId: two.pairIds[i % 2]!, raterId: makeRater(db, { batchId: two.batchId }), winner: 'a' });
    }
    // Gold pairs: an attention check (no comparison) answered right and wrong, and an onboarding pair.
    const scenario = makeScenario(db);
    const good = makeDialogue(db, { runId: one.runId, scenario, mode: 'AGENTS', model: 'test-model', turns: makeTurns(6, 12) });
    const bad = makeDialogue(db, { runId: one.runId, scenario, mode: 'SCRIPT', model: 'test-model', sampleIndex: 0, turns: makeTurns(6, 12) });
    const check = makePair(db, { batchId: one.batchId, comparisonId: null, dialogueA: good, dialogueB: bad, kind: 'attention', expected: 'a' });
    const onboarding = makePair(db, { batchId: one.batchId, comparisonId: one.comparisonIds[0]!, dialogueA: bad, dialogueB: good, kind: 'onboarding', expected: 'b' });
    makeJudgment(db, { pairId: check, raterId: one.raterIds[0]!, winner: 'a' });
    makeJudgment(db, { pairId: check, raterId: one.raterIds[1]!, winner: 'b' });
    makeJudgment(db, { pairId: check, raterId: late, winner: 'a' });
    makeJudgment(db, { pairId: onboarding, raterId: one.raterIds[2]!, winner: 'a' });
    // Left out: an excluded rater, a screened-out one and a removed pair; a second question's answers to another question.
    db.prepare("UPDATE raters SET excluded = 1, exclusion_reason = 'too fast' WHERE id = ?").run(one.raterIds[1]);
    db.prepare("UPDATE raters SET status = 'screened_out' WHERE id = ?").run(one.raterIds[3]);
    db.prepare("UPDATE pairs SET removed_at = '2026-02-01T00:00:00.000Z' WHERE id = ?").run(one.pairIds[2]);
    db.prepare("UPDATE judgments SET question_id = 'clear' WHERE batch_id = ? AND rater_id = ? AND pair_id = ?").run(one.batchId, late, one.pairIds[1]);
    // Rows the schema allows though the app never writes them: a judgment of batch one by a rater of batch two, and one
    // of batch one on a pair of batch two (each read on its own, as SQLite's join reads any pair and rater).
    makeJudgment(db, { pairId: one.pairIds[0]!, raterId: two.raterIds[0]!, winner: 'b' });
    const moved = makeJudgment(db, { pairId: two.pairIds[1]!, raterId: makeRater(db, { batchId: one.batchId }), winner: 'a' });
    db.prepare('UPDATE judgments SET batch_id = ? WHERE id = ?').run(one.batchId, moved);

    for (const question of ['natural', 'clear']) {
      const scanned = readByScan(db, one.batchId, question);
      const joined = joinedBySqlite(db, one.batchId, question);
      expect(scanned.rows).toEqual(joined.rows);
      expect(scanned.dropped).toEqual(joined.dropped);
      expect(scanned.attention).toEqual(joined.attention);
    }
    const natural = readByScan(db, one.batchId, 'natural');
    // The rules did leave rows out, and the other batch's rows are not read as this one's.
    expect(natural.rows.length).toBeGreaterThan(0);
    expect(natural.rows.filter((r) => r.rater === `rater:${two.raterIds[0]}`)).toHaveLength(1);
    expect(natural.rows.filter((r) => r.item === String(two.pairIds[1]))).toHaveLength(1);
    expect(natural.dropped.gold).toBe(4);
    expect(natural.dropped.removed).toBeGreaterThan(0);
    expect(natural.attention.map(([, t]) => t)).toEqual([{ correct: 1, answered: 1 }, { correct: 0, answered: 1 }, { correct: 1, answered: 1 }]);
    expect(natural.exclusions.map((e) => e.reason)).toEqual(['excluded: too fast', 'screened out (failed attention checks or onboarding)']);
    expect(readByScan(db, one.batchId, 'clear').rows).toHaveLength(1);
    expect(readByScan(db, two.batchId, 'natural').rows).toEqual(joinedBySqlite(db, two.batchId, 'natural').rows);
    expect(readByScan(db, two.batchId, 'natural').rows).toHaveLength(10);
  });

  it('reads an empty batch as empty', () => {
    const { db } = createTestDb();
    const empty = makeBatchWithJudgments(db, { votes: [[null]] });
    expect(readByScan(db, empty.batchId, 'natural')).toEqual({ rows: [], dropped: { gold: 0, removed: 0 }, attention: [], exclusions: [] });
  });
});
