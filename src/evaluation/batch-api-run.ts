import type { Db } from '../db/connection.js';
import type { BatchApiClient, BatchInfo } from '../generation/batch-api-client.js';
import { collectBatch } from '../generation/batch-collect.js';
import type { ChatRequest } from '../generation/llm-client.js';
import type { Parsed } from '../generation/model-output.schema.js';
import { getEvaluation, setProviderBatch } from './evaluation.queries.js';
import type { JudgeEngine } from './judge-call.js';

// The Batch API path of an evaluation (issue 15): one batch per evaluation, its id kept in evaluations.provider_batch_id;
// its answers become ordinary stored calls (via 'batch_api', with the batch id), through the runner's Batch API path
// (src/generation/batch-collect.ts).

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

/**
 * Submits the items without a stored answer as one batch (or finds the batch already submitted), polls it to its end
 * and stores what it answered, through the runner's Batch API path. Returns `paused` when the signal stopped the
 * polling; the batch id stays stored.
 */
export async function collectViaBatchApi<T>(db: Db, e: JudgeEngine, jobs: JudgeItem<T>[], options: BatchApiOptions): Promise<'done' | 'paused'> {
  const outcome = await collectBatch(
    {
      db,
      client: options.client,
      pollMs: options.pollMs,
      clock: e.runner.clock,
      signal: e.runner.signal,
      onBatch: options.onBatch,
      sent: getEvaluation(db, e.evaluation.id)?.provider_batch_id ?? null,
      remember: (batch) => setProviderBatch(db, e.evaluation.id, batch),
      filename: `simarena-${e.evaluation.name}.jsonl`,
      metadata: { simarena_evaluation: e.evaluation.name },
      stats: e.runner.stats,
    },
    jobs.map((job) => ({ key: job.item, request: job.request, parse: job.parse, ledger: e.calls.ledgerFor(e.evaluation.id, job.item), save: job.save })),
  );
  return outcome === 'paused' ? 'paused' : 'done';
}
