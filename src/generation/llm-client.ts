import OpenAI, { toFile } from 'openai';
import { endpointAddress } from './endpoint-address.js';
import { type BatchApiClient, BatchApiError, type BatchInfo, type BatchOutputLine } from './batch-api-client.js';

// The one importer of the openai SDK: chat completions, and the files and batches of the Batch API. Its own retries are
// off (maxRetries: 0): the model-call runner retries, so that every attempt is a recorded call.

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

export type ResponseFormat =
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict: boolean } }
  | { type: 'json_object' };

/** The request body as sent; it never holds a key or an address. */
export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  temperature: number;
  max_tokens?: number;
  seed?: number;
  response_format: ResponseFormat;
};

export type ChatOutcome =
  | { status: 'ok'; httpStatus: number; body: unknown; content: string | null; promptTokens: number; completionTokens: number }
  | { status: 'malformed'; httpStatus: number; rawBody: string; error: string }
  | { status: 'http_error'; httpStatus: number; error: string; body: unknown; retryAfterMs: number | null }
  | { status: 'network_error'; error: string }
  | { status: 'timeout'; error: string }
  | { status: 'aborted' };

/** What a call record stores of an outcome: the body as answered (the raw text when it was not JSON), status, tokens. */
export function outcomeColumns(outcome: ChatOutcome): { response: unknown; httpStatus: number | null; promptTokens: number; completionTokens: number } {
  return {
    response: outcome.status === 'ok' || outcome.status === 'http_error' ? outcome.body : outcome.status === 'malformed' ? { raw: outcome.rawBody } : null,
    httpStatus: 'httpStatus' in outcome ? outcome.httpStatus : null,
    promptTokens: outcome.status === 'ok' ? outcome.promptTokens : 0,
    completionTokens: outcome.status === 'ok' ? outcome.completionTokens : 0,
  };
}

/** An HTTP refusal that sending again will not lift; 408, 429 and 5xx (like no answer at all) are worth a retry. */
export function isLastingRefusal(httpStatus: number): boolean {
  return httpStatus !== 408 && httpStatus !== 429 && httpStatus < 500;
}

export type LlmClient = {
  /** The endpoint's base URL without credentials (endpointAddress): named in messages and stored with each call. */
  baseUrl: string;
  complete(request: ChatRequest, options: { timeoutMs: number; signal?: AbortSignal }): Promise<ChatOutcome>;
};

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The deepest cause's code (ECONNREFUSED, ENOTFOUND...) or message: fetch wraps the useful part. */
function describeCause(error: unknown): string {
  let current: unknown = error;
  let best = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const c = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof c.code === 'string') best = c.code;
    else if (typeof c.message === 'string' && c.message) best = c.message;
    current = c.cause;
  }
  return best;
}

export function createLlmClient(endpoint: { baseUrl: string; apiKey: string | undefined }): LlmClient {
  const client = new OpenAI({
    baseURL: endpoint.baseUrl,
    // Servers such as vLLM or Ollama need no key; the SDK insists on one, so an unused placeholder is sent.
    apiKey: endpoint.apiKey ?? 'no-key-set',
    maxRetries: 0,
  });
  return {
    baseUrl: endpointAddress(endpoint.baseUrl),
    async complete(request, options) {
      try {
        const response = await client.chat.completions
          .create({ ...request, stream: false }, { timeout: options.timeoutMs, signal: options.signal, maxRetries: 0 })
          .asResponse();
        const raw = await response.text();
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          return { status: 'malformed', httpStatus: response.status, rawBody: raw.slice(0, 10_000), error: 'the response body is not JSON' };
        }
        const b = body as { choices?: { message?: { content?: unknown } }[]; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
        const content = b.choices?.[0]?.message?.content;
        return {
          status: 'ok',
          httpStatus: response.status,
          body,
          content: typeof content === 'string' ? content : null,
          promptTokens: typeof b.usage?.prompt_tokens === 'number' ? b.usage.prompt_tokens : 0,
          completionTokens: typeof b.usage?.completion_tokens === 'number' ? b.usage.completion_tokens : 0,
        };
      } catch (error) {
        if (error instanceof OpenAI.APIUserAbortError || options.signal?.aborted) return { status: 'aborted' };
        if (error instanceof OpenAI.APIConnectionTimeoutError) return { status: 'timeout', error: `no answer within ${options.timeoutMs} ms` };
        if (error instanceof OpenAI.APIConnectionError) return { status: 'network_error', error: describeCause(error) };
        if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
          return {
            status: 'http_error',
            httpStatus: error.status,
            error: error.message,
            body: error.error ?? null,
            retryAfterMs: parseRetryAfter(error.headers?.get('retry-after'), Date.now()),
          };
        }
        return { status: 'network_error', error: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}

// The Batch API (files + batches) ---------------------------------------------------------------------------------

function toInfo(batch: OpenAI.Batches.Batch): BatchInfo {
  const errors = batch.errors?.data?.map((e) => `${e.code ?? ''}: ${e.message ?? ''}`).join('; ') ?? null;
  return {
    id: batch.id,
    status: batch.status,
    outputFileId: batch.output_file_id ?? null,
    errorFileId: batch.error_file_id ?? null,
    counts: { total: batch.request_counts?.total ?? 0, completed: batch.request_counts?.completed ?? 0, failed: batch.request_counts?.failed ?? 0 },
    errors: errors || null,
  };
}

async function step<T>(what: string, baseUrl: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const status = error instanceof OpenAI.APIError && typeof error.status === 'number' ? ` (HTTP ${error.status})` : '';
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new BatchApiError(`the Batch API at ${baseUrl} failed to ${what}${status}: ${message}`);
  }
}

export function createBatchApiClient(endpoint: { baseUrl: string; apiKey: string | undefined }): BatchApiClient {
  const client = new OpenAI({ baseURL: endpoint.baseUrl, apiKey: endpoint.apiKey ?? 'no-key-set', maxRetries: 0 });
  const base = endpointAddress(endpoint.baseUrl);
  return {
    baseUrl: base,
    uploadJsonl: (filename, lines) =>
      step('upload the requests', base, async () => {
        const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
        const file = await client.files.create({ file: await toFile(Buffer.from(text, 'utf8'), filename), purpose: 'batch' });
        return file.id;
      }),
    createBatch: (inputFileId, metadata) =>
      step('create the batch', base, async () => toInfo(await client.batches.create({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata }))),
    retrieveBatch: (batchId) => step(`read batch ${batchId}`, base, async () => toInfo(await client.batches.retrieve(batchId))),
    readJsonl: (fileId) =>
      step(`read file ${fileId}`, base, async () => {
        const text = await (await client.files.content(fileId)).text();
        return text
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as BatchOutputLine);
      }),
  };
}
