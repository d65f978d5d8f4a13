import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import type { BatchApiClient, BatchInfo } from './batch-api-client.js';
import { type BatchJob, collectBatch } from './batch-collect.js';
import { createCallStore } from './call.queries.js';
import type { RunSettings } from './create-run.js';
import { getDialogue, listUnfinishedDialogueIds } from './dialogue.queries.js';
import { scriptRequest } from './execute-run.js';
import type { ChatRequest } from './llm-client.js';
import { fullName } from './build-messages.js';
import { parseScript } from './model-output.schema.js';
import { loadPrompts } from './prompts.js';
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
  // The engine completes these dialogues from the stored answers: nothing is kept here but the calls.
  const jobs: BatchJob<unknown>[] = scriptJobs(db, runId).map((j) => ({
    key: `dialogue:${j.dialogueId}`,
    request: () => j.request,
    parse: (content) => parseScript(content, j.names, run.max_turns ?? 20),
    ledger: calls.ledgerAt({ runId, dialogueId: j.dialogueId, turnIdx: 0, speaker: null, generation: 1 }),
  }));
  return collectBatch(
    {
      db,
      client: options.client,
      pollMs: options.pollMs,
      clock: options.clock ?? (() => new Date()),
      signal: options.signal,
      onBatch: options.onBatch,
      sent: settings.scriptBatch?.batchId ?? null,
      remember: (batch) => updateRunPatience(db, runId, { concurrency: run.concurrency, settings: { ...settings, scriptBatch: { ...batch, pollMs: options.pollMs } } }),
      filename: `simarena-${run.name}.jsonl`,
      metadata: { simarena_run: run.name },
    },
    jobs,
  );
}
