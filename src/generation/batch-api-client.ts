import { UserFacingError } from '../errors/user-facing-error.js';

// The OpenAI Batch API (files + batches), for cheap bulk calls (issue 15): requests written as JSONL, uploaded with
// the files API (purpose "batch"), a batch created on /v1/chat/completions and polled; its output and error files are
// read back as JSONL. The client itself is made in llm-client.ts (createBatchApiClient), the one importer of the openai SDK.

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export type BatchInfo = {
  id: string;
  status: BatchStatus;
  outputFileId: string | null;
  errorFileId: string | null;
  counts: { total: number; completed: number; failed: number };
  /** Validation errors of a failed batch, one line. */
  errors: string | null;
};

/** One line of the input file, as the Batch API expects it. */
export type BatchInputLine = { custom_id: string; method: 'POST'; url: '/v1/chat/completions'; body: unknown };

/** One line of an output or error file. */
export type BatchOutputLine = {
  custom_id: string;
  response: { status_code: number; request_id?: string; body: unknown } | null;
  error: { code?: string; message?: string } | null;
};

/** What a call record stores of one output line: whether it answered 200, its body, status, tokens, and why it failed. */
export function readBatchOutputLine(line: BatchOutputLine): {
  ok: boolean;
  body: unknown;
  httpStatus: number | null;
  promptTokens: number;
  completionTokens: number;
  failure: string;
  /** The answer's text (its first choice's content), or null. */
  content: string | null;
} {
  const ok = line.response !== null && line.response.status_code === 200;
  const body = line.response?.body ?? null;
  const usage = (body as { usage?: { prompt_tokens?: number; completion_tokens?: number } } | null)?.usage;
  const bodyError = (body as { error?: { message?: string } } | null)?.error?.message;
  const content = (body as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message?.content;
  return {
    ok,
    body,
    httpStatus: line.response?.status_code ?? null,
    promptTokens: ok ? (usage?.prompt_tokens ?? 0) : 0,
    completionTokens: ok ? (usage?.completion_tokens ?? 0) : 0,
    failure: line.error?.message ?? bodyError ?? `HTTP ${line.response?.status_code ?? '?'}`,
    content: typeof content === 'string' ? content : null,
  };
}

/**
 * The outcome fields of the call record of an output line, whatever the call is for: `parsed` is the caller's reading
 * of its answer (null when the line failed), whose own failure makes the call 'invalid'.
 */
export function batchCallOutcome(read: ReturnType<typeof readBatchOutputLine>, parsed: { ok: true } | { ok: false; error: string } | null) {
  return {
    response: read.body,
    status: read.ok ? (parsed?.ok ? 'ok' : 'invalid') : 'http_error',
    error: read.ok ? (parsed && !parsed.ok ? parsed.error : null) : read.failure,
    httpStatus: read.httpStatus,
    promptTokens: read.promptTokens,
    completionTokens: read.completionTokens,
    latencyMs: 0,
  } as const;
}

export type BatchApiClient = {
  /** The endpoint's base URL, as endpointAddress shows it. */
  baseUrl: string;
  uploadJsonl(filename: string, lines: BatchInputLine[]): Promise<string>;
  createBatch(inputFileId: string, metadata: Record<string, string>): Promise<BatchInfo>;
  retrieveBatch(batchId: string): Promise<BatchInfo>;
  readJsonl(fileId: string): Promise<BatchOutputLine[]>;
};

/** A Batch API call that failed, as one line naming the step and the server's answer. */
export class BatchApiError extends UserFacingError {
  constructor(message: string) {
    super(message, 502, 'batch_api_failed');
  }
}

const TERMINAL: BatchStatus[] = ['failed', 'completed', 'expired', 'cancelled'];
export const isTerminal = (status: BatchStatus) => TERMINAL.includes(status);
