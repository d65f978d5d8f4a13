import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { ResolvedEndpoint } from '../generation/endpoints.js';
import type { BatchInfo } from '../generation/batch-api-client.js';
import { executeRun, type RunOutcome, type RunProgress } from '../generation/execute-run.js';
import { createBatchApiClient, createLlmClient } from '../generation/llm-client.js';
import { collectScriptBatch, DEFAULT_BATCH_POLL_MS, scriptBatchOf } from '../generation/script-batch.js';
import { finishRun, getRun, runHasLiveWorker } from '../generation/run.queries.js';
import { buildSimulationCard } from '../generation/simulation-card.js';
import { recordAudit } from '../audit/audit.queries.js';
import { HttpError } from '../web/http-error.js';

// Generation runs started from the console execute in the server process, in the background, with the same engine
// as `simarena generate`. Only live handles are kept here (abort controllers, the last progress figures); the run's
// state lives in the database, so a restart loses nothing: the server marks a run left "running" as interrupted.

export type RunSupervisor = {
  /** Starts (or resumes) a run in the background; refuses a second live run on the same endpoint. */
  start: (runId: number, endpoint: ResolvedEndpoint, actor: string) => void;
  /** Throws 409 when the endpoint already has its limit of live runs (checked before a new run row is made). */
  checkRoom: (endpointName: string) => void;
  /** Pauses or cancels a live run; a run that is not live is cancelled in the database directly. */
  stop: (runId: number, reason: 'pause' | 'cancel', actor: string) => void;
  isLive: (runId: number) => boolean;
  progress: (runId: number) => RunProgress | null;
  /** The run's OpenAI batch as last read, while the supervisor collects it before generating (null otherwise). */
  batch: (runId: number) => BatchInfo | null;
  /** Resolves when every live run has stopped (tests, shutdown). */
  idle: () => Promise<void>;
  /** Pauses every live run and resolves once they have stopped: call before closing the database at shutdown. */
  pauseAll: () => Promise<void>;
};

type Live = { controller: AbortController; endpoint: string; progress: RunProgress | null; batch: BatchInfo | null; done: Promise<void> };

export function createRunSupervisor(db: Db, clock: Clock, options: {
    perEndpoint?: number;
    /** Told when a run ends failed or its engine throws, so the server log shows what the console started in the background. */
    onError?: (error: unknown, runId: number) => void;
  } = {},): RunSupervisor {
  const live = new Map<number, Live>();
  const perEndpoint = options.perEndpoint ?? 1;
  const checkRoom = (endpointName: string) => {
    const busy = [...live.values()].filter((l) => l.endpoint === endpointName).length;
    if (busy >= perEndpoint)
      throw new HttpError(
        409,
        `${busy === 1 ? 'Another run is' : `${busy} runs are`} being generated on the endpoint "${endpointName}" (at most ${perEndpoint} at once, set by GENERATION_RUNS_PER_ENDPOINT); wait, or pause one first.`,
      );
  };
  const auditFinish = (runId: number, state: string) =>
    recordAudit(db, { actor: 'system', action: 'run.finish', targetType: 'run', targetId: runId, details: { state } }, clock());
  /**
   * A run the CLI sent through the OpenAI Batch API (`generate --batch-api`) collects its SCRIPT batch before the engine
   * runs, as `generate --resume` does: the engine then completes those dialogues from the stored answers instead of
   * paying for each again. 'paused' when stopped while the batch is still out (the batch id stays stored). A batch
   * that cannot be read fails the run with the reason, and Resume tries again.
   */
  const collectBatchFirst = async (runId: number, endpoint: ResolvedEndpoint, signal: AbortSignal, onBatch: (info: BatchInfo) => void) => {
    const batch = scriptBatchOf(db, runId);
    if (!batch) return 'nothing';
    try {
      return await collectScriptBatch(db, runId, {
        client: createBatchApiClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey }),
        pollMs: batch.pollMs ?? DEFAULT_BATCH_POLL_MS,
        clock,
        signal,
        onBatch,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const message = `The run's OpenAI batch ${batch.batchId} could not be collected: ${reason}. Resume the run to try again.`;
      finishRun(db, runId, { state: 'failed', error: message, simulationCard: buildSimulationCard(db, runId) }, clock());
      auditFinish(runId, 'failed');
      throw error;
    }
  };
  return {
    checkRoom,
    start(runId, endpoint, actor) {
      if (live.has(runId)) throw new HttpError(409, 'This run is already being generated.');
      checkRoom(endpoint.name);
      const controller = new AbortController();
      const entry: Live = { controller, endpoint: endpoint.name, progress: null, batch: null, done: Promise.resolve() };
      live.set(runId, entry);
      recordAudit(db, { actor, action: 'run.start', targetType: 'run', targetId: runId }, clock());
      const generate = (): Promise<RunOutcome> =>
        executeRun(db, runId, {
          llm: createLlmClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey }),
          clock,
          signal: controller.signal,
          onProgress: (p) => {
            entry.batch = null;
            entry.progress = p;
          },
          apiKeyEnv: endpoint.apiKeyEnv,
        });
      entry.done = collectBatchFirst(runId, endpoint, controller.signal, (info) => {
        entry.batch = info;
      })
        .then(async (collected) => {
          if (collected === 'paused') {
            // Stopped while its batch was still out: nothing was generated, and the batch id stays stored for a resume.
            if (controller.signal.reason === 'cancel') {
              finishRun(db, runId, { state: 'cancelled', error: null, simulationCard: buildSimulationCard(db, runId) }, clock());
              auditFinish(runId, 'cancelled');
            }
            return;
          }
          const outcome = await generate();
          auditFinish(runId, outcome.state);
          if (outcome.state === 'failed') options.onError?.(new Error(outcome.error ?? 'the run failed'), runId);
        })
        .catch((error: unknown) => options.onError?.(error, runId))
        .finally(() => live.delete(runId));
    },
    stop(runId, reason, actor) {
      const entry = live.get(runId);
      if (entry) {
        recordAudit(db, { actor, action: `run.${reason}`, targetType: 'run', targetId: runId }, clock());
        entry.controller.abort(reason);
        return;
      }
      const run = getRun(db, runId);
      if (!run) throw new HttpError(404, 'No run has this id.');
      if (runHasLiveWorker(run))
        throw new HttpError(409, `This run is being generated by another process (pid ${run.worker_pid}, e.g. the CLI); stop it there.`);
      if (reason === 'pause') throw new HttpError(409, `This run is ${run.state}, not being generated; there is nothing to pause.`);
      if (['complete', 'failed', 'cancelled'].includes(run.state)) throw new HttpError(409, `This run is already ${run.state}.`);
      db.transaction(() => {
        finishRun(db, runId, { state: 'cancelled', error: null, simulationCard: buildSimulationCard(db, runId) }, clock());
        recordAudit(db, { actor, action: 'run.cancel', targetType: 'run', targetId: runId }, clock());
      })();
    },
    isLive: (runId) => live.has(runId),
    progress: (runId) => live.get(runId)?.progress ?? null,
    batch: (runId) => live.get(runId)?.batch ?? null,
    idle: async () => {
      await Promise.all([...live.values()].map((l) => l.done));
    },
    pauseAll: async () => {
      const entries = [...live.values()];
      for (const entry of entries) entry.controller.abort('pause');
      await Promise.all(entries.map((l) => l.done));
    },
  };
}
