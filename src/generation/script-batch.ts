import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import { batchCallOutcome, type BatchApiClient, type BatchInfo, type BatchInputLine, isTerminal, readBatchOutputLine } from './batch-api-client.js';
import { createCallStore, hashRequestJson, requestJson } from './call.queries.js';
import type { RunSettings } from './create-run.js';
import { getDialogue, listUnfinishedDialogueIds } from './dialogue.queries.js';
import { scriptRequest } from './execute-run.js';
import type { ChatRequest } from './llm-client.js';
import { fullName } from './build-messages.js';
import { parseScript } from './model-output.schema.js';
import { loadPrompts } from './prompts.js';
import { sleep } from './retry-delay.js';
import { getRun, updateRunPatience } from './run.queries.js';
import { parseJsonColumn } from '../db/json-column.js';
import { scriptBatchSettingsSchema } from './run-columns.schema.js';

// generate --batch-api (issue 15): a SCRIPT dialogue is one call, so its calls can go through the OpenAI Batch API at
// half price. This step runs before the engine: it sends the unfinished SCRIPT dialogues' requests as one batch, stores
// the batch id in the run's settings at once (a killed process polls it again instead of resubmitting), and stores the
// answers as the dialogues' calls. The engine then finds a valid stored answer to the very same request and completes
// those dialogues without a call; lines that failed or came back invalid are asked again by the engine as usual.

/** `pollMs`: how often the run's batch is read, as `--poll-seconds` set it (absent in runs stored before it was kept). */
export type ScriptBatch = { batchId: string; inputFileId: string; pollMs?: number };
export type ScriptBatchSettings = RunSettings & { scriptBatch?: ScriptBatch };

/** Between two reads of a batch's status when the run does not say (the CLI's `--poll-seconds` default). */
export const DEFAULT_BATCH_POLL_MS = 30_000;

/** The SCRIPT batch a run sent (generate --batch-api), or null: a resume collects it before the engine runs. */
export function scriptBatchOf(db: Db, runId: number): ScriptBatch | null {
  const run = getRun(db, runId);
  if (!run?.settings) return null;
  return parseJsonColumn(scriptBatchSettingsSchema, run.settings, `runs.settings of run ${runId}`).scriptBatch ?? null;
}

export type ScriptBatchOptions = { client: BatchApiClient; pollMs: number; clock?: Clock; signal?: AbortSignal; onBatch?: (info: BatchInfo) => void };

/** The SCRIPT dialogues still to generate, with their request as the engine will send it. */
function scriptJobs(db: Db, runId: number): { dialogueId: number; request: ChatRequest; names: [string, string] }[] {
  const run = getRun(db, runId);
  if (!run) return [];
  const prompts = loadPrompts(run.prompt_version ?? undefined);
  const jobs: { dialogueId: number; request: ChatRequest; names: [string, string] }[] = [];
  for (const id of listUnfinishedDialogueIds(db, runId)) {
    const dialogue = getDialogue(db, id);
    if (!dialogue || dialogue.mode !== 'SCRIPT') continue;
    const scenario = getScenario(db, dialogue.scenario_id);
    const cast = getCast(db, dialogue.cast_id);
    const c1 = cast && getCharacter(db, cast.character_1_id);
    const c2 = cast && getCharacter(db, cast.character_2_id);
    if (!scenario || !c1 || !c2) continue;
    const characters: [CharacterRow, CharacterRow] = [c1, c2];
    jobs.push({ dialogueId: id, request: scriptRequest(run, prompts, { scenario, characters }, dialogue.seed), names: [fullName(c1), fullName(c2)] });
  }
  return jobs;
}

/** Sends (or finds) the run's SCRIPT batch, polls it to its end and stores its answers. `paused` when stopped while polling. */
export async function collectScriptBatch(db: Db, runId: number, options: ScriptBatchOptions): Promise<'done' | 'paused' | 'nothing'> {
  const run = getRun(db, runId);
  if (!run) return 'nothing';
  const settings: ScriptBatchSettings = parseJsonColumn(scriptBatchSettingsSchema, run.settings, `runs.settings of run ${runId}`);
  const calls = createCallStore(db);
  const clock = options.clock ?? (() => new Date());
  const jobs = scriptJobs(db, runId).map((j) => ({ ...j, json: requestJson(j.request) }));
  const answered = (dialogueId: number, hash: string) => calls.listCallsAt(dialogueId, 0).some((c) => c.status === 'ok' && c.request_hash === hash);
  let batch = settings.scriptBatch ?? null;
  if (!batch) {
    const waiting = jobs.filter((j) => !answered(j.dialogueId, hashRequestJson(j.json)));
    if (waiting.length === 0) return 'nothing';
    const lines: BatchInputLine[] = waiting.map((j) => ({ custom_id: `dialogue:${j.dialogueId}`, method: 'POST', url: '/v1/chat/completions', body: j.request }));
    const inputFileId = await options.client.uploadJsonl(`simarena-${run.name}.jsonl`, lines);
    const created = await options.client.createBatch(inputFileId, { simarena_run: run.name });
    batch = { batchId: created.id, inputFileId, pollMs: options.pollMs };
    updateRunPatience(db, runId, { concurrency: run.concurrency, settings: { ...settings, scriptBatch: batch } });
  }
  let info = await options.client.retrieveBatch(batch.batchId);
  options.onBatch?.(info);
  while (!isTerminal(info.status)) {
    await sleep(options.pollMs, options.signal);
    if (options.signal?.aborted) return 'paused';
    info = await options.client.retrieveBatch(batch.batchId);
    options.onBatch?.(info);
  }
  const byItem = new Map(jobs.map((j) => [`dialogue:${j.dialogueId}`, j]));
  const markBatch = db.prepare('UPDATE llm_calls SET provider_batch_id = :batchId WHERE id = :id');
  const batchId = batch.batchId;
  for (const fileId of [info.outputFileId, info.errorFileId]) {
    if (!fileId) continue;
    const lines = await options.client.readJsonl(fileId);
    // One write transaction per file, checking what is mapped already: two processes collecting the same batch (a CLI
    // resume beside the console's) store each answer once.
    const storeLines = db.transaction(() => {
      for (const line of lines) {
        const job = byItem.get(line.custom_id);
        if (!job) continue;
        const stored = calls.listCallsAt(job.dialogueId, 0);
        // Mapped once, even when a resume reads the same output again.
        if (db.prepare('SELECT 1 FROM llm_calls WHERE dialogue_id = ? AND turn_idx = 0 AND provider_batch_id = ?').get(job.dialogueId, batchId)) continue;
        const read = readBatchOutputLine(line);
        const content = (read.body as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]?.message?.content;
        const parsed = read.ok ? parseScript(typeof content === 'string' ? content : null, job.names, run.max_turns ?? 20) : null;
        const id = calls.insertCall(
          {
            runId,
            dialogueId: job.dialogueId,
            turnIdx: 0,
            speaker: null,
            attempt: stored.reduce((m, c) => Math.max(m, c.attempt), 0) + 1,
            requestHash: hashRequestJson(job.json),
            request: job.json,
            ...batchCallOutcome(read, parsed),
          },
          clock(),
        );
        markBatch.run({ batchId, id });
      }
    });
    storeLines.immediate();
  }
  return 'done';
}
