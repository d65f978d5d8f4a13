import type { Question } from '../batches/batch.schema.js';
import type { ExportContext } from './export-context.js';
import { type JudgmentExportRow, iterateJudgments } from './export.queries.js';
import { judgePseudonym } from '../rating/judge-pseudonym.js';
import { csvLine, jsonLine, writeChunk } from './stream-write.js';

// One row per judgment. Column names follow Chatbot Arena's releases (model_a, model_b, winner, judge); model_a is
// the comparison's first condition (MODE:model), whichever side it was shown on (`left`).

export type JudgmentRecord = Record<string, string | number | boolean | null>;

export function judgmentColumns(ctx: ExportContext): string[] {
  return [
    'judgment_id',
    'batch_id',
    'pair_id',
    'question_id',
    'question_kind',
    'scenario_id',
    'scenario_category',
    'model_a',
    'model_b',
    'left',
    'winner',
    'real_side',
    'confidence',
    'reason',
    'judge',
    ...(ctx.options.withProviderIds ? ['participant_id', 'study_id', 'session_id'] : []),
    'provider',
    'is_gold',
    'correct',
    'shown_at',
    'submitted_at',
    'active_time_s',
    'question_version',
    'excluded',
    ...(ctx.options.includeExcluded ? ['exclusion_reason'] : []),
    'reallocation_id',
    ...SIGNAL_COLUMNS,
  ];
}

/**
 * What the rater's page measured for the answer, checked by the server (issue 43; docs/researcher/quality-signals.md):
 * empty when the page sent nothing (no JavaScript). Every question's row of one page carries its page's figures.
 */
export const SIGNAL_COLUMNS = ['telemetry', 'reason_pasted_share', 'paste_events', 'keystrokes', 'typing_time_s', 'hidden_time_s', 'answered_before_conversation_2', 'answer_key'] as const;

function signalFields(row: JudgmentExportRow): JudgmentRecord {
  const chars = row.sig_reason_chars ?? 0;
  return {
    telemetry: row.telemetry,
    reason_pasted_share: row.telemetry === null || chars === 0 ? null : Math.min(1, (row.sig_pasted_chars ?? 0) / chars),
    paste_events: row.sig_paste_events,
    keystrokes: row.sig_keystrokes,
    typing_time_s: row.sig_typing_ms === null ? null : row.sig_typing_ms / 1000,
    hidden_time_s: row.sig_hidden_ms === null ? null : row.sig_hidden_ms / 1000,
    answered_before_conversation_2: row.sig_before_second === null ? null : row.sig_before_second === 1,
    answer_key: row.sig_answer_key,
  };
}

const WINNER = { a: 'model_a', b: 'model_b', tie: 'tie' } as const;

/**
 * What a judgment record depends on: an export's context, or the JSON API's judgments list (src/api). `meta.questions`:
 * the batch's questions, for each row's question_kind and real_side (issue 53).
 */
export type JudgmentRecordContext = {
  batch: Pick<ExportContext['batch'], 'judge_salt'>;
  options: Pick<ExportContext['options'], 'withProviderIds' | 'includeExcluded'>;
  meta: { questions: readonly Pick<Question, 'id' | 'kind' | 'real'>[] };
};

/**
 * A row's question kind, and for a which-is-real question the side (`a` or `b`, as model_a and model_b) whose
 * dialogue is the real one; null for a preference question and for a pair of neither condition (a gold pair).
 */
function realismFields(ctx: JudgmentRecordContext, row: JudgmentExportRow): { question_kind: string; real_side: 'a' | 'b' | null } {
  const question = ctx.meta.questions.find((q) => q.id === row.question_id);
  const kind = question?.kind ?? 'preference';
  const real = kind === 'which-is-real' ? question?.real : undefined;
  return { question_kind: kind, real_side: real === undefined ? null : row.model_a === real ? 'a' : row.model_b === real ? 'b' : null };
}

export function judgmentRecord(ctx: JudgmentRecordContext, row: JudgmentExportRow): JudgmentRecord {
  const realism = realismFields(ctx, row);
  const record: JudgmentRecord = {
    judgment_id: row.judgment_id,
    batch_id: row.batch_id,
    pair_id: row.pair_id,
    question_id: row.question_id,
    question_kind: realism.question_kind,
    scenario_id: row.scenario_id,
    scenario_category: row.scenario_category,
    model_a: row.model_a,
    model_b: row.model_b,
    left: row.left_side,
    winner: WINNER[row.winner],
    real_side: realism.real_side,
    confidence: row.confidence,
    reason: row.reason,
    judge: judgePseudonym(ctx.batch.judge_salt, { provider: row.provider, participantId: row.participant_id, raterPublicId: row.rater_public_id }),
  };
  if (ctx.options.withProviderIds) {
    record.participant_id = row.participant_id;
    record.study_id = row.study_id;
    record.session_id = row.session_id;
  }
  Object.assign(record, {
    provider: row.provider,
    is_gold: row.is_gold === 1,
    correct: row.correct === null ? null : row.correct === 1,
    shown_at: row.shown_at,
    submitted_at: row.submitted_at,
    active_time_s: row.active_ms === null ? null : row.active_ms / 1000,
    question_version: row.question_version,
    excluded: row.exclusion_reason !== null,
  });
  if (ctx.options.includeExcluded) record.exclusion_reason = row.exclusion_reason;
  record.reallocation_id = row.reallocation_id;
  Object.assign(record, signalFields(row));
  return record;
}

export async function writeJudgmentsCsv(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  const columns = judgmentColumns(ctx);
  await writeChunk(out, csvLine(columns));
  let rows = 0;
  for (const row of iterateJudgments(ctx.db, ctx.scope)) {
    const record = judgmentRecord(ctx, row);
    await writeChunk(out, csvLine(columns.map((c) => record[c])));
    rows++;
  }
  return rows;
}

export async function writeJudgmentsJsonl(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  let rows = 0;
  for (const row of iterateJudgments(ctx.db, ctx.scope)) {
    await writeChunk(out, jsonLine(judgmentRecord(ctx, row)));
    rows++;
  }
  return rows;
}
