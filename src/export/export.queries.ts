import type { Db } from '../db/connection.js';
import type { Action, Mode } from '../generation/mode.js';

// Every read the exports make. Exports only read: no table here is written.
// The exclusion rule lives in one SQL fragment so that every format applies the same one.

export type ExportBatchRow = {
  id: number;
  public_id: string;
  name: string;
  state: string;
  settings: string;
  question_version: number;
  judge_salt: string;
  created_at: string;
};

export function findExportBatch(db: Db, idOrPublicId: string): ExportBatchRow | undefined {
  const columns = 'id, public_id, name, state, settings, question_version, judge_salt, created_at';
  if (/^\d+$/.test(idOrPublicId)) {
    const byId = db
      .prepare<{ id: number }, ExportBatchRow>(`SELECT ${columns} FROM batches WHERE id = :id`)
      .get({ id: Number(idOrPublicId) });
    if (byId) return byId;
  }
  return db
    .prepare<{ publicId: string }, ExportBatchRow>(`SELECT ${columns} FROM batches WHERE public_id = :publicId`)
    .get({ publicId: idOrPublicId });
}

export type Scope = { batchId: number; includeExcluded: 0 | 1; includeGold: 0 | 1 };

/**
 * Why a judgment is left out, or NULL: the rater was excluded (their reason), screened out, or the pair was removed.
 * Expects the aliases r (raters) and p (pairs).
 */
const EXCLUSION_REASON = `CASE
    WHEN r.excluded = 1 THEN COALESCE(NULLIF(r.exclusion_reason, ''), 'excluded')
    WHEN r.status = 'screened_out' THEN 'screened out'
    WHEN p.removed_at IS NOT NULL THEN 'pair removed'
  END`;

/** Judgments in scope: gold left out unless asked, exclusions applied unless asked not to. Aliases j, p, r. */
const IN_SCOPE = `j.batch_id = :batchId
  AND (:includeGold = 1 OR j.is_gold = 0)
  AND (:includeExcluded = 1 OR (${EXCLUSION_REASON}) IS NULL)`;

export type JudgmentExportRow = {
  judgment_id: number;
  batch_id: number;
  pair_id: number;
  pair_kind: 'regular' | 'attention' | 'onboarding';
  scenario_id: string;
  scenario_category: string;
  model_a: string;
  model_b: string;
  dialogue_a_id: number;
  dialogue_b_id: number;
  left_side: 'a' | 'b';
  winner: 'a' | 'b' | 'tie';
  reason: string | null;
  rater_id: number;
  rater_public_id: string;
  provider: string;
  participant_id: string | null;
  study_id: string | null;
  session_id: string | null;
  is_gold: number;
  correct: number | null;
  shown_at: string;
  submitted_at: string;
  active_ms: number | null;
  question_version: number;
  exclusion_reason: string | null;
};

/** One row per judgment in scope, in pair then judgment order (formats that show dialogues reuse the last pair's). */
export function iterateJudgments(db: Db, scope: Scope): IterableIterator<JudgmentExportRow> {
  return db
    .prepare<Scope, JudgmentExportRow>(
      `SELECT j.id AS judgment_id, j.batch_id, j.pair_id, p.kind AS pair_kind, p.scenario_id, s.category AS scenario_category,
         COALESCE(c.condition_a, da.mode || ':' || da.model) AS model_a,
         COALESCE(c.condition_b, db.mode || ':' || db.model) AS model_b,
         p.dialogue_a_id, p.dialogue_b_id, j.left_side, j.winner, j.reason,
         r.id AS rater_id, r.public_id AS rater_public_id, r.provider, r.participant_id, r.study_id, r.session_id,
         j.is_gold, j.correct, j.shown_at, j.submitted_at, j.active_ms, j.question_version,
         ${EXCLUSION_REASON} AS exclusion_reason
       FROM judgments j
       JOIN pairs p ON p.id = j.pair_id
       JOIN raters r ON r.id = j.rater_id
       JOIN scenarios s ON s.id = p.scenario_id
       JOIN dialogues da ON da.id = p.dialogue_a_id
       JOIN dialogues db ON db.id = p.dialogue_b_id
       LEFT JOIN comparisons c ON c.id = p.comparison_id
       WHERE ${IN_SCOPE}
       ORDER BY j.pair_id, j.id`,
    )
    .iterate(scope);
}

export type PairVotesRow = {
  pair_id: number;
  comparison_id: number;
  scenario_id: string;
  scenario_category: string;
  condition_a: string;
  condition_b: string;
  dialogue_a_id: number;
  dialogue_b_id: number;
  votes_a: number;
  votes_b: number;
  votes_tie: number;
};

/** Vote counts per regular pair over the judgments in scope (gold pairs compare no conditions, so none here). */
export function iteratePairVotes(db: Db, scope: Scope): IterableIterator<PairVotesRow> {
  return db
    .prepare<Scope, PairVotesRow>(
      `SELECT p.id AS pair_id, p.comparison_id, p.scenario_id, s.category AS scenario_category,
         c.condition_a, c.condition_b, p.dialogue_a_id, p.dialogue_b_id,
         SUM(j.winner = 'a') AS votes_a, SUM(j.winner = 'b') AS votes_b, SUM(j.winner = 'tie') AS votes_tie
       FROM judgments j
       JOIN pairs p ON p.id = j.pair_id
       JOIN raters r ON r.id = j.rater_id
       JOIN scenarios s ON s.id = p.scenario_id
       JOIN comparisons c ON c.id = p.comparison_id
       WHERE ${IN_SCOPE} AND p.kind = 'regular'
       GROUP BY j.pair_id
       ORDER BY j.pair_id`,
    )
    .iterate(scope);
}

export type ComparisonRow = { id: number; position: number; condition_a: string; condition_b: string };

export function listComparisons(db: Db, batchId: number): ComparisonRow[] {
  return db
    .prepare<{ batchId: number }, ComparisonRow>(
      'SELECT id, position, condition_a, condition_b FROM comparisons WHERE batch_id = :batchId ORDER BY position, id',
    )
    .all({ batchId });
}

export type ExportDialogueRow = {
  id: number;
  run_id: number;
  run_name: string;
  scenario_id: string;
  cast_id: number;
  sample_index: number;
  mode: Mode;
  model: string;
  origin: string;
  illustrative: number;
  derived_from: number | null;
  state: string;
  seed: number | null;
  prompt_version: string | null;
  end_reason: string | null;
  meta: string;
  created_at: string;
  completed_at: string | null;
};

/**
 * The dialogues of the batch's pairs in scope: regular pairs (removed ones only with includeExcluded) and the gold
 * pairs' dialogues with includeGold.
 */
export function iterateDialogues(db: Db, scope: Scope): IterableIterator<ExportDialogueRow> {
  return db
    .prepare<Scope, ExportDialogueRow>(
      `SELECT d.id, d.run_id, ru.name AS run_name, d.scenario_id, d.cast_id, d.sample_index, d.mode, d.model, d.origin,
         d.illustrative, d.derived_from, d.state, d.seed, d.prompt_version, d.end_reason, d.meta, d.created_at, d.completed_at
       FROM dialogues d JOIN runs ru ON ru.id = d.run_id
       WHERE d.id IN (
         SELECT p.dialogue_a_id FROM pairs p WHERE p.batch_id = :batchId
           AND (:includeGold = 1 OR p.kind = 'regular') AND (:includeExcluded = 1 OR p.removed_at IS NULL)
         UNION
         SELECT p.dialogue_b_id FROM pairs p WHERE p.batch_id = :batchId
           AND (:includeGold = 1 OR p.kind = 'regular') AND (:includeExcluded = 1 OR p.removed_at IS NULL))
       ORDER BY d.id`,
    )
    .iterate(scope);
}

export type ExportTurnRow = { idx: number; speaker: 1 | 2; action: Action; text: string };

export function dialogueTurns(db: Db, dialogueId: number): ExportTurnRow[] {
  return db
    .prepare<{ dialogueId: number }, ExportTurnRow>(
      'SELECT idx, speaker, action, text FROM turns WHERE dialogue_id = :dialogueId ORDER BY idx',
    )
    .all({ dialogueId });
}

export type DialogueHeaderRow = { id: number; scenario_id: string; cast_id: number; mode: Mode; model: string };

export function dialogueHeader(db: Db, dialogueId: number): DialogueHeaderRow | undefined {
  return db
    .prepare<{ dialogueId: number }, DialogueHeaderRow>(
      'SELECT id, scenario_id, cast_id, mode, model FROM dialogues WHERE id = :dialogueId',
    )
    .get({ dialogueId });
}

export type CallTotalsRow = { calls: number; prompt_tokens: number; completion_tokens: number; latency_ms: number };

export function dialogueCallTotals(db: Db, dialogueId: number): CallTotalsRow {
  return db
    .prepare<{ dialogueId: number }, CallTotalsRow>(
      `SELECT count(*) AS calls, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens,
         COALESCE(SUM(completion_tokens), 0) AS completion_tokens, COALESCE(SUM(latency_ms), 0) AS latency_ms
       FROM llm_calls WHERE dialogue_id = :dialogueId`,
    )
    .get({ dialogueId }) as CallTotalsRow;
}

export type ExportCallRow = {
  id: number;
  turn_idx: number;
  speaker: number | null;
  attempt: number;
  request_hash: string;
  request: string;
  response: string | null;
  status: string;
  error: string | null;
  http_status: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  created_at: string;
};

export function dialogueCalls(db: Db, dialogueId: number): ExportCallRow[] {
  return db
    .prepare<{ dialogueId: number }, ExportCallRow>(
      `SELECT id, turn_idx, speaker, attempt, request_hash, request, response, status, error, http_status,
         prompt_tokens, completion_tokens, latency_ms, created_at
       FROM llm_calls WHERE dialogue_id = :dialogueId ORDER BY turn_idx, attempt, id`,
    )
    .all({ dialogueId });
}

export type ExportScenarioRow = {
  id: string;
  title: string;
  category: string;
  relationship: string;
  context: string;
  goal_1: string;
  goal_2: string;
  source: string;
};

export type ExportCharacterRow = {
  id: string;
  first_name: string;
  last_name: string;
  age: number | null;
  gender: string;
  pronouns: string;
  occupation: string;
  public_info: string;
  personality_and_values: string;
  decision_making_style: string;
  secret: string;
  big_five: string;
  moral_values: string;
  schwartz_values: string;
};

export type CastRow = { scenario: ExportScenarioRow; characters: [ExportCharacterRow, ExportCharacterRow] };

export function findCast(db: Db, castId: number): CastRow | undefined {
  const cast = db
    .prepare<{ castId: number }, { scenario_id: string; character_1_id: string; character_2_id: string }>(
      'SELECT scenario_id, character_1_id, character_2_id FROM casts WHERE id = :castId',
    )
    .get({ castId });
  if (!cast) return undefined;
  const scenario = db
    .prepare<{ id: string }, ExportScenarioRow>(
      'SELECT id, title, category, relationship, context, goal_1, goal_2, source FROM scenarios WHERE id = :id',
    )
    .get({ id: cast.scenario_id });
  const character = db.prepare<{ id: string }, ExportCharacterRow>(
    `SELECT id, first_name, last_name, age, gender, pronouns, occupation, public_info, personality_and_values,
       decision_making_style, secret, big_five, moral_values, schwartz_values FROM characters WHERE id = :id`,
  );
  const first = character.get({ id: cast.character_1_id });
  const second = character.get({ id: cast.character_2_id });
  if (!scenario || !first || !second) return undefined;
  return { scenario, characters: [first, second] };
}

export type ExportRunRow = {
  id: number;
  name: string;
  kind: string;
  state: string;
  endpoint_name: string | null;
  model: string | null;
  modes: string;
  scenario_selector: string;
  samples: number;
  temperature: number | null;
  max_tokens: number | null;
  max_turns: number | null;
  seed: number | null;
  response_format: string;
  prompt_version: string | null;
  settings: string;
  simulation_card: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};

/** Runs whose dialogues the batch's pairs use, plus the runs linked to the batch. */
export function listBatchRuns(db: Db, batchId: number): ExportRunRow[] {
  return db
    .prepare<{ batchId: number }, ExportRunRow>(
      `SELECT id, name, kind, state, endpoint_name, model, modes, scenario_selector, samples, temperature, max_tokens, max_turns,
         seed, response_format, prompt_version, settings, simulation_card, created_at, started_at, finished_at
       FROM runs WHERE id IN (
         SELECT run_id FROM batch_runs WHERE batch_id = :batchId
         UNION SELECT d.run_id FROM pairs p JOIN dialogues d ON d.id IN (p.dialogue_a_id, p.dialogue_b_id) WHERE p.batch_id = :batchId)
       ORDER BY id`,
    )
    .all({ batchId });
}

/** Prompt versions of the dialogues the batch uses (a run may mix versions when resumed after an upgrade). */
export function listPromptVersions(db: Db, batchId: number): string[] {
  return db
    .prepare<{ batchId: number }, string>(
      `SELECT DISTINCT COALESCE(d.prompt_version, ru.prompt_version) AS version
       FROM pairs p JOIN dialogues d ON d.id IN (p.dialogue_a_id, p.dialogue_b_id) JOIN runs ru ON ru.id = d.run_id
       WHERE p.batch_id = :batchId AND COALESCE(d.prompt_version, ru.prompt_version) IS NOT NULL
       ORDER BY version`,
    )
    .pluck()
    .all({ batchId });
}

export type RaterCountsRow = { raters: number; excluded: number; screened_out: number; with_judgments: number; included_with_judgments: number };

export function countRaters(db: Db, batchId: number): RaterCountsRow {
  return db
    .prepare<{ batchId: number }, RaterCountsRow>(
      `SELECT count(*) AS raters,
         COALESCE(SUM(excluded = 1), 0) AS excluded,
         COALESCE(SUM(excluded = 0 AND status = 'screened_out'), 0) AS screened_out,
         COALESCE(SUM(EXISTS (SELECT 1 FROM judgments j WHERE j.rater_id = raters.id AND j.is_gold = 0)), 0) AS with_judgments,
         COALESCE(SUM(excluded = 0 AND status <> 'screened_out'
           AND EXISTS (SELECT 1 FROM judgments j WHERE j.rater_id = raters.id AND j.is_gold = 0)), 0) AS included_with_judgments
       FROM raters WHERE batch_id = :batchId`,
    )
    .get({ batchId }) as RaterCountsRow;
}
