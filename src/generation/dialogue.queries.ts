import type { Db } from '../db/connection.js';
import type { Action, Mode } from './mode.js';
import { countTurnWords } from './dialogue-words.js';

export type DialogueState = 'pending' | 'running' | 'complete' | 'failed';
export type DialogueOrigin = 'generated' | 'imported' | 'demo' | 'derived' | 'collected';

export type DialogueRow = {
  id: number;
  run_id: number;
  scenario_id: string;
  cast_id: number;
  sample_index: number;
  mode: Mode;
  model: string;
  origin: DialogueOrigin;
  illustrative: number;
  derived_from: number | null;
  state: DialogueState;
  failure_reason: string | null;
  seed: number | null;
  prompt_version: string | null;
  end_reason: string | null;
  meta: string;
  created_at: string;
  completed_at: string | null;
  /** 1, then one more each time the dialogue is generated again after it failed (its calls carry the same number). */
  generation: number;
};

export type TurnRow = { idx: number; speaker: 1 | 2; action: Action; text: string; call_id: number | null };
export type NewTurn = { speaker: 1 | 2; action: Action; text: string; callId?: number | null };

const DIALOGUE_COLUMNS =
  'id, run_id, scenario_id, cast_id, sample_index, mode, model, origin, illustrative, derived_from, state, failure_reason, seed, prompt_version, end_reason, meta, created_at, completed_at, generation';

export type NewDialogue = {
  runId: number;
  scenarioId: string;
  castId: number;
  sampleIndex: number;
  mode: Mode;
  model: string;
  origin: DialogueOrigin;
  illustrative?: boolean;
  derivedFrom?: number | null;
  state: DialogueState;
  seed?: number | null;
  promptVersion?: string | null;
  endReason?: string | null;
  meta?: Record<string, unknown>;
};

export function insertDialogue(db: Db, dialogue: NewDialogue, now: Date): number {
  const result = db
    .prepare(
      `INSERT INTO dialogues (run_id, scenario_id, cast_id, sample_index, mode, model, origin, illustrative, derived_from,
         state, seed, prompt_version, end_reason, meta, created_at, completed_at)
       VALUES (:runId, :scenarioId, :castId, :sampleIndex, :mode, :model, :origin, :illustrative, :derivedFrom,
         :state, :seed, :promptVersion, :endReason, :meta, :now, :completedAt)`,
    )
    .run({
      ...dialogue,
      illustrative: dialogue.illustrative ? 1 : 0,
      derivedFrom: dialogue.derivedFrom ?? null,
      seed: dialogue.seed ?? null,
      promptVersion: dialogue.promptVersion ?? null,
      endReason: dialogue.endReason ?? null,
      meta: JSON.stringify(dialogue.meta ?? {}),
      now: now.toISOString(),
      completedAt: dialogue.state === 'complete' ? now.toISOString() : null,
    });
  return Number(result.lastInsertRowid);
}

/** Replaces a dialogue's turns (one transaction is the caller's). */
export function replaceTurns(db: Db, dialogueId: number, turns: NewTurn[]): void {
  db.prepare('DELETE FROM turns WHERE dialogue_id = :dialogueId').run({ dialogueId });
  const insert = db.prepare(
    'INSERT INTO turns (dialogue_id, idx, speaker, action, text, call_id) VALUES (:dialogueId, :idx, :speaker, :action, :text, :callId)',
  );
  turns.forEach((turn, idx) => {
    insert.run({ dialogueId, idx, speaker: turn.speaker, action: turn.action, text: turn.text, callId: turn.callId ?? null });
  });
  // Counted once here, not from every turn each time a page promises a time (src/rating/consent-time.queries.ts).
  db.prepare('UPDATE dialogues SET words = :words WHERE id = :dialogueId').run({ dialogueId, words: countTurnWords(turns) });
}

export function getDialogue(db: Db, id: number): DialogueRow | undefined {
  return db.prepare<{ id: number }, DialogueRow>(`SELECT ${DIALOGUE_COLUMNS} FROM dialogues WHERE id = :id`).get({ id });
}

export function listTurns(db: Db, dialogueId: number): TurnRow[] {
  return db
    .prepare<{ dialogueId: number }, TurnRow>(
      'SELECT idx, speaker, action, text, call_id FROM turns WHERE dialogue_id = :dialogueId ORDER BY idx',
    )
    .all({ dialogueId });
}

export type DialogueCounts = { total: number; pending: number; running: number; complete: number; failed: number };

export function countRunDialogues(db: Db, runId: number): DialogueCounts {
  return db
    .prepare<{ runId: number }, DialogueCounts>(
      `SELECT count(*) AS total,
              coalesce(sum(state = 'pending'), 0) AS pending,
              coalesce(sum(state = 'running'), 0) AS running,
              coalesce(sum(state = 'complete'), 0) AS complete,
              coalesce(sum(state = 'failed'), 0) AS failed
       FROM dialogues WHERE run_id = :runId`,
    )
    .get({ runId }) as DialogueCounts;
}

export function listRunDialogues(db: Db, runId: number): DialogueRow[] {
  return db
    .prepare<{ runId: number }, DialogueRow>(`SELECT ${DIALOGUE_COLUMNS} FROM dialogues WHERE run_id = :runId ORDER BY id`)
    .all({ runId });
}

/** Dialogues still to generate: pending, or left running by a stopped process. */
export function listUnfinishedDialogueIds(db: Db, runId: number): number[] {
  return db
    .prepare<{ runId: number }, { id: number }>(
      `SELECT id FROM dialogues WHERE run_id = :runId AND state IN ('pending', 'running') ORDER BY id`,
    )
    .all({ runId })
    .map((r) => r.id);
}

export function setDialogueRunning(db: Db, id: number): void {
  db.prepare(`UPDATE dialogues SET state = 'running' WHERE id = :id AND state IN ('pending', 'running')`).run({ id });
}

export function resetRunningDialogues(db: Db, runId: number): void {
  db.prepare(`UPDATE dialogues SET state = 'pending' WHERE run_id = :runId AND state = 'running'`).run({ runId });
}

/** Stores a finished dialogue and its turns together: a dialogue is never complete without its turns. */
export function completeDialogue(
  db: Db,
  id: number,
  result: { turns: NewTurn[]; endReason: string; meta?: Record<string, unknown> },
  now: Date,
): void {
  db.transaction(() => {
    replaceTurns(db, id, result.turns);
    db.prepare(
      `UPDATE dialogues SET state = 'complete', end_reason = :endReason, failure_reason = NULL,
         meta = CASE WHEN :meta IS NULL THEN meta ELSE :meta END, completed_at = :now WHERE id = :id`,
    ).run({ id, endReason: result.endReason, meta: result.meta ? JSON.stringify(result.meta) : null, now: now.toISOString() });
  })();
}

/**
 * Stores a dialogue that was generated but fails a gate (too few spoken turns): its turns are kept for
 * inspection, and its state keeps it out of every batch.
 */
export function failDialogueWithTurns(db: Db, id: number, result: { turns: NewTurn[]; endReason: string; reason: string; meta?: Record<string, unknown> }, now: Date): void {
  db.transaction(() => {
    replaceTurns(db, id, result.turns);
    db.prepare(
      `UPDATE dialogues SET state = 'failed', end_reason = :endReason, failure_reason = :reason,
         meta = CASE WHEN :meta IS NULL THEN meta ELSE :meta END, completed_at = :now WHERE id = :id`,
    ).run({ id, endReason: result.endReason, reason: result.reason, meta: result.meta ? JSON.stringify(result.meta) : null, now: now.toISOString() });
  })();
}

/**
 * Makes a run's failed dialogues pending again, each in a new generation: the failure is appended to
 * `meta.earlier_failures` (generation, reason, time) and its turns are removed; its calls stay. Returns their ids.
 */
export function retryFailedDialogues(db: Db, runId: number): number[] {
  return db.transaction(() => {
    const ids = db
      .prepare<{ runId: number }, { id: number }>(`SELECT id FROM dialogues WHERE run_id = :runId AND state = 'failed' ORDER BY id`)
      .all({ runId })
      .map((r) => r.id);
    for (const id of ids) {
      db.prepare('DELETE FROM turns WHERE dialogue_id = :id').run({ id });
      db.prepare(
        `UPDATE dialogues SET words = NULL,
           meta = json_insert(
             CASE WHEN json_type(meta, '$.earlier_failures') = 'array' THEN meta ELSE json_set(meta, '$.earlier_failures', json('[]')) END,
             '$.earlier_failures[#]', json_object('generation', generation, 'reason', failure_reason, 'at', completed_at)),
           state = 'pending', failure_reason = NULL, end_reason = NULL, completed_at = NULL, generation = generation + 1
         WHERE id = :id`,
      ).run({ id });
    }
    return ids;
  })();
}

export function failDialogue(db: Db, id: number, reason: string, now: Date): void {
  db.prepare(`UPDATE dialogues SET state = 'failed', failure_reason = :reason, completed_at = :now WHERE id = :id`).run({
    id,
    reason,
    now: now.toISOString(),
  });
}
