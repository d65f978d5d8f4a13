import { type BatchRow, getBatchRow, getBatchRowByPublicId } from '../batches/batch.queries.js';
import type { Db } from '../db/connection.js';
import { type DialogueRow, getDialogue } from '../generation/dialogue.queries.js';
import { type RunRow, getRun } from '../generation/run.queries.js';
import { type CharacterRow, type ScenarioRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';

// Every read the exports make. Exports only read: no table here is written.
// The exclusion rule lives in one SQL fragment so that every format applies the same one.

/** A batch by its numeric id or its public id, read through the batches feature. */
export function findExportBatch(db: Db, idOrPublicId: string): BatchRow | undefined {
  const byId = /^\d+$/.test(idOrPublicId) ? getBatchRow(db, Number(idOrPublicId)) : undefined;
  return byId ?? getBatchRowByPublicId(db, idOrPublicId);
}

/**
 * `questionId` (issue 16): one question's answers, or null for every question's (each row names its question). Formats
 * that count votes (arena, acute, preferences, hf) always pass one question: two questions' rows of one assignment
 * would count that rater twice.
 */
export type Scope = { batchId: number; includeExcluded: 0 | 1; includeGold: 0 | 1; questionId: string | null };

/**
 * Why a judgment is left out, or NULL: the rater was screened out, excluded (their reason), or the pair was removed.
 * Screening out (src/rating/record-judgment.ts) also sets excluded = 1 with the check that failed, `onboarding` or
 * `attention`, as the reason; that is said as `screened out (onboarding)` so it does not read as a researcher's call.
 * Expects the aliases r (raters) and p (pairs).
 */
const EXCLUSION_REASON = `CASE
    WHEN r.status = 'screened_out' AND r.excluded = 1 AND r.exclusion_reason IN ('onboarding', 'attention')
      THEN 'screened out (' || r.exclusion_reason || ')'
    WHEN r.excluded = 1 THEN COALESCE(NULLIF(r.exclusion_reason, ''), 'excluded')
    WHEN r.status = 'screened_out' THEN 'screened out'
    WHEN p.removed_at IS NOT NULL THEN 'pair removed'
  END`;

/** Judgments in scope: gold left out unless asked, exclusions applied unless asked not to. Aliases j, p, r. */
const IN_SCOPE = `j.batch_id = :batchId
  AND (:questionId IS NULL OR j.question_id = :questionId)
  AND (:includeGold = 1 OR j.is_gold = 0)
  AND (:includeExcluded = 1 OR (${EXCLUSION_REASON}) IS NULL)`;

export type JudgmentExportRow = {
  judgment_id: number;
  batch_id: number;
  pair_id: number;
  question_id: string;
  question_index: number;
  pair_kind: 'regular' | 'attention' | 'onboarding';
  /** The reallocation that added the pair (sequential batches with `reallocate`), or null for a pair the batch formed. */
  reallocation_id: number | null;
  scenario_id: string;
  scenario_category: string;
  model_a: string;
  model_b: string;
  dialogue_a_id: number;
  dialogue_b_id: number;
  left_side: 'a' | 'b';
  winner: 'a' | 'b' | 'tie';
  reason: string | null;
  /** A which-is-real answer's confidence 1-5 (migration 070); null otherwise. */
  confidence: number | null;
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
  /** The page's checked figures for the answer (migration 035); null when the page sent none. */
  telemetry: 'plausible' | 'implausible' | null;
  sig_reason_chars: number | null;
  sig_paste_events: number | null;
  sig_pasted_chars: number | null;
  sig_keystrokes: number | null;
  sig_typing_ms: number | null;
  sig_hidden_ms: number | null;
  sig_before_second: number | null;
  sig_answer_key: string | null;
};

/**
 * The judgment row's SELECT over the judgments in scope, in pair then judgment order (a stable order for pages): an
 * assignment's rows are written together, first question first, so they stay side by side in page order.
 */
const judgmentsFrom = (judgments: string) => `SELECT j.id AS judgment_id, j.batch_id, j.pair_id, j.question_id, j.question_index, p.kind AS pair_kind, p.reallocation_id, p.scenario_id, s.category AS scenario_category,
         COALESCE(c.condition_a, da.mode || ':' || da.model) AS model_a,
         COALESCE(c.condition_b, db.mode || ':' || db.model) AS model_b,
         p.dialogue_a_id, p.dialogue_b_id, j.left_side, j.winner, j.reason, j.confidence,
         r.id AS rater_id, r.public_id AS rater_public_id, r.provider, r.participant_id, r.study_id, r.session_id,
         j.is_gold, j.correct, j.shown_at, j.submitted_at, j.active_ms, j.question_version,
         ${EXCLUSION_REASON} AS exclusion_reason,
         sig.telemetry, sig.reason_chars AS sig_reason_chars, sig.paste_events AS sig_paste_events, sig.pasted_chars AS sig_pasted_chars,
         sig.keystrokes AS sig_keystrokes, sig.typing_ms AS sig_typing_ms, sig.hidden_ms AS sig_hidden_ms, sig.answered_before_second AS sig_before_second,
         sig.answer_key AS sig_answer_key
       FROM ${judgments}
       JOIN pairs p ON p.id = j.pair_id
       JOIN raters r ON r.id = j.rater_id
       JOIN scenarios s ON s.id = p.scenario_id
       JOIN dialogues da ON da.id = p.dialogue_a_id
       JOIN dialogues db ON db.id = p.dialogue_b_id
       LEFT JOIN comparisons c ON c.id = p.comparison_id
       LEFT JOIN answer_signals sig ON sig.assignment_id = j.assignment_id
       WHERE ${IN_SCOPE}
       ORDER BY j.pair_id, j.id`;
const JUDGMENTS_IN_SCOPE = judgmentsFrom('judgments j');

/** One row per judgment in scope, in pair then judgment order (formats that show dialogues reuse the last pair's). */
export function iterateJudgments(db: Db, scope: Scope): IterableIterator<JudgmentExportRow> {
  return db.prepare<Scope, JudgmentExportRow>(JUDGMENTS_IN_SCOPE).iterate(scope);
}

/** Where a page of a batch's judgments starts: after so many of them, or after a given one (keyset: pair, then judgment). */
export type JudgmentsPageStart = { offset: number } | { after: { pairId: number; judgmentId: number } };

/**
 * One page of every judgment of a batch (gold and excluded ones flagged, not left out), in the same rows and order as
 * the exports, for the JSON API's judgments list: it and the exports share one row and one exclusion rule. The page's
 * judgments are picked from an index alone and only they are joined: skipping to page 1,900 of a million judgments
 * through the joins took 1 s on the request thread (issue 12), from the index 25 ms. CROSS JOIN keeps SQLite from
 * walking every judgment of the batch first (its plan for the ORDER BY) and looking each one up in the page. A page
 * that starts `after` a judgment seeks to it in the index, so the last page costs what the first does, where an offset
 * still walks every index entry before it.
 */
export function listBatchJudgmentsPage(db: Db, batchId: number, questionId: string | null, limit: number, start: JudgmentsPageStart): JudgmentExportRow[] {
  const after = 'after' in start ? start.after : null;
  const onePage = `SELECT id FROM judgments WHERE batch_id = :batchId${questionId === null ? '' : ' AND question_id = :questionId'}${
    after ? ' AND (pair_id, id) > (:afterPair, :afterId)' : ''
  } ORDER BY pair_id, id LIMIT :limit${after ? '' : ' OFFSET :offset'}`;
  const paging = 'after' in start ? { afterPair: start.after.pairId, afterId: start.after.judgmentId } : { offset: start.offset };
  return db
    .prepare<Scope & { limit: number }, JudgmentExportRow>(judgmentsFrom(`(${onePage}) AS page CROSS JOIN judgments j ON j.id = page.id`))
    .all({ batchId, questionId, includeExcluded: 1, includeGold: 1, limit, ...paging });
}

/** How many judgments the batch holds (of one question, or of all), from the counts migration 025 keeps. */
export function countBatchJudgments(db: Db, batchId: number, questionId: string | null): number {
  return db
    .prepare<{ batchId: number; questionId: string | null }, number>(
      'SELECT coalesce(sum(judgments), 0) FROM judgment_question_counts WHERE batch_id = :batchId AND (:questionId IS NULL OR question_id = :questionId)',
    )
    .pluck()
    .get({ batchId, questionId }) as number;
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

/** A dialogue as its owner reads it, with the name of its run. */
export type ExportDialogueRow = DialogueRow & { run_name: string };

/**
 * The ids of the dialogues of the batch's pairs in scope, streamed: regular pairs (removed ones only with
 * includeExcluded) and the gold pairs' dialogues with includeGold.
 */
export function iterateDialogueIds(db: Db, scope: Scope): IterableIterator<number> {
  return db
    .prepare<Scope, number>(
      `SELECT p.dialogue_a_id AS id FROM pairs p WHERE p.batch_id = :batchId
         AND (:includeGold = 1 OR p.kind = 'regular') AND (:includeExcluded = 1 OR p.removed_at IS NULL)
       UNION
       SELECT p.dialogue_b_id FROM pairs p WHERE p.batch_id = :batchId
         AND (:includeGold = 1 OR p.kind = 'regular') AND (:includeExcluded = 1 OR p.removed_at IS NULL)
       ORDER BY id`,
    )
    .pluck()
    .iterate(scope);
}

/**
 * The dialogues of the batch's pairs in scope, one at a time, read through the generation feature's getDialogue
 * (the owner of the table and its column list); run names are looked up once per run.
 */
export function* iterateDialogues(db: Db, scope: Scope): Generator<ExportDialogueRow> {
  const runNames = new Map<number, string>();
  for (const id of iterateDialogueIds(db, scope)) {
    const dialogue = getDialogue(db, id);
    if (!dialogue) continue;
    let runName = runNames.get(dialogue.run_id);
    if (runName === undefined) {
      runName = getRun(db, dialogue.run_id)?.name ?? '';
      runNames.set(dialogue.run_id, runName);
    }
    yield { ...dialogue, run_name: runName };
  }
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

/** A dialogue's cast as the formats print it: the scenario and both characters, from the scenarios feature. */
export type DialogueCast = { scenario: ScenarioRow; characters: [CharacterRow, CharacterRow] };

export function findDialogueCast(db: Db, castId: number): DialogueCast | undefined {
  const cast = getCast(db, castId);
  if (!cast) return undefined;
  const scenario = getScenario(db, cast.scenario_id);
  const first = getCharacter(db, cast.character_1_id);
  const second = getCharacter(db, cast.character_2_id);
  if (!scenario || !first || !second) return undefined;
  return { scenario, characters: [first, second] };
}

/** Runs whose dialogues the batch's pairs use, plus the runs linked to the batch, as the generation feature reads them. */
export function listBatchRuns(db: Db, batchId: number): RunRow[] {
  return db
    .prepare<{ batchId: number }, number>(
      `SELECT run_id FROM batch_runs WHERE batch_id = :batchId
       UNION SELECT d.run_id FROM pairs p JOIN dialogues d ON d.id IN (p.dialogue_a_id, p.dialogue_b_id) WHERE p.batch_id = :batchId
       ORDER BY 1`,
    )
    .pluck()
    .all({ batchId })
    .map((id) => getRun(db, id))
    .filter((run): run is RunRow => run !== undefined);
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

/**
 * `excluded`: by a researcher; `screened_out`: by the onboarding or attention checks (whatever `excluded` says). A
 * researcher's exclusion also ends a session in progress as screened out, remembering the step in
 * `status_before_exclusion` (src/rating/rater-admin.ts): such a rater counts as excluded by the researcher.
 */
export type RaterCountsRow = { raters: number; excluded: number; screened_out: number; with_judgments: number; included_with_judgments: number };

export function countRaters(db: Db, batchId: number): RaterCountsRow {
  return db
    .prepare<{ batchId: number }, RaterCountsRow>(
      `SELECT count(*) AS raters,
         COALESCE(SUM(excluded = 1 AND (status <> 'screened_out' OR status_before_exclusion IS NOT NULL)), 0) AS excluded,
         COALESCE(SUM(status = 'screened_out' AND status_before_exclusion IS NULL), 0) AS screened_out,
         COALESCE(SUM(EXISTS (SELECT 1 FROM judgments j WHERE j.rater_id = raters.id AND j.is_gold = 0)), 0) AS with_judgments,
         COALESCE(SUM(excluded = 0 AND status <> 'screened_out'
           AND EXISTS (SELECT 1 FROM judgments j WHERE j.rater_id = raters.id AND j.is_gold = 0)), 0) AS included_with_judgments
       FROM raters WHERE batch_id = :batchId`,
    )
    .get({ batchId }) as RaterCountsRow;
}
