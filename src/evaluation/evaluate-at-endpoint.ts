import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { resolveEndpoint } from '../generation/endpoints.js';
import type { BatchInfo } from '../generation/batch-api-client.js';
import { createBatchApiClient, createLlmClient } from '../generation/llm-client.js';
import { type EvaluateOptions, type EvaluationOutcome, executeEpisodeEvaluation, parseEvaluationSettings } from './evaluate-run.js';
import { EvaluationInputError } from './evaluation-error.js';
import { getEvaluation } from './evaluation.queries.js';
import { executeLlmJudge } from './llm-judge.js';

/**
 * Runs (or resumes) an evaluation at the endpoint it was created for, with the key read from the environment now.
 * Episode evaluations and LLM judges of a batch alike.
 */
export async function evaluateAtEndpoint(
  db: Db,
  evaluationId: number,
  options: { config: Config; env: Record<string, string | undefined>; onBatch?: (info: BatchInfo) => void } & Omit<EvaluateOptions, 'llm' | 'apiKeyEnv' | 'batchApi'>,
): Promise<EvaluationOutcome> {
  const evaluation = getEvaluation(db, evaluationId);
  if (!evaluation) throw new EvaluationInputError(`no evaluation with id ${evaluationId}`);
  const { config, env, onBatch: _onBatch, ...rest } = options;
  const endpoint = resolveEndpoint(config, env, evaluation.endpoint_name, evaluation.judge_model);
  const llm = createLlmClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey });
  const settings = parseEvaluationSettings(evaluation);
  const batchApi = settings.batchApi
    ? { client: createBatchApiClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey }), pollMs: settings.pollMs, onBatch: options.onBatch }
    : undefined;
  const run = evaluation.kind === 'episode' ? executeEpisodeEvaluation : executeLlmJudge;
  return run(db, evaluationId, { ...rest, llm, apiKeyEnv: endpoint.apiKeyEnv, batchApi });
}
