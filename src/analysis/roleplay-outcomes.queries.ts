import type { Db } from '../db/connection.js';
import { type GoalInput, goalComparison, type GoalRow } from './goal-comparison.js';
import { type GuessInput, partnerGuessShares, type GuessRow } from './partner-guesses.js';

// What role-play participants said after their dialogue (src/live/, live_players), for the dialogues a batch is about:
// a rating batch's collected dialogues in its pairs, or every dialogue a role-play batch collected. With the goal score
// of the latest episode evaluation of each dialogue (Sotopia-Eval, src/evaluation/), for the character the participant
// played. Analysis only reads these tables.

export type RoleplayOutcomes = { dialogues: number; answers: number; partner_guesses: GuessRow[]; goals: GoalRow[] };

type AnswerRow = { condition: string; guess: 'person' | 'ai' | null; goal_score: number | null; sotopia_goal: number | null };

const ANSWERS = `SELECT d.mode || ':' || d.model AS condition, p.partner_guess AS guess, p.goal_score,
    (SELECT s.score FROM episode_scores s WHERE s.dialogue_id = d.id AND s.speaker = p.character AND s.dimension = 'goal'
       AND s.evaluation_id = (SELECT max(t.evaluation_id) FROM episode_scores t WHERE t.dialogue_id = d.id)) AS sotopia_goal
  FROM live_players p JOIN dialogues d ON d.id = p.dialogue_id
  WHERE p.dialogue_id IN (SELECT value FROM json_each(:ids)) AND (p.partner_guess IS NOT NULL OR p.goal_score IS NOT NULL)
  ORDER BY p.dialogue_id, p.character`;

/** The collected dialogues a batch is about: a role-play batch's own, or those a rating batch pairs. */
function dialoguesOf(db: Db, batchId: number): number[] {
  return db
    .prepare<{ b: number }, number>(
      `SELECT dialogue_id FROM collected_dialogues WHERE batch_id = :b
       UNION
       SELECT d.id FROM dialogues d WHERE d.origin = 'collected' AND d.id IN (
         SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular' AND removed_at IS NULL
         UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular' AND removed_at IS NULL)
       ORDER BY 1`,
    )
    .pluck()
    .all({ b: batchId });
}

/** The partner guesses and goal comparison of a batch's collected dialogues; null when it has none. */
export function roleplayOutcomes(db: Db, batchId: number): RoleplayOutcomes | null {
  const ids = dialoguesOf(db, batchId);
  if (ids.length === 0) return null;
  const rows = db.prepare<{ ids: string }, AnswerRow>(ANSWERS).all({ ids: JSON.stringify(ids) });
  const guesses: GuessInput[] = rows.filter((r): r is AnswerRow & { guess: 'person' | 'ai' } => r.guess !== null).map((r) => ({ condition: r.condition, guess: r.guess }));
  const goals: GoalInput[] = rows.map((r) => ({ condition: r.condition, selfReport: r.goal_score, sotopiaGoal: r.sotopia_goal }));
  return { dialogues: ids.length, answers: rows.length, partner_guesses: partnerGuessShares(guesses), goals: goalComparison(goals) };
}
