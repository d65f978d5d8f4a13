import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../db/connection.js';
import type { AnalysisReport } from './analysis-report.js';
import type { DialogueForMetrics } from './dialogue-metrics.js';
import { wordsPerTurn } from './dialogue-metrics.js';
import { judgePseudonym } from '../rating/judge-pseudonym.js';
import { createJudgmentTableBuilder, type JudgmentTable } from './judgment-table.js';
import { parseJsonColumn } from '../db/json-column.js';
import { DEFAULT_QUESTION, DEFAULT_QUESTION_ID, findQuestion } from '../batches/batch.schema.js';
import { UserFacingError } from '../errors/user-facing-error.js';

/**
 * Only the questions and whether ties are declared are read here; the rest of batches.settings is batchSettingsSchema's.
 * `questions` (issue 16) lists each question with its own tie rule; without it the single `question` is question "natural".
 */
const analysisSettingsSchema = z.looseObject({
  allowTie: z.unknown(),
  question: z.string().optional(),
  questions: z
    .array(z.looseObject({ id: z.string(), text: z.string(), allowTie: z.boolean().optional() }))
    .min(1)
    .nullable()
    .optional(),
});

/** A question of the batch as the analysis names it: its id, its text and whether it allowed ties. */
export type AnalysisQuestion = { id: string; text: string; tiesAllowed: boolean };

/** `tiesAllowed` is the first question's; `questions` are in page order (the first is the default everywhere). */
export type BatchForAnalysis = { id: number; name: string; judgeSalt: string; tiesAllowed: boolean; questions: AnalysisQuestion[] };

export function findBatchForAnalysis(db: Db, batchId: number): BatchForAnalysis | null {
  const row = db
    .prepare<{ id: number }, { id: number; name: string; judge_salt: string; settings: string }>(
      'SELECT id, name, judge_salt, settings FROM batches WHERE id = :id',
    )
    .get({ id: batchId });
  if (!row) return null;
  let tiesAllowed = false;
  let questions: AnalysisQuestion[] | null = null;
  let text = DEFAULT_QUESTION;
  try {
    const settings = parseJsonColumn(analysisSettingsSchema, row.settings, `batches.settings of batch ${row.id}`);
    tiesAllowed = settings.allowTie === true;
    text = settings.question ?? DEFAULT_QUESTION;
    questions = settings.questions?.map((q) => ({ id: q.id, text: q.text, tiesAllowed: q.allowTie === true })) ?? null;
  } catch {
    // Settings are validated on write; an unreadable value means no ties were declared and the one default question.
  }
  if (questions?.[0]) tiesAllowed = questions[0].tiesAllowed;
  return { id: row.id, name: row.name, judgeSalt: row.judge_salt, tiesAllowed, questions: questions ?? [{ id: DEFAULT_QUESTION_ID, text, tiesAllowed }] };
}

/** A question id no question of the batch has: a 400 in the console and the API, one line in the CLI. */
export class UnknownQuestionError extends UserFacingError {}

/** The batch's question with this id (the first question when none is asked); an unknown id names the batch's questions. */
export function resolveAnalysisQuestion(batch: Pick<BatchForAnalysis, 'id' | 'questions'>, id: string | undefined | null): AnalysisQuestion {
  const first = batch.questions[0] as AnalysisQuestion;
  if (id === undefined || id === null || id === '') return first;
  const found = findQuestion(batch.id, batch.questions, id);
  if ('problem' in found) throw new UnknownQuestionError(found.problem);
  return found.question;
}

/** Resolves `--batch` given as a row id, a public id or a name. */
export function resolveBatchId(db: Db, ref: string): number | null {
  const row = db
    .prepare<{ ref: string }, { id: number }>(
      `SELECT id FROM batches WHERE CAST(id AS TEXT) = :ref OR public_id = :ref OR name = :ref ORDER BY id LIMIT 1`,
    )
    .get({ ref });
  return row?.id ?? null;
}

/**
 * Changes whenever a judgment is added or removed, a rater is excluded or screened out, a pair is removed, or the
 * batch's settings change: the analysis cache key.
 */
export function batchDataVersion(db: Db, batchId: number): string {
  const judgments = db
    .prepare<{ b: number }, { n: number; max_id: number }>('SELECT count(*) AS n, coalesce(max(id), 0) AS max_id FROM judgments WHERE batch_id = :b')
    .get({ b: batchId });
  const raters = db
    .prepare<{ b: number }, { ids: string | null }>(
      `SELECT group_concat(id || ':' || excluded || ':' || status, ',') AS ids FROM
         (SELECT id, excluded, status FROM raters WHERE batch_id = :b AND (excluded = 1 OR status = 'screened_out') ORDER BY id)`,
    )
    .get({ b: batchId });
  const pairs = db
    .prepare<{ b: number }, { ids: string | null }>(
      'SELECT group_concat(id, \',\') AS ids FROM (SELECT id FROM pairs WHERE batch_id = :b AND removed_at IS NOT NULL ORDER BY id)',
    )
    .get({ b: batchId });
  const settings = db.prepare<{ b: number }, { settings: string }>('SELECT settings FROM batches WHERE id = :b').get({ b: batchId });
  return createHash('sha256')
    .update([judgments?.n, judgments?.max_id, raters?.ids ?? '', pairs?.ids ?? '', settings?.settings ?? ''].join('|'))
    .digest('hex')
    .slice(0, 32);
}

type JudgmentRow = {
  pair_id: number;
  rater_id: number;
  winner: 'a' | 'b' | 'tie';
  left_side: 'a' | 'b';
  active_ms: number | null;
  condition_a: string;
  condition_b: string;
  scenario_id: string;
  category: string;
  dialogue_a_id: number;
  dialogue_b_id: number;
};

export type BatchJudgments = {
  table: JudgmentTable;
  exclusions: AnalysisReport['exclusions'];
  attention: Map<string, { correct: number; answered: number }>;
  dialogues: DialogueForMetrics[];
};

/**
 * A batch's judgments to one question (default the first) with the exclusions applied: gold pairs (attention,
 * onboarding), raters excluded by a researcher or screened out, and removed pairs are left out and listed. One
 * question at a time: two questions' rows of one assignment are two answers of the same rater to the same pair, and
 * mixed they would count that rater twice in every win rate and agreement.
 */
export function loadBatchJudgments(db: Db, batch: BatchForAnalysis, questionId: string = (batch.questions[0] as AnalysisQuestion).id): BatchJudgments {
  const q = { b: batch.id, q: questionId };
  // Raters are named by the export's `judge` pseudonym, so a report and an export of the same batch can be joined.
  const pseudonyms = new Map(
    db
      .prepare<{ b: number }, { id: number; provider: string; participant_id: string | null; public_id: string }>(
        'SELECT id, provider, participant_id, public_id FROM raters WHERE batch_id = :b',
      )
      .all({ b: batch.id })
      .map((r) => [r.id, judgePseudonym(batch.judgeSalt, { provider: r.provider, participantId: r.participant_id, raterPublicId: r.public_id })]),
  );
  const name = (raterId: number) => pseudonyms.get(raterId) ?? `rater:${raterId}`;
  const excludedRaters = db
    .prepare<{ b: number; q: string }, { id: number; excluded: number; status: string; exclusion_reason: string | null; judgments: number }>(
      `SELECT r.id, r.excluded, r.status, r.exclusion_reason,
              (SELECT count(*) FROM judgments j WHERE j.rater_id = r.id AND j.is_gold = 0 AND j.question_id = :q) AS judgments
       FROM raters r WHERE r.batch_id = :b AND (r.excluded = 1 OR r.status = 'screened_out') ORDER BY r.id`,
    )
    .all(q);
  const dropped = db
    .prepare<{ b: number; q: string }, { gold: number; removed: number }>(
      `SELECT coalesce(sum(CASE WHEN j.is_gold = 1 OR p.kind <> 'regular' THEN 1 ELSE 0 END), 0) AS gold,
              coalesce(sum(CASE WHEN j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS removed
       FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.batch_id = :b AND j.question_id = :q`,
    )
    .get(q) ?? { gold: 0, removed: 0 };
  // Streamed into the column builder below, never held as a million row objects: that was most of the analysis
  // worker's gigabyte at 1M judgments, and the garbage collection it cost slowed the server beside it (issue 12).
  const rows = db
    .prepare<{ b: number; q: string }, JudgmentRow>(
      `SELECT j.pair_id, j.rater_id, j.winner, j.left_side, j.active_ms, c.condition_a, c.condition_b,
              p.scenario_id, s.category, p.dialogue_a_id, p.dialogue_b_id
       FROM judgments j
       JOIN pairs p ON p.id = j.pair_id
       JOIN comparisons c ON c.id = p.comparison_id
       JOIN scenarios s ON s.id = p.scenario_id
       JOIN raters r ON r.id = j.rater_id
       WHERE j.batch_id = :b AND j.question_id = :q AND j.is_gold = 0 AND p.kind = 'regular' AND p.removed_at IS NULL
         AND r.excluded = 0 AND r.status <> 'screened_out'
       ORDER BY j.id`,
    )
    .iterate(q);

  const dialogueRows = db
    .prepare<{ b: number }, { id: number; mode: string; model: string; end_reason: string | null }>(
      `SELECT d.id, d.mode, d.model, d.end_reason FROM dialogues d
       WHERE d.id IN (SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular'
                      UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular')
       ORDER BY d.id`,
    )
    .all({ b: batch.id });
  const dialogues = new Map<number, DialogueForMetrics>(
    dialogueRows.map((d) => [d.id, { mode: d.mode, model: d.model, endReason: d.end_reason, turns: [] }]),
  );
  const turnRows = db
    .prepare<{ b: number }, { dialogue_id: number; speaker: number; action: string; text: string }>(
      `SELECT t.dialogue_id, t.speaker, t.action, t.text FROM turns t
       WHERE t.dialogue_id IN (SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular'
                               UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular')
       ORDER BY t.dialogue_id, t.idx`,
    )
    .iterate({ b: batch.id });
  for (const t of turnRows) dialogues.get(t.dialogue_id)?.turns.push({ speaker: t.speaker, action: t.action, text: t.text });
  const wpt = new Map<number, number>([...dialogues].map(([id, d]) => [id, wordsPerTurn(d.turns)]));

  const builder = createJudgmentTableBuilder();
  for (const r of rows) {
    const problem = builder.add({
      item: String(r.pair_id),
      rater: name(r.rater_id),
      conditionA: r.condition_a,
      conditionB: r.condition_b,
      outcome: r.winner === 'a' ? 0 : r.winner === 'b' ? 1 : 2,
      left: r.left_side === 'a' ? 0 : 1,
      seconds: r.active_ms === null ? NaN : r.active_ms / 1000,
      aWords: wpt.get(r.dialogue_a_id) ?? NaN,
      bWords: wpt.get(r.dialogue_b_id) ?? NaN,
      scenario: r.scenario_id,
      category: r.category,
    });
    // A pair's comparison is fixed by the schema; say so loudly if that ever breaks.
    if (problem) throw new Error(`batch ${batch.id}: ${problem}`);
  }

  const attention = new Map<string, { correct: number; answered: number }>();
  const attentionRows = db
    .prepare<{ b: number }, { rater_id: number; correct: number; answered: number }>(
      `SELECT j.rater_id, coalesce(sum(j.correct), 0) AS correct, count(*) AS answered
       FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.batch_id = :b AND p.kind = 'attention' AND j.correct IS NOT NULL GROUP BY j.rater_id`,
    )
    .all({ b: batch.id });
  for (const a of attentionRows) attention.set(name(a.rater_id), { correct: a.correct, answered: a.answered });

  const droppedList: AnalysisReport['exclusions']['dropped'] = [];
  if (dropped.gold > 0) droppedList.push({ reason: 'gold (attention or onboarding) pairs', judgments: dropped.gold });
  if (dropped.removed > 0) droppedList.push({ reason: 'pairs removed from the batch', judgments: dropped.removed });
  return {
    table: builder.build(),
    exclusions: {
      raters: excludedRaters.map((r) => ({
        rater: name(r.id),
        reason: r.excluded === 1 ? `excluded: ${r.exclusion_reason ?? 'no reason given'}` : 'screened out (failed attention checks or onboarding)',
        judgments: r.judgments,
      })),
      dropped: droppedList,
    },
    attention,
    dialogues: [...dialogues.values()],
  };
}

/** Gold pairs of a batch made from a scenario sample that also has regular pairs (src/batches/gold-sources.ts). */
export function countGoldFromRatedSamples(db: Db, batchId: number): number {
  return db
    .prepare<{ b: number }, number>(
      `SELECT count(*) FROM pairs g WHERE g.batch_id = :b AND g.kind <> 'regular' AND EXISTS (
         SELECT 1 FROM pairs p WHERE p.batch_id = g.batch_id AND p.kind = 'regular'
           AND p.scenario_id = g.scenario_id AND p.cast_id = g.cast_id AND p.sample_index = g.sample_index)`,
    )
    .pluck()
    .get({ b: batchId }) ?? 0;
}
