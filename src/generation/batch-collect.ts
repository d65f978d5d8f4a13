import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { type BatchApiClient, type BatchInfo, type BatchInputLine, type BatchOutputLine, batchCallOutcome, isTerminal, readBatchOutputLine } from './batch-api-client.js';
import { hashRequestJson, requestJson } from './call.queries.js';
import type { ChatRequest } from './llm-client.js';
import type { CallLedger } from './call.queries.js';
import { type CallStats, reuseStoredAnswer } from './model-call.js';
import type { Parsed } from './model-output.schema.js';
import { sleep } from './retry-delay.js';

// The Batch API path of the model-call runner (issue 15), for generate --batch-api and evaluations alike: the requests
// without a stored answer go out as one batch, whose id is kept the moment it exists (a killed process polls it again
// instead of sending again); its answers become ordinary stored calls (with the batch id), so that reuse on resume is
// the same as for chat calls; lines that failed or came back invalid are asked again as ordinary calls by the caller.

/** One request of a batch: its line's key, the request, how to read the answer, the ledger of its place, where to keep a valid answer. */
export type BatchJob<T> = {
  key: string;
  request: () => ChatRequest;
  parse: (content: string | null) => Parsed<T>;
  ledger: CallLedger;
  save?: (value: T, callId: number) => void;
};

export type BatchCollection = {
  db: Db;
  client: BatchApiClient;
  pollMs: number;
  clock: Clock;
  signal?: AbortSignal;
  /** Told of every status read, for progress lines. */
  onBatch?: (info: BatchInfo) => void;
  /** The batch already sent for this work, or null. */
  sent: string | null;
  /** Keeps the new batch's ids with the run or evaluation. */
  remember: (batch: { batchId: string; inputFileId: string }) => void;
  filename: string;
  metadata: Record<string, string>;
  /** Counts the stored answers, when the caller shows them. */
  stats?: CallStats;
};

function storeLine<T>(c: BatchCollection, job: BatchJob<T>, batchId: string, line: BatchOutputLine): void {
  const stored = job.ledger.list();
  // Mapped once: a second read of the same output (a resume after a kill while mapping) adds nothing.
  if (stored.some((call) => call.provider_batch_id === batchId)) return;
  const json = requestJson(job.request());
  const read = readBatchOutputLine(line);
  const parsed = read.ok ? job.parse(read.content) : null;
  const callId = job.ledger.insert(
    {
      attempt: stored.reduce((max, call) => Math.max(max, call.attempt), 0) + 1,
      requestHash: hashRequestJson(json),
      request: json,
      ...batchCallOutcome(read, parsed),
      providerBatchId: batchId,
      baseUrl: c.client.baseUrl,
    },
    c.clock(),
  );
  if (c.stats) {
    c.stats.calls += 1;
    c.stats.promptTokens += read.promptTokens;
    c.stats.completionTokens += read.completionTokens;
  }
  if (parsed?.ok) job.save?.(parsed.value, callId);
}

/** Sends the jobs still without a valid stored answer as one batch (unless one was sent); `nothing` when none is. */
async function sendBatch<T>(c: BatchCollection, jobs: BatchJob<T>[]): Promise<string | null> {
  const waiting: BatchJob<T>[] = [];
  for (const job of jobs) {
    const reused = reuseStoredAnswer(job.ledger, job.ledger.list(), new Set([hashRequestJson(requestJson(job.request()))]), job.parse);
    if (reused) job.save?.(reused.value, reused.callId);
    else waiting.push(job);
  }
  if (c.sent !== null) return c.sent;
  if (waiting.length === 0) return null;
  const lines: BatchInputLine[] = waiting.map((job) => ({ custom_id: job.key, method: 'POST', url: '/v1/chat/completions', body: job.request() }));
  const inputFileId = await c.client.uploadJsonl(c.filename, lines);
  const batch = await c.client.createBatch(inputFileId, c.metadata);
  c.remember({ batchId: batch.id, inputFileId });
  return batch.id;
}

/**
 * Sends (or finds) the batch, polls it to its end and stores what it answered. `paused` when the signal stopped the
 * polling (the batch id stays kept); `nothing` when there was nothing to send.
 */
export async function collectBatch<T>(c: BatchCollection, jobs: BatchJob<T>[]): Promise<'done' | 'paused' | 'nothing'> {
  const batchId = await sendBatch(c, jobs);
  if (batchId === null) return 'nothing';
  let info = await c.client.retrieveBatch(batchId);
  c.onBatch?.(info);
  while (!isTerminal(info.status)) {
    await sleep(c.pollMs, c.signal);
    if (c.signal?.aborted) return 'paused';
    info = await c.client.retrieveBatch(batchId);
    c.onBatch?.(info);
  }
  // A failed batch (rejected input) answered nothing: every job goes to ordinary calls.
  const byKey = new Map(jobs.map((job) => [job.key, job]));
  for (const fileId of [info.outputFileId, info.errorFileId]) {
    if (!fileId) continue;
    const lines = await c.client.readJsonl(fileId);
    // One write transaction per file, checking what is mapped already: two processes collecting the same batch (a CLI
    // resume beside the console's) store each answer once.
    c.db
      .transaction(() => {
        for (const line of lines) {
          const job = byKey.get(line.custom_id);
          if (job) storeLine(c, job, batchId, line);
        }
      })
      .immediate();
  }
  return 'done';
}
