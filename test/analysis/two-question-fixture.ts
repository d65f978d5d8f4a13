// A batch with two questions (issue 16) whose answers disagree, seeded straight into the database: the first
// question's rows come from the usual factories (one row per assignment, question_index 0), the second question's
// rows copy each assignment's row with their own winner, as the rating side stores them (one row per question).
import type { Db } from '../../src/db/connection.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';

export const QUESTIONS = [
  { id: 'natural', text: 'Which conversation sounds more like two people talking naturally?', allowTie: false, reason: 'optional' as const },
  { id: 'goals', text: 'In which conversation do the characters better pursue their goals?', allowTie: true, reason: 'off' as const },
];

type Vote = 'a' | 'b' | 'tie' | null;

/** natural[i][r] and goals[i][r]: rater r's winner on pair i for each question (null: no judgment; goals only where natural is). */
export const NATURAL: Vote[][] = [
  ['b', 'b', 'a'],
  ['b', 'b', 'b'],
  ['a', 'b', 'b'],
  ['b', 'a', null],
];
export const GOALS: Vote[][] = [
  ['a', 'a', 'a'],
  ['a', 'b', 'tie'],
  ['a', 'a', 'b'],
  ['a', 'a', null],
];

/** Adds the answer to another question for the assignment of an existing judgment (same pair, rater, side, times). */
export function addQuestionAnswer(db: Db, judgmentId: number, question: { id: string; index: number }, winner: 'a' | 'b' | 'tie'): number {
  return Number(
    db
      .prepare(
        `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, question_id, question_index, left_side, choice, winner, label,
           reason, is_gold, correct, shown_at, submitted_at, active_ms, question_version)
         SELECT j.assignment_id, j.batch_id, j.pair_id, j.rater_id, :questionId, :questionIndex, j.left_side,
           CASE WHEN :winner = 'tie' THEN 'tie' WHEN :winner = j.left_side THEN 'left' ELSE 'right' END, :winner,
           CASE :winner WHEN 'tie' THEN 'TIE' WHEN 'a' THEN coalesce(c.condition_a, 'a') ELSE coalesce(c.condition_b, 'b') END,
           NULL, j.is_gold, NULL, j.shown_at, j.submitted_at, j.active_ms, j.question_version
         FROM judgments j JOIN pairs p ON p.id = j.pair_id LEFT JOIN comparisons c ON c.id = p.comparison_id WHERE j.id = :id`,
      )
      .run({ id: judgmentId, questionId: question.id, questionIndex: question.index, winner }).lastInsertRowid,
  );
}

/** The two-question batch: NATURAL through the factories, GOALS added per assignment. */
export function makeTwoQuestionBatch(db: Db) {
  const made = makeBatchWithJudgments(db, { votes: NATURAL, settings: { questions: QUESTIONS } });
  const rows = db
    .prepare<{ b: number }, { id: number; pair_id: number; rater_id: number }>('SELECT id, pair_id, rater_id FROM judgments WHERE batch_id = :b ORDER BY id')
    .all({ b: made.batchId });
  for (const row of rows) {
    const i = made.pairIds.indexOf(row.pair_id);
    const r = made.raterIds.indexOf(row.rater_id);
    const winner = GOALS[i]?.[r];
    if (winner) addQuestionAnswer(db, row.id, { id: 'goals', index: 1 }, winner);
  }
  return made;
}
