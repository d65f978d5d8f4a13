import { endCollected, insertCollected } from '../batches/collected.queries.js';
import { collectionSlots } from '../batches/collection.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { type BatchSettings, writeOf } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { countTurnWords } from '../generation/dialogue-words.js';
import { insertDialogue } from '../generation/dialogue.queries.js';
import { HUMAN_MODEL } from '../generation/mode.js';
import { findRun } from '../generation/run.queries.js';
import { setRaterStatus, type RaterRow } from '../rating/rating.queries.js';
import { insertLiveTurn } from './live.queries.js';
import { type DraftRow, draftTurns, getDraft, insertDraft, markDraftSubmitted, markDraftWithdrawn, saveDraft, writingByCast } from './write.queries.js';
import type { DraftInput } from './write.schema.js';
import { draftProblem, mergeDraft } from './written-turns.js';

// A writer's part of a writing batch (issue 53): a cast drawn when they start, the draft saved as they go, and the
// conversation handed in, which becomes a collected HUMAN_SCRIPT dialogue of the batch's collection run, turns and
// provenance in one transaction, waiting for a researcher's review before any rating batch pairs it.

/** The writer's cast: the one of the batch's casts written least (handed in, or being written now), first in order. */
function pickCast(db: Db, batch: BatchRow, settings: BatchSettings, runId: number) {
  const done = new Map(
    db
      .prepare<{ runId: number }, { cast_id: number; n: number }>("SELECT cast_id, count(*) AS n FROM dialogues WHERE run_id = :runId AND mode = 'HUMAN_SCRIPT' GROUP BY cast_id")
      .all({ runId })
      .map((r) => [r.cast_id, r.n]),
  );
  const writing = writingByCast(db, batch.id);
  let best: { scenarioId: string; castId: number } | null = null;
  let fewest = Number.POSITIVE_INFINITY;
  for (const slot of collectionSlots(db, settings.scenarios)) {
    const n = (done.get(slot.castId) ?? 0) + (writing.get(slot.castId) ?? 0);
    if (n < fewest) [best, fewest] = [slot, n];
  }
  return best;
}

/** The writer's draft, made on their first visit (the cast drawn then stays theirs); null when the batch has no cast. */
export function startWriting(db: Db, batch: BatchRow, settings: BatchSettings, rater: RaterRow, now: Date): DraftRow | null {
  return db
    .transaction((): DraftRow | null => {
      const existing = getDraft(db, rater.id);
      if (existing) return existing;
      const run = findRun(db, writeOf(settings)?.run ?? '');
      const cast = run ? pickCast(db, batch, settings, run.id) : null;
      if (!cast) return null;
      insertDraft(db, { raterId: rater.id, batchId: batch.id, ...cast }, now);
      return getDraft(db, rater.id) ?? null;
    })
    .immediate();
}

export type SaveReply = { kind: 'saved' | 'stale' | 'conflict'; version: number } | { kind: 'refused'; status: number; message: string };

/** What a page is told when another tab or window changed the draft after it last knew the stored version. */
export const DRAFT_CONFLICT = 'This conversation was changed in another tab or window after this page last saved it.';

/** What the page says when a hand-in came from such a page: nothing is handed in, and its turns come back. */
export const HAND_IN_CONFLICT = `${DRAFT_CONFLICT.replace(/\.$/, '')}, so nothing was handed in. This page shows its own turns again: hand them in to keep them (they replace the other version), or reload the page to see the other version.`;

/**
 * Whether a save comes from a page that knows the stored draft: the page that saved it last (its own saves may arrive
 * out of order, and an older one is only stale), or a page that started from the stored version. Any other page's
 * save would overwrite turns it never showed its writer: a conflict, for the writer to settle. A page loaded before
 * pages named themselves (no tab) is ordered by its counter alone, as before.
 */
function conflicts(row: DraftRow, input: DraftInput): boolean {
  if (input.tab === undefined || input.tab === row.tab) return false;
  return input.base !== row.version;
}

/** Stores a save of the page (the whole draft); an older save of the same page (out of order) is stale. */
export function saveWriting(db: Db, settings: BatchSettings, raterId: number, input: DraftInput, now: Date): SaveReply {
  return db
    .transaction((): SaveReply => {
      const row = getDraft(db, raterId);
      const writing = writeOf(settings)?.writing;
      if (!row || !writing) return { kind: 'refused', status: 404, message: 'There is no conversation of yours to save: reload the page.' };
      if (row.state !== 'writing') return { kind: 'refused', status: 409, message: 'This conversation was already handed in.' };
      if (input.turns.length > writing.maxTurns) return { kind: 'refused', status: 400, message: `A conversation may have at most ${writing.maxTurns} turns.` };
      if (conflicts(row, input)) return { kind: 'conflict', version: row.version };
      if (input.version <= row.version) return { kind: 'stale', version: row.version };
      saveDraft(db, raterId, { version: input.version, tab: input.tab ?? null, turns: mergeDraft(draftTurns(row), input.turns, now) }, now);
      return { kind: 'saved', version: input.version };
    })
    .immediate();
}

export type SubmitReply = { kind: 'submitted'; dialogueId: number } | { kind: 'refused'; status: number; message: string };

/** The next sample index of a cast in the collection run's HUMAN_SCRIPT dialogues (each cast's 0 first, then 1, ...). */
function nextSampleIndex(db: Db, runId: number, castId: number): number {
  const top = db
    .prepare<{ runId: number; castId: number }, number | null>("SELECT max(sample_index) FROM dialogues WHERE run_id = :runId AND cast_id = :castId AND mode = 'HUMAN_SCRIPT'")
    .pluck()
    .get({ runId, castId });
  return top === null || top === undefined ? 0 : top + 1;
}

/** Stores the dialogue, its turns with their provenance and its collected row, and ends the writer's part. */
function storeWritten(db: Db, batch: BatchRow, rater: RaterRow, row: DraftRow, runId: number, now: Date): number {
  const turns = draftTurns(row);
  const writingMs = Math.max(0, now.getTime() - Date.parse(row.started_at));
  // Who wrote it: the rater (live_turns.rater_id of every turn) under the batch's pseudonym, as exports name raters.
  const judge = db.prepare<{ id: number }, string | null>('SELECT judge FROM raters WHERE id = :id').pluck().get({ id: rater.id }) ?? null;
  const meta = {
    writer: { judge, started_at: row.started_at, submitted_at: now.toISOString(), writing_ms: writingMs },
    signals: { keystrokes: turns.reduce((n, t) => n + t.keys, 0), typing_ms: turns.reduce((n, t) => n + t.typing_ms, 0), paste_attempts: turns.reduce((n, t) => n + t.pastes, 0) },
  };
  const sampleIndex = nextSampleIndex(db, runId, row.cast_id);
  const dialogueId = insertDialogue(db, { runId, scenarioId: row.scenario_id, castId: row.cast_id, sampleIndex, mode: 'HUMAN_SCRIPT', model: HUMAN_MODEL, origin: 'collected', state: 'running', meta }, now);
  turns.forEach((t, idx) => {
    const signals = { keystrokes: t.keys, typingMs: t.typing_ms, pasteAttempts: t.pastes };
    insertLiveTurn(db, { dialogueId, idx, speaker: t.speaker, action: t.action, text: t.text, raterId: rater.id, clientKey: null, callId: null, turnStartedAt: t.started_at, timedOut: false, signals }, new Date(t.edited_at));
  });
  const endReason = turns.at(-1)?.action === 'leave' ? 'left' : 'written';
  db.prepare("UPDATE dialogues SET state = 'complete', end_reason = :endReason, completed_at = :now, words = :words WHERE id = :dialogueId").run({
    dialogueId,
    endReason,
    now: now.toISOString(),
    words: countTurnWords(turns),
  });
  insertCollected(db, { dialogueId, batchId: batch.id, task: 'write' }, now);
  endCollected(db, dialogueId, { outcome: 'complete', reason: `written: ${turns.length} turn(s) in ${Math.round(writingMs / 60_000)} min` }, now);
  markDraftSubmitted(db, rater.id, dialogueId, now);
  setRaterStatus(db, rater.id, 'completed', now);
  return dialogueId;
}

/** Hands the stored draft in, once: refused, in words for the writer, while it does not meet the batch's bounds. */
export function submitWriting(db: Db, batch: BatchRow, settings: BatchSettings, rater: RaterRow, names: readonly [string, string], now: Date): SubmitReply {
  return db
    .transaction((): SubmitReply => {
      const row = getDraft(db, rater.id);
      const write = writeOf(settings);
      const run = write ? findRun(db, write.run) : undefined;
      if (!row || !write || !run) return { kind: 'refused', status: 404, message: 'There is no conversation of yours to hand in: reload the page.' };
      if (row.state === 'submitted' && row.dialogue_id !== null) return { kind: 'submitted', dialogueId: row.dialogue_id };
      if (row.state !== 'writing') return { kind: 'refused', status: 409, message: 'You withdrew from this study; nothing more can be handed in.' };
      const problem = draftProblem(draftTurns(row), write.writing, names);
      if (problem) return { kind: 'refused', status: 400, message: problem };
      return { kind: 'submitted', dialogueId: storeWritten(db, batch, rater, row, run.id, now) };
    })
    .immediate();
}

/** A writer who withdraws: their draft is never handed in nor used. */
export function withdrawWriting(db: Db, raterId: number, now: Date): void {
  db.transaction(() => {
    markDraftWithdrawn(db, raterId);
    setRaterStatus(db, raterId, 'withdrew', now);
  })();
}
