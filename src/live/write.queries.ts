import { z } from 'zod';
import type { Db } from '../db/connection.js';
import type { DraftTurn } from './written-turns.js';

// write_drafts (migration 075): a writer's cast and draft until they hand it in. Written only by src/live/ (the
// writing task); the console reads a batch's counts.

export type WriteState = 'writing' | 'submitted' | 'withdrawn';

export type DraftRow = {
  rater_id: number;
  batch_id: number;
  scenario_id: string;
  cast_id: number;
  state: WriteState;
  draft: string;
  version: number;
  /** The name of the page that saved the draft last (migration 076); null before its first save. */
  tab: string | null;
  started_at: string;
  saved_at: string | null;
  submitted_at: string | null;
  dialogue_id: number | null;
};

const COLUMNS = 'rater_id, batch_id, scenario_id, cast_id, state, draft, version, tab, started_at, saved_at, submitted_at, dialogue_id';

const storedTurnSchema = z.object({
  speaker: z.union([z.literal(1), z.literal(2)]),
  action: z.enum(['speak', 'non-verbal', 'action', 'leave']),
  text: z.string(),
  keys: z.number(),
  typing_ms: z.number(),
  pastes: z.number(),
  started_at: z.string(),
  edited_at: z.string(),
});

/** The stored draft's turns, parsed with their schema (the column is ours, but JSON is read, never trusted by a cast). */
export function draftTurns(row: Pick<DraftRow, 'draft'>): DraftTurn[] {
  return z.array(storedTurnSchema).parse(JSON.parse(row.draft));
}

export function getDraft(db: Db, raterId: number): DraftRow | undefined {
  return db.prepare<{ raterId: number }, DraftRow>(`SELECT ${COLUMNS} FROM write_drafts WHERE rater_id = :raterId`).get({ raterId });
}

export function insertDraft(db: Db, row: { raterId: number; batchId: number; scenarioId: string; castId: number }, now: Date): void {
  db.prepare(
    `INSERT INTO write_drafts (rater_id, batch_id, scenario_id, cast_id, state, started_at) VALUES (:raterId, :batchId, :scenarioId, :castId, 'writing', :now)
     ON CONFLICT (rater_id) DO NOTHING`,
  ).run({ ...row, now: now.toISOString() });
}

/** Stores a save when it is newer than the stored one and the draft is still being written; false when it was not. */
export function saveDraft(db: Db, raterId: number, draft: { version: number; tab: string | null; turns: DraftTurn[] }, now: Date): boolean {
  return (
    db
      .prepare(`UPDATE write_drafts SET draft = :draft, version = :version, tab = :tab, saved_at = :now WHERE rater_id = :raterId AND state = 'writing' AND version < :version`)
      .run({ raterId, draft: JSON.stringify(draft.turns), version: draft.version, tab: draft.tab, now: now.toISOString() }).changes > 0
  );
}

export function markDraftSubmitted(db: Db, raterId: number, dialogueId: number, now: Date): boolean {
  return (
    db
      .prepare(`UPDATE write_drafts SET state = 'submitted', dialogue_id = :dialogueId, submitted_at = :now WHERE rater_id = :raterId AND state = 'writing'`)
      .run({ raterId, dialogueId, now: now.toISOString() }).changes > 0
  );
}

export function markDraftWithdrawn(db: Db, raterId: number): void {
  db.prepare(`UPDATE write_drafts SET state = 'withdrawn' WHERE rater_id = :raterId AND state = 'writing'`).run({ raterId });
}

/** Drafts being written per cast of a batch: a new writer gets the cast written least, these counted. */
export function writingByCast(db: Db, batchId: number): Map<number, number> {
  return new Map(
    db
      .prepare<{ batchId: number }, { cast_id: number; n: number }>(`SELECT cast_id, count(*) AS n FROM write_drafts WHERE batch_id = :batchId AND state = 'writing' GROUP BY cast_id`)
      .all({ batchId })
      .map((r) => [r.cast_id, r.n]),
  );
}

/** How many writers of a batch are writing, have handed in, or withdrew: the console's batch page. */
export function countDrafts(db: Db, batchId: number): Record<WriteState, number> {
  const rows = db.prepare<{ batchId: number }, { state: WriteState; n: number }>('SELECT state, count(*) AS n FROM write_drafts WHERE batch_id = :batchId GROUP BY state').all({ batchId });
  const counts: Record<WriteState, number> = { writing: 0, submitted: 0, withdrawn: 0 };
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}
