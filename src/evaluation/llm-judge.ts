import { z } from 'zod';
import type { batchSettingsSchema } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { resolveBatchRef } from '../batches/batch-ref.js';
import { getBatchRow } from '../batches/batch.queries.js';
import type { Db } from '../db/connection.js';
import type { ChatRequest, ResponseFormat } from '../generation/llm-client.js';
import type { Parsed } from '../generation/model-output.schema.js';
import { fillTemplate } from '../generation/prompts.js';
import { type ComparisonView, buildComparisonView } from '../rating/comparison-view.js';
import { parseJsonAnswer, zodMessage } from './episode-output.schema.js';
import type { JudgeItem } from './batch-api-run.js';
import { type EvaluateOptions, type EvaluationOutcome, chooseEvaluationName, loadEvaluationPrompts, parseEvaluationSettings, runJudgeItems } from './evaluate-run.js';
import type { ResolvedEndpoint } from '../generation/endpoints.js';
import { EvaluationInputError } from './evaluation-error.js';
import { type EvaluationRow, getEvaluation, insertEvaluation, listLlmJudgments, saveLlmJudgment } from './evaluation.queries.js';
import { DEFAULT_EVALUATION_SETTINGS, type EvaluationSettings } from './judge-call.js';
import { type JudgePromptSet, loadJudgePrompts } from './judge-prompts.js';

// An LLM judge beside the human raters (issue 15): the batch's own question on the batch's own pairs, each pair in
// both orders (position bias, as MT-Bench measures it: Zheng et al. 2023, §3.3), blinded as raters are: the text is
// built by the rater's own rendering (src/rating/comparison-view.ts), which carries no mode, model or id. Answers go
// to `llm_judgments`, never to `judgments`: a model is never counted as a rater.

export type JudgePair = { id: number; dialogue_a_id: number; dialogue_b_id: number; scenario_id: string; cast_id: number };

export type BatchForJudge = { id: number; name: string; question: string; context: z.infer<typeof batchSettingsSchema>['context']; allowTie: boolean; pairs: JudgePair[] };

/** The batch's regular pairs still in it, in id order. */
function listJudgePairs(db: Db, batchId: number): JudgePair[] {
  return db
    .prepare<{ b: number }, JudgePair>(
      `SELECT id, dialogue_a_id, dialogue_b_id, scenario_id, cast_id FROM pairs
       WHERE batch_id = :b AND kind = 'regular' AND removed_at IS NULL ORDER BY id`,
    )
    .all({ b: batchId });
}

/** `--batch` as an id, public id or name; one line when unknown or without pairs. */
export function findBatchToJudge(db: Db, ref: string): BatchForJudge {
  const batch = getBatchRow(db, resolveBatchRef(db, ref));
  if (!batch) throw new EvaluationInputError(`no batch "${ref}": see simarena batches list`);
  const settings = readBatchSettings(batch);
  const pairs = listJudgePairs(db, batch.id);
  if (pairs.length === 0) throw new EvaluationInputError(`batch "${batch.name}" has no pairs to judge`);
  return { id: batch.id, name: batch.name, question: settings.question, context: settings.context, allowTie: settings.allowTie, pairs };
}

const answerSchema = z.object({ reasoning: z.string().max(20_000), answer: z.enum(['1', '2', 'tie']) });
export type PairwiseAnswer = { reasoning: string; choice: 'left' | 'right' | 'tie' };

export function pairwiseResponseFormat(kind: 'json_schema' | 'json_object', allowTie: boolean): ResponseFormat {
  if (kind === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: 'pairwise_judgment',
      strict: true,
      schema: {
        type: 'object',
        properties: { reasoning: { type: 'string' }, answer: { type: 'string', enum: allowTie ? ['1', '2', 'tie'] : ['1', '2'] } },
        required: ['reasoning', 'answer'],
        additionalProperties: false,
      },
    },
  };
}

export function parsePairwiseAnswer(content: string | null, allowTie: boolean): Parsed<PairwiseAnswer> {
  const json = parseJsonAnswer(content);
  if (!json.ok) return json;
  const parsed = answerSchema.safeParse(json.value);
  if (!parsed.success) return { ok: false, error: zodMessage(parsed.error) };
  if (parsed.data.answer === 'tie' && !allowTie) return { ok: false, error: 'field "answer" is "tie", but this batch allows no tie' };
  return { ok: true, value: { reasoning: parsed.data.reasoning, choice: parsed.data.answer === '1' ? 'left' : parsed.data.answer === '2' ? 'right' : 'tie' } };
}

function charactersBlock(view: ComparisonView): string {
  if (!view.characters) return '';
  const lines = view.characters.map((c) =>
    [
      `${c.name}${c.facts ? ` (${c.facts})` : ''}.`,
      c.publicInfo && `Public info: ${c.publicInfo}`,
      c.personality && `Personality and values: ${c.personality}`,
      c.decisionStyle && `Decision-making style: ${c.decisionStyle}`,
      c.secret && `Secret: ${c.secret}`,
      c.goal !== null && `Goal: ${c.goal}`,
    ]
      .filter(Boolean)
      .join(' '),
  );
  return `\n${lines.join('\n\n')}\n`;
}

const interaction = (turns: ComparisonView['left']) => (turns.length > 0 ? turns.map((t) => `${t.name}: ${t.display}`).join('\n') : '(no turns)');

/** The judge's request for one pair shown with `leftSide` first: the rater's view of it, as text. */
export function pairwiseRequest(
  db: Db,
  prompts: JudgePromptSet,
  evaluation: Pick<EvaluationRow, 'judge_model' | 'temperature'>,
  settings: EvaluationSettings,
  batch: Pick<BatchForJudge, 'question' | 'context' | 'allowTie'>,
  pair: JudgePair,
  leftSide: 'a' | 'b',
): ChatRequest {
  const view = buildComparisonView(db, pair, leftSide, batch.context);
  const content = fillTemplate(prompts.templates.pairwise, {
    scenario: view.scenario.context,
    characters: charactersBlock(view),
    interaction_1: interaction(view.left),
    interaction_2: interaction(view.right),
    question: batch.question,
    tie_option: batch.allowTie ? ', or "tie" when neither is better' : '',
  });
  return {
    model: evaluation.judge_model,
    messages: [{ role: 'user', content }],
    temperature: evaluation.temperature,
    response_format: pairwiseResponseFormat(settings.responseFormat, batch.allowTie),
  };
}

export type NewLlmJudge = {
  batch: string;
  judgeModel: string;
  endpoint: ResolvedEndpoint;
  temperature?: number;
  promptVersion?: string;
  settings?: Partial<EvaluationSettings>;
  name?: string;
  createdBy: string;
};

export function createLlmJudge(db: Db, input: NewLlmJudge, now: Date): number {
  const batch = findBatchToJudge(db, input.batch);
  const prompts = loadJudgePrompts(input.promptVersion);
  return insertEvaluation(
    db,
    {
      name: chooseEvaluationName(db, input.name, 'llm-judge', input.judgeModel, now),
      kind: 'pairwise',
      runId: null,
      batchId: batch.id,
      judgeModel: input.judgeModel,
      endpointName: input.endpoint.name,
      baseUrl: input.endpoint.baseUrl,
      temperature: input.temperature ?? 0,
      promptVersion: prompts.version,
      promptHash: prompts.hash,
      settings: { ...DEFAULT_EVALUATION_SETTINGS, ...input.settings },
      createdBy: input.createdBy,
    },
    now,
  );
}

/** Every (pair, order) of the batch: the item key of its calls. */
export function judgeItems(pairs: JudgePair[]): { pair: JudgePair; leftSide: 'a' | 'b'; item: string }[] {
  return pairs.flatMap((pair) => (['a', 'b'] as const).map((leftSide) => ({ pair, leftSide, item: `pair:${pair.id}:${leftSide}` })));
}

/** Asks the judge every (pair, order) not yet answered. Safe to call again: it resumes. */
export async function executeLlmJudge(db: Db, evaluationId: number, options: EvaluateOptions): Promise<EvaluationOutcome> {
  const evaluation = getEvaluation(db, evaluationId);
  if (!evaluation || evaluation.kind !== 'pairwise' || evaluation.batch_id === null) throw new EvaluationInputError(`no LLM judge with id ${evaluationId}`);
  const prompts = loadEvaluationPrompts(evaluation);
  const settings = parseEvaluationSettings(evaluation);
  const batch = findBatchToJudge(db, String(evaluation.batch_id));
  const items: JudgeItem<PairwiseAnswer>[] = judgeItems(batch.pairs).map(({ pair, leftSide, item }) => {
    let built: ChatRequest | null = null;
    return {
      item,
      request: () => (built ??= pairwiseRequest(db, prompts, evaluation, settings, batch, pair, leftSide)),
      parse: (c) => parsePairwiseAnswer(c, batch.allowTie),
      save: (value, callId) => saveLlmJudgment(db, { evaluationId, pairId: pair.id, leftSide, choice: value.choice, reasoning: value.reasoning, callId }),
    };
  });
  const result = await runJudgeItems(db, evaluation, options, {
    items,
    answered: () => new Set(listLlmJudgments(db, evaluationId).map((j) => `pair:${j.pair_id}:${j.left_side}`)),
    resumeHint: `then resume with: simarena llm-judge --resume ${evaluation.name}`,
  });
  return { evaluationId, state: result.state, error: result.error, total: items.length, scored: result.answered, failed: result.failed };
}
