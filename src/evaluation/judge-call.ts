import type { ChatRequest } from '../generation/llm-client.js';
import { type CallRunner, type StopWording, type WorkProgress, obtainAnswer } from '../generation/model-call.js';
import type { Parsed } from '../generation/model-output.schema.js';
import type { EvaluationCallStore, EvaluationRow } from './evaluation.queries.js';

// A judge call goes through the one model-call runner (src/generation/model-call.ts), with generation's guarantees:
// every attempt stored before its answer is used, a stored valid answer reused on resume, bounded retries.

export type EvaluationSettings = {
  concurrency: number;
  timeoutMs: number;
  maxRetries: number;
  maxInvalidRetries: number;
  responseFormat: 'json_schema' | 'json_object';
  /** Ask through the OpenAI Batch API (cheaper, slower), polling every `pollMs`. */
  batchApi: boolean;
  pollMs: number;
};

export const DEFAULT_EVALUATION_SETTINGS: EvaluationSettings = {
  concurrency: 4,
  timeoutMs: 120_000,
  maxRetries: 5,
  maxInvalidRetries: 2,
  responseFormat: 'json_schema',
  batchApi: false,
  pollMs: 30_000,
};

export type EvaluationProgress = { evaluationId: number } & WorkProgress;

export type JudgeRetryNotice = { item: string; attempt: number; status: string; error: string; delayMs: number };

/** The model-call runner of one evaluation session, with where its calls go and whom to tell of retries. */
export type JudgeEngine = {
  runner: CallRunner;
  calls: EvaluationCallStore;
  evaluation: EvaluationRow;
  settings: EvaluationSettings;
  onRetry: (notice: JudgeRetryNotice) => void;
};

/** How an evaluation words a stop: the flags of `simarena evaluate` and `simarena llm-judge`. */
export function evaluationWording(evaluation: EvaluationRow, baseUrl: string, apiKeyEnv: string, resumeHint: string): StopWording {
  return {
    where: `the endpoint "${evaluation.endpoint_name}" at ${baseUrl}`,
    apiKeyEnv,
    resumeHint,
    unknownModel: `does not know judge model "${evaluation.judge_model}" (HTTP 404): check --judge-model (the name as that server knows it) or --endpoint`,
    checkAddress: { noChatApi: 'the base URL', unreachable: 'the base URL' },
    badFormat: 'if the server lacks json_schema, use --response-format json_object',
    timeoutAdvice: '; ',
    output: 'judge output',
  };
}

/**
 * One judge call at one item through the runner. A judge's request carries no seed and is sent again as it is
 * after an invalid answer; retries are told for transient errors only.
 */
export function obtainJudgeAnswer<T>(e: JudgeEngine, item: string, request: ChatRequest, parse: (content: string | null) => Parsed<T>): Promise<{ value: T; callId: number }> {
  return obtainAnswer(e.runner, {
    request,
    parse,
    ledger: e.calls.ledgerFor(e.evaluation.id, item),
    reseed: null,
    onRetry: ({ attempt, status, error, delayMs }) => {
      if (status !== 'invalid') e.onRetry({ item, attempt, status, error, delayMs });
    },
  });
}
