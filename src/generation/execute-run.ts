import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import { type Cast, type SpokenTurn, agentMessages, fullName, scriptMessages } from './build-messages.js';
import { type CallPlace, type CallStore, createCallStore, runCallTotals } from './call.queries.js';
import type { RunSettings } from './create-run.js';
import {
  type NewTurn,
  completeDialogue,
  countRunDialogues,
  failDialogue,
  failDialogueWithTurns,
  getDialogue,
  listUnfinishedDialogueIds,
  resetRunningDialogues,
  setDialogueRunning,
} from './dialogue.queries.js';
import { GenerationInputError } from './generation-error.js';
import type { ChatMessage, ChatRequest, LlmClient, ResponseFormat } from './llm-client.js';
import { type CallRunner, type CallStop, ItemFailure, type StopWording, type WorkProgress, obtainAnswer, runPool, startCallRunner } from './model-call.js';
import { type Parsed, agentResponseFormat, parseAgentTurn, parseScript, scriptResponseFormat } from './model-output.schema.js';
import { type PromptSet, loadPrompts } from './prompts.js';
import { HEARTBEAT_MS, type RunRow, type RunState, finishRun, getRun, markRunStarted, runHasLiveWorker, touchRunHeartbeat } from './run.queries.js';
import { buildSimulationCard } from './simulation-card.js';
import { parseJsonColumn } from '../db/json-column.js';
import { runSettingsSchema } from './run-columns.schema.js';

export type RunProgress = { runId: number } & WorkProgress;

export type ExecuteOptions = {
  llm: LlmClient;
  clock?: Clock;
  /** Aborting stops the run: with reason "cancel" it ends "cancelled", otherwise "paused"; both are resumable. */
  signal?: AbortSignal;
  onProgress?: (progress: RunProgress) => void;
  /** Jitter for backoff. */
  random?: () => number;
  backoff?: { baseMs: number; maxMs: number };
  /** Named in the message when the endpoint refuses the key. */
  apiKeyEnv?: string;
  /** Told of each retry after a transient error (429, 5xx, connection error, timeout), before the wait, and of each invalid answer. */
  onRetry?: (retry: RetryNotice) => void;
};

/**
 * A retry after a transient error (status: HTTP code or error kind), or an invalid answer (status "invalid"):
 * `nextSeed` is the seed of the next request (changed, so that a seeded server can answer differently);
 * `final` says the dialogue fails instead of retrying.
 */
export type RetryNotice = {
  dialogueId: number;
  turnIdx: number;
  attempt: number;
  status: string;
  error: string;
  delayMs: number;
  nextSeed?: number | null;
  final?: boolean;
};

export type RunOutcome = { runId: number; state: RunState; error: string | null; total: number; complete: number; failed: number };

type Place = CallPlace;

export { requestSeed } from './model-call.js';

type Engine = {
  db: Db;
  calls: CallStore;
  run: RunRow;
  settings: RunSettings;
  prompts: PromptSet;
  runner: CallRunner;
  onRetry: (retry: RetryNotice) => void;
};

function resumeHint(run: RunRow): string {
  return `then resume with: simarena generate --resume ${run.name}`;
}

/** How a generation run words a stop: the flags of `simarena generate`. */
function generationWording(run: RunRow, baseUrl: string, apiKeyEnv: string): StopWording {
  return {
    where: `the endpoint "${run.endpoint_name ?? 'default'}" at ${baseUrl}`,
    apiKeyEnv,
    resumeHint: resumeHint(run),
    // A run keeps its model, so resuming cannot cure an unknown model; a wrong base URL it can.
    unknownModel: `does not know model "${run.model}" (HTTP 404): check --model (the name as that server knows it) or --endpoint and start a new run; what run "${run.name}" generated is kept`,
    checkAddress: {
      noChatApi: "OPENAI_BASE_URL (or the endpoint's baseUrl; OpenAI-compatible servers usually end in /v1)",
      unreachable: "OPENAI_BASE_URL (or the endpoint's baseUrl)",
    },
    badFormat: 'if the server lacks json_schema, start the run with --response-format json_object',
    timeoutAdvice: ': raise --timeout or lower --concurrency, ',
    output: 'model output',
  };
}

/**
 * One model call at one place of a dialogue, through the runner: a call already stored at this place with the
 * same request and a valid answer is reused, so that a resumed run never pays twice for a completed call.
 */
function obtain<T>(e: Engine, place: Place, request: ChatRequest, parse: (content: string | null) => Parsed<T>): Promise<{ value: T; callId: number }> {
  return obtainAnswer(e.runner, {
    request,
    parse,
    ledger: e.calls.ledgerAt(place),
    reseed: { generation: place.generation },
    onRetry: (notice) => e.onRetry({ dialogueId: place.dialogueId, turnIdx: place.turnIdx, ...notice }),
  });
}

function loadCast(db: Db, dialogueId: number): { cast: Cast; dialogue: NonNullable<ReturnType<typeof getDialogue>> } {
  const dialogue = getDialogue(db, dialogueId);
  if (!dialogue) throw new Error(`dialogue ${dialogueId} vanished`);
  const scenario = getScenario(db, dialogue.scenario_id);
  const castRow = getCast(db, dialogue.cast_id);
  const c1 = castRow && getCharacter(db, castRow.character_1_id);
  const c2 = castRow && getCharacter(db, castRow.character_2_id);
  if (!scenario || !c1 || !c2) throw new ItemFailure('its scenario or characters are no longer in the library');
  return { cast: { scenario, characters: [c1, c2] as [CharacterRow, CharacterRow] }, dialogue };
}

function buildRequest(e: Engine, messages: ChatMessage[], responseFormat: ResponseFormat, seed: number | null): ChatRequest {
  return requestForRun(e.run, messages, responseFormat, seed);
}

function requestForRun(run: RunRow, messages: ChatMessage[], responseFormat: ResponseFormat, seed: number | null): ChatRequest {
  const request: ChatRequest = {
    model: run.model ?? '',
    messages,
    temperature: run.temperature ?? 0.7,
    response_format: responseFormat,
  };
  if (run.max_tokens !== null) request.max_tokens = run.max_tokens;
  if (seed !== null) request.seed = seed;
  return request;
}

/** The request of a SCRIPT dialogue, exactly as the engine sends it (the Batch API path sends the same, so the engine reuses its answer). */
export function scriptRequest(run: RunRow, prompts: PromptSet, cast: Cast, seed: number | null): ChatRequest {
  const names: [string, string] = [fullName(cast.characters[0]), fullName(cast.characters[1])];
  return requestForRun(run, scriptMessages(prompts, cast, run.max_turns ?? 20), scriptResponseFormat(run.response_format, names), seed);
}

/**
 * Stores a generated dialogue: complete, or failed when it has fewer spoken turns than the run's minimum (a
 * one-line dialogue must never reach raters or become a preference pair's `chosen`).
 */
function finishDialogue(e: Engine, dialogueId: number, result: { turns: NewTurn[]; endReason: string; meta: Record<string, unknown> }): 'complete' | 'failed' {
  // A run asked for fewer turns than the minimum cannot meet it: its own turn limit is then the minimum.
  const minimum = Math.min(e.settings.minSpokenTurns ?? 0, e.run.max_turns ?? 20);
  // A spoken turn is one raters read as a line: a character says or does something ("none" and "leave" are not).
  const spoken = result.turns.filter((t) => t.action === 'speak' || t.action === 'non-verbal' || t.action === 'action').length;
  if (spoken < minimum) {
    const reason = `only ${spoken} spoken turn(s), fewer than the minimum of ${minimum} set for this run`;
    failDialogueWithTurns(e.db, dialogueId, { ...result, reason }, e.runner.clock());
    return 'failed';
  }
  completeDialogue(e.db, dialogueId, result, e.runner.clock());
  return 'complete';
}

function readMeta(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function generateDialogue(e: Engine, dialogueId: number): Promise<'complete' | 'failed'> {
  const { cast, dialogue } = loadCast(e.db, dialogueId);
  setDialogueRunning(e.db, dialogueId);
  const maxTurns = e.run.max_turns ?? 20;
  const names: [string, string] = [fullName(cast.characters[0]), fullName(cast.characters[1])];
  const place = { runId: e.run.id, dialogueId, generation: dialogue.generation };
  // Earlier failures (a retried dialogue) stay in the meta; what this generation learns is added.
  const { script_cut: _oldCut, truncated_from_turns: _oldTruncation, ...meta } = readMeta(dialogue.meta);

  if (dialogue.mode === 'SCRIPT') {
    const request = scriptRequest(e.run, e.prompts, cast, dialogue.seed);
    const { value, callId } = await obtain(e, { ...place, turnIdx: 0, speaker: null }, request, (c) => parseScript(c, names, maxTurns));
    const turns: NewTurn[] = value.turns.map((t) => ({ ...t, callId }));
    const endReason = turns.at(-1)?.action === 'leave' ? 'left' : 'script';
    if (value.truncatedFrom !== null) meta.truncated_from_turns = value.truncatedFrom;
    if (value.cut) meta.script_cut = value.cut;
    return finishDialogue(e, dialogueId, { turns, endReason, meta });
  }

  const mode = dialogue.mode;
  // Only a generation run's dialogues come here, and those are of the modes it generates (create-run.ts).
  if (mode !== 'AGENTS' && mode !== 'MINDREADERS') throw new Error(`dialogue ${dialogueId} is ${mode}: no model generates it`);
  const history: SpokenTurn[] = [];
  const turns: NewTurn[] = [];
  let idle = 0;
  let endReason = 'max_turns';
  for (let idx = 0; idx < maxTurns; idx++) {
    // Round-robin: character 1 starts (Sotopia's turn order).
    const speaker: 1 | 2 = idx % 2 === 0 ? 1 : 2;
    const messages = agentMessages(e.prompts, cast, mode, speaker, history);
    const request = buildRequest(e, messages, agentResponseFormat(e.run.response_format), dialogue.seed);
    const { value, callId } = await obtain(e, { ...place, turnIdx: idx, speaker }, request, (c) => parseAgentTurn(c, speaker, names[speaker - 1] ?? ''));
    history.push(value);
    turns.push({ ...value, callId });
    if (value.action === 'leave') {
      endReason = 'left';
      break;
    }
    idle = value.action === 'none' ? idle + 1 : 0;
    // Sotopia ends an episode after more than 2 consecutive turns in which nobody does anything.
    if (idle > 2) {
      endReason = 'idle';
      break;
    }
  }
  return finishDialogue(e, dialogueId, { turns, endReason, meta });
}

/**
 * Generates every unfinished dialogue of a run with a bounded pool of `concurrency` dialogues at a time
 * (the turns of one AGENTS dialogue are sequential by nature). Safe to call again on a stopped run: it resumes.
 */
export async function executeRun(db: Db, runId: number, options: ExecuteOptions): Promise<RunOutcome> {
  const clock = options.clock ?? (() => new Date());
  const run = getRun(db, runId);
  if (!run) throw new GenerationInputError(`no run with id ${runId}`);
  if (run.kind !== 'generation') throw new GenerationInputError(`run "${run.name}" is an ${run.kind} run; only generation runs can be generated`);
  if (runHasLiveWorker(run, clock())) throw new GenerationInputError(`run "${run.name}" is being generated by process ${run.worker_pid}; wait for it or stop that process`);
  const settings: RunSettings = parseJsonColumn(runSettingsSchema, run.settings, `runs.settings of run ${runId}`);
  const prompts = loadPrompts(run.prompt_version ?? undefined);
  if (settings.promptHash && prompts.hash !== settings.promptHash)
    throw new GenerationInputError(
      `the prompt files of ${prompts.version} changed since run "${run.name}" started; restore them (a resumed run must send the same prompts) or start a new run`,
    );

  const ids = listUnfinishedDialogueIds(db, runId);
  markRunStarted(db, runId, process.pid, clock(), options.llm.baseUrl);
  const initial = countRunDialogues(db, runId);
  const totals = runCallTotals(db, runId);
  const counters = { done: initial.complete, failed: initial.failed, finishedThisSession: 0 };
  const { runner, stopAll, detach } = startCallRunner({
    llm: options.llm,
    clock,
    random: options.random,
    backoff: options.backoff,
    signal: options.signal,
    limits: settings,
    wording: generationWording(run, options.llm.baseUrl, options.apiKeyEnv ?? 'OPENAI_API_KEY'),
    concurrency: run.concurrency,
    totals: { calls: totals.calls, promptTokens: totals.prompt_tokens, completionTokens: totals.completion_tokens },
    total: initial.total,
    counters,
    onProgress: options.onProgress && ((progress) => options.onProgress?.({ runId, ...progress })),
  });
  const engine: Engine = { db, calls: createCallStore(db), run, settings, prompts, runner, onRetry: options.onRetry ?? (() => {}) };

  // The heartbeat tells other processes (runs list, server start) that this run is alive, even while every
  // call is waiting on a slow server.
  const beat = setInterval(() => touchRunHeartbeat(db, runId, clock()), HEARTBEAT_MS);
  beat.unref();
  let pool: { stop: CallStop | null };
  try {
    runner.progress();
    pool = await runPool(
      ids,
      run.concurrency,
      stopAll,
      async (id) => ((await generateDialogue(engine, id)) === 'complete' ? 'done' : 'failed'),
      counters,
      (id, reason) => failDialogue(db, id, reason, clock()),
      runner.progress,
    );
  } finally {
    clearInterval(beat);
    detach();
    resetRunningDialogues(db, runId);
  }
  const stopError = pool.stop?.message ?? null;
  const state: RunState = stopError ? 'failed' : options.signal?.aborted ? (options.signal.reason === 'cancel' ? 'cancelled' : 'paused') : 'complete';
  finishRun(db, runId, { state, error: stopError, simulationCard: null }, clock());
  finishRun(db, runId, { state, error: stopError, simulationCard: buildSimulationCard(db, runId) }, clock());
  const counts = countRunDialogues(db, runId);
  return { runId, state, error: stopError, total: counts.total, complete: counts.complete, failed: counts.failed };
}
