import type { Db } from '../db/connection.js';
import type { CollectingTask } from './batch.schema.js';

// Dialogues a collecting batch made (migration 060, collected_dialogues): how each ended and the researcher's review.
// Only an accepted one is paired by a rating batch (listSampleDialogues); the collecting task writes the outcome, the
// console (or CLI) the review.

export type CollectedOutcome = 'collecting' | 'complete' | 'incomplete' | 'reported';
export type Review = 'pending' | 'accepted' | 'rejected';

export type CollectedRow = {
  dialogue_id: number;
  batch_id: number;
  task: CollectingTask;
  outcome: CollectedOutcome;
  reason: string | null;
  review: Review;
  reviewed_by: string | null;
  reviewed_at: string | null;
  review_note: string | null;
  created_at: string;
  ended_at: string | null;
};

const COLUMNS = 'dialogue_id, batch_id, task, outcome, reason, review, reviewed_by, reviewed_at, review_note, created_at, ended_at';

export function insertCollected(db: Db, row: { dialogueId: number; batchId: number; task: CollectingTask }, now: Date): void {
  db.prepare('INSERT INTO collected_dialogues (dialogue_id, batch_id, task, created_at) VALUES (:dialogueId, :batchId, :task, :now)').run({
    ...row,
    now: now.toISOString(),
  });
}

/** Records how a collected dialogue ended, once: a later end (a second process, a retry) changes nothing. */
export function endCollected(db: Db, dialogueId: number, end: { outcome: Exclude<CollectedOutcome, 'collecting'>; reason: string | null }, now: Date): boolean {
  return (
    db
      .prepare(`UPDATE collected_dialogues SET outcome = :outcome, reason = :reason, ended_at = :now WHERE dialogue_id = :dialogueId AND outcome = 'collecting'`)
      .run({ dialogueId, ...end, now: now.toISOString() }).changes > 0
  );
}

export function getCollected(db: Db, dialogueId: number): CollectedRow | undefined {
  return db.prepare<{ dialogueId: number }, CollectedRow>(`SELECT ${COLUMNS} FROM collected_dialogues WHERE dialogue_id = :dialogueId`).get({ dialogueId });
}

export function setReview(db: Db, dialogueId: number, review: { decision: Exclude<Review, 'pending'>; by: string; note: string | null }, now: Date): void {
  db.prepare(
    `UPDATE collected_dialogues SET review = :decision, reviewed_by = :by, reviewed_at = :now, review_note = :note WHERE dialogue_id = :dialogueId`,
  ).run({ dialogueId, ...review, now: now.toISOString() });
}

/** A collected dialogue as the review list shows it: its row, the dialogue's state and size, and its mode. */
export type CollectedListRow = CollectedRow & {
  mode: string;
  model: string;
  scenario_id: string;
  sample_index: number;
  state: string;
  end_reason: string | null;
  turns: number;
  spoken: number;
};

/**
 * A page of a batch's collected dialogues, newest first, optionally of one outcome or review (the console's review
 * list: a live study collects one per pair of participants, so the list is read a page at a time).
 */
export function listCollected(
  db: Db,
  batchId: number,
  filter: { outcome?: CollectedOutcome; review?: Review } = {},
  page: { limit: number; offset: number } = { limit: -1, offset: 0 },
): CollectedListRow[] {
  return db
    .prepare<{ batchId: number; outcome: string | null; review: string | null; limit: number; offset: number }, CollectedListRow>(
      `SELECT ${COLUMNS.split(', ')
        .map((c) => `c.${c}`)
        .join(', ')}, d.mode, d.model, d.scenario_id, d.sample_index, d.state, d.end_reason,
         (SELECT count(*) FROM turns t WHERE t.dialogue_id = d.id) AS turns,
         (SELECT count(*) FROM turns t WHERE t.dialogue_id = d.id AND t.action IN ('speak', 'non-verbal', 'action')) AS spoken
       FROM collected_dialogues c JOIN dialogues d ON d.id = c.dialogue_id
       WHERE c.batch_id = :batchId AND (:outcome IS NULL OR c.outcome = :outcome) AND (:review IS NULL OR c.review = :review)
       ORDER BY c.dialogue_id DESC LIMIT :limit OFFSET :offset`,
    )
    .all({ batchId, outcome: filter.outcome ?? null, review: filter.review ?? null, ...page });
}

/** Counts of a batch's collected dialogues by outcome and by review, for the batch page. */
export function countCollected(db: Db, batchId: number): Record<CollectedOutcome | Review, number> {
  const row = db
    .prepare<{ batchId: number }, Record<CollectedOutcome | Review, number | null>>(
      `SELECT sum(outcome = 'collecting') AS collecting, sum(outcome = 'complete') AS complete, sum(outcome = 'incomplete') AS incomplete,
         sum(outcome = 'reported') AS reported, sum(review = 'pending' AND outcome <> 'collecting') AS pending,
         sum(review = 'accepted') AS accepted, sum(review = 'rejected') AS rejected
       FROM collected_dialogues WHERE batch_id = :batchId`,
    )
    .get({ batchId });
  const n = (v: number | null | undefined) => v ?? 0;
  return {
    collecting: n(row?.collecting),
    complete: n(row?.complete),
    incomplete: n(row?.incomplete),
    reported: n(row?.reported),
    pending: n(row?.pending),
    accepted: n(row?.accepted),
    rejected: n(row?.rejected),
  };
}
