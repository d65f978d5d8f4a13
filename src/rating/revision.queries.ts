import type { Db } from '../db/connection.js';
import type { Choice } from './rater.schema.js';

// The SQL of a rater's revised answer (issue 49; src/rating/revise-judgment.ts, migration 046).

/** One question's stored answer to an assignment: its judgment row as the rater left it. */
export type StoredAnswer = {
  id: number;
  question_index: number;
  choice: Choice;
  winner: 'a' | 'b' | 'tie';
  label: string;
  reason: string | null;
  /** A which-is-real answer's confidence (issue 53), null for none. */
  confidence: number | null;
  correct: number | null;
  /** When this answer was given: the judgment's time, or its last revision's. */
  answered_at: string;
};

/** An assignment's stored answers, one per question in page order. */
export function storedAnswersOf(db: Db, assignmentId: number): StoredAnswer[] {
  return db
    .prepare<{ assignmentId: number }, StoredAnswer>(
      `SELECT j.id, j.question_index, j.choice, j.winner, j.label, j.reason, j.confidence, j.correct,
         coalesce((SELECT r.revised_at FROM judgment_revisions r WHERE r.judgment_id = j.id ORDER BY r.id DESC LIMIT 1), j.submitted_at) AS answered_at
       FROM judgments j WHERE j.assignment_id = :assignmentId ORDER BY j.question_index`,
    )
    .all({ assignmentId });
}

/** The assignment of the rater's most recent answer, or undefined before their first. */
export function lastAnsweredAssignmentOf(db: Db, raterId: number): number | undefined {
  return db
    .prepare<{ raterId: number }, number>('SELECT assignment_id FROM judgments WHERE rater_id = :raterId AND question_index = 0 ORDER BY id DESC LIMIT 1')
    .pluck()
    .get({ raterId });
}

/** Whether a sequential look at the comparison was taken at or after `since` (an ISO time). */
export function lookTakenSince(db: Db, comparisonId: number, since: string): boolean {
  return db.prepare('SELECT 1 FROM sequential_looks WHERE comparison_id = :comparisonId AND taken_at >= :since LIMIT 1').get({ comparisonId, since }) !== undefined;
}

export type RevisedAnswer = { choice: Choice; winner: 'a' | 'b' | 'tie'; label: string; reason: string | null; confidence: number | null; correct: boolean | null };

/** Keeps the answer a judgment row holds in judgment_revisions, then writes the new one over it. */
export function reviseJudgmentRow(db: Db, stored: StoredAnswer, next: RevisedAnswer, ids: { batchId: number; raterId: number }, now: Date): void {
  db.prepare(
    `INSERT INTO judgment_revisions (judgment_id, batch_id, rater_id, choice, winner, label, reason, confidence, correct, answered_at, revised_at)
     VALUES (:id, :batchId, :raterId, :choice, :winner, :label, :reason, :confidence, :correct, :answered_at, :now)`,
  ).run({ ...stored, ...ids, now: now.toISOString() });
  db.prepare('UPDATE judgments SET choice = :choice, winner = :winner, label = :label, reason = :reason, confidence = :confidence, correct = :correct WHERE id = :id').run({
    ...next,
    correct: next.correct === null ? null : next.correct ? 1 : 0,
    id: stored.id,
  });
}

/** Moves a rater's failed attention checks by `delta` (a revised answer to one that was, or now is, wrong). */
export function shiftAttentionFailures(db: Db, raterId: number, delta: number): number {
  return db
    .prepare<{ raterId: number; delta: number }, number>('UPDATE raters SET attention_failures = attention_failures + :delta WHERE id = :raterId RETURNING attention_failures')
    .pluck()
    .get({ raterId, delta }) as number;
}
