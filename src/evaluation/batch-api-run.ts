import type { Db } from '../db/connection.js';
import { batchCallOutcome, type BatchApiClient, type BatchInfo, type BatchInputLine, type BatchOutputLine, isTerminal, readBatchOutputLine } from '../generation/batch-api-client.js';
import { hashRequestJson, requestJson } from '../generation/call.queries.js';
import type { ChatRequest } from '../generation/llm-client.js';
import type { Parsed } from '../generation/model-output.schema.js';
import { sleep } from '../generation/retry-delay.js';
import { getEvaluation, setProviderBatch } from './evaluation.queries.js';
import { type JudgeEngine, reuseStoredAnswer, storedContent } from './judge-call.js';

// The Batch API path of an evaluation (issue 15). One batch per evaluation: its id is stored as soon as it exists, so
// a killed process resumes polling it instead of submitting again. Its answers become ordinary stored calls (via
// 'batch_api', with the batch id), so everything downstream (reuse on resume, scores) is the same as for chat
// calls; lines that failed or came back invalid are then asked again as ordinary calls by the caller.

/** One thing to ask the judge: its item key, its request, how to read the answer and where to keep it. */
export type JudgeItem<T> = {
  item: string;
  request: () => ChatRequest;
  parse: (content: string | null) => Parsed<T>;
  save: (value: T, callId: number) => void;
};

export type BatchApiOptions = {
  client: BatchApiClient;
  pollMs: number;
  /** Told of every status read, for progress lines. */
  onBatch?: (info: BatchInfo) => void;
};

function storeLine<T>(e: JudgeEngine, job: JudgeItem<T>, batchId: string, line: BatchOutputLine): void {
  const json = requestJson(job.request());
  const hash = hashRequestJson(json);
  // Mapped once: a second read of the same output (a resume after a kill while mapping) adds nothing.
  const earlier = e.calls.listCallsFor(e.evaluation.id, job.item);
  if (earlier.some((c) => c.via === 'batch_api' && c.provider_batch_id === batchId)) return;
  const attempt = earlier.reduce((m, c) => Math.max(m, c.attempt), 0) + 1;
  const read = readBatchOutputLine(line);
  const parsed = read.ok ? job.parse(storedContent(JSON.stringify(read.body))) : null;
  const callId = e.calls.insertCall(
    {
      evaluationId: e.evaluation.id,
      item: job.item,
      attempt,
      via: 'batch_api',
      providerBatchId: batchId,
      requestHash: hash,
      request: json,
      ...batchCallOutcome(read, parsed),
    },
    e.clock(),
  );
  e.stats.calls += 1;
  e.stats.promptTokens += read.promptTokens;
  e.stats.completionTokens += read.completionTokens;
  if (parsed?.ok) job.save(parsed.value, callId);
}

/**
 * Submits the items without a stored answer as one batch (or finds the batch already submitted), polls it to its end
 * and stores what it answered. Returns `paused` when the signal stopped the polling; the batch id stays stored.
 */
export async function collectViaBatchApi<T>(db: Db, e: JudgeEngine, jobs: JudgeItem<T>[], options: BatchApiOptions): Promise<'done' | 'paused'> {
  const waiting: JudgeItem<T>[] = [];
  for (const job of jobs) {
    const reused = reuseStoredAnswer(e, job.item, hashRequestJson(requestJson(job.request())), job.parse);
    if (reused) job.save(reused.value, reused.callId);
    else waiting.push(job);
  }
  let batchId = getEvaluation(db, e.evaluation.id)?.provider_batch_id ?? null;
  if (waiting.length === 0 && batchId === null) return 'done';
  if (batchId === null) {
    const lines: BatchInputLine[] = waiting.map((job) => ({ custom_id: job.item, method: 'POST', url: '/v1/chat/completions', body: job.request() }));
    const fileId = await options.client.uploadJsonl(`simarena-${e.evaluation.name}.jsonl`, lines);
    const batch = await options.client.createBatch(fileId, { simarena_evaluation: e.evaluation.name });
    batchId = batch.id;
    setProviderBatch(db, e.evaluation.id, { batchId, inputFileId: fileId });
  }
  let info = await options.client.retrieveBatch(batchId);
  options.onBatch?.(info);
  while (!isTerminal(info.status)) {
    await sleep(options.pollMs, e.signal);
    if (e.signal.aborted) return 'paused';
    info = await options.client.retrieveBatch(batchId);
    options.onBatch?.(info);
  }
  // A failed batch (rejected input) answered nothing: every item goes to ordinary calls.
  const byItem = new Map(jobs.map((job) => [job.item, job]));
  for (const fileId of [info.outputFileId, info.errorFileId]) {
    if (!fileId) continue;
    for (const line of await options.client.readJsonl(fileId)) {
      const job = byItem.get(line.custom_id);
      if (job) storeLine(e, job, batchId, line);
    }
  }
  return 'done';
}
