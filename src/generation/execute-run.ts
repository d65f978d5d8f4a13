import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import { seedFrom } from '../scenarios/seeded-random.js';
import { type Cast, type SpokenTurn, agentMessages, fullName, scriptMessages } from './build-messages.js';
import { type CallStore, createCallStore, hashRequestJson, requestJson, runCallTotals } from './call.queries.js';
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
import { type ChatMessage, type ChatOutcome, type ChatRequest, isLastingRefusal, type LlmClient, outcomeColumns, type ResponseFormat } from './llm-client.js';
import { type Parsed, agentResponseFormat, parseAgentTurn, parseScript, scriptResponseFormat } from './model-output.schema.js';
import { type PromptSet, loadPrompts } from './prompts.js';
import { retryDelayMs, sleep } from './retry-delay.js';
import { HEARTBEAT_MS, type RunRow, type RunState, finishRun, getRun, markRunStarted, runHasLiveWorker, touchRunHeartbeat } from './run.queries.js';
import { buildSimulationCard } from './simulation-card.js';
import { parseJsonColumn } from '../db/json-column.js';
import { runSettingsSchema } from './run-columns.schema.js';
import { readStoredAnswer } from './stored-answer.js';

export type RunProgress = {
  runId: number;
  total: number;
  done: number;
  failed: number;
  inFlight: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  elapsedMs: number;
  /** Estimated from this session's pace; null until a dialogue has finished. */
  remainingMs: number | null;
};

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

/** Ends one dialogue as failed (the run goes on). */
class DialogueFailure extends Error {}
/** Stops the whole run (wrong key, unknown model, unreachable endpoint); what is done is kept. */
class RunStop extends Error {}
class Stopped extends Error {}

type Place = { runId: number; dialogueId: number; turnIdx: number; speaker: 1 | 2 | null; generation: number };

/**
 * The seed of a request at a place after `invalid` invalid answers there, in generation `generation` of the
 * dialogue. The first request of the first generation keeps the dialogue's seed; every retry after an invalid
 * answer, and every later generation of a failed dialogue, gets a seed of its own (stored in its request), since
 * a seeded server repeats its answer to an identical request.
 */
export function requestSeed(base: number | null, generation: number, invalid: number): number | null {
  if (generation === 1 && invalid === 0) return base;
  return seedFrom(base ?? 0, 'generation', generation, 'invalid', invalid) % 2 ** 31;
}

function withSeed(request: ChatRequest, seed: number | null): ChatRequest {
  if (seed === null) return request;
  return { ...request, seed };
}

type Engine = {
  db: Db;
  calls: CallStore;
  run: RunRow;
  settings: RunSettings;
  prompts: PromptSet;
  llm: LlmClient;
  clock: Clock;
  random: () => number;
  backoff: { baseMs: number; maxMs: number };
  signal: AbortSignal;
  apiKeyEnv: string;
  onRetry: (retry: RetryNotice) => void;
  stats: { inFlight: number; calls: number; promptTokens: number; completionTokens: number };
  progress: () => void;
};

function resumeHint(run: RunRow): string {
  return `then resume with: simarena generate --resume ${run.name}`;
}

function stopMessage(e: Engine, outcome: Exclude<ChatOutcome, { status: 'ok' | 'aborted' | 'malformed' }>, attempts: number): string {
  const where = `the endpoint "${e.run.endpoint_name ?? 'default'}" at ${e.llm.baseUrl}`;
  if (outcome.status === 'http_error') {
    if (outcome.httpStatus === 401 || outcome.httpStatus === 403)
      return `${where} refused the API key (HTTP ${outcome.httpStatus}): set ${e.apiKeyEnv} to a valid key, ${resumeHint(e.run)}`;
    // A run keeps its model, so resuming cannot cure an unknown model; a wrong base URL it can.
    if (outcome.httpStatus === 404 && /model/i.test(outcome.error))
      return `${where} does not know model "${e.run.model}" (HTTP 404): check --model (the name as that server knows it) or --endpoint and start a new run; what run "${e.run.name}" generated is kept`;
    if (outcome.httpStatus === 404)
      return `${where} has no chat completions API (HTTP 404: ${outcome.error}): check OPENAI_BASE_URL (or the endpoint's baseUrl; OpenAI-compatible servers usually end in /v1), ${resumeHint(e.run)}`;
    if (outcome.httpStatus === 400)
      return `${where} rejected the request format (HTTP 400: ${outcome.error}): if the server lacks json_schema, start the run with --response-format json_object`;
    return `${where} kept failing (HTTP ${outcome.httpStatus}: ${outcome.error}) after ${attempts} attempt(s); ${resumeHint(e.run)}`;
  }
  if (outcome.status === 'timeout') return `${where} did not answer in time (${outcome.error}) after ${attempts} attempt(s): raise --timeout or lower --concurrency, ${resumeHint(e.run)}`;
  return `cannot reach ${where} (${outcome.error}) after ${attempts} attempt(s): check OPENAI_BASE_URL (or the endpoint's baseUrl) and that the server is running, ${resumeHint(e.run)}`;
}

/**
 * One model call at one place of a dialogue, with our retries. A call already stored at this place with the
 * same request and a valid answer is reused, so that a resumed run never pays twice for a completed call.
 * Every attempt is stored before its answer is used.
 */
async function obtain<T>(e: Engine, place: Place, request: ChatRequest, parse: (content: string | null) => Parsed<T>): Promise<{ value: T; callId: number }> {
  const everyCall = e.calls.listCallsAt(place.dialogueId, place.turnIdx);
  // Calls of earlier generations of a failed dialogue are kept but never reused: it is generated anew.
  const stored = everyCall.filter((c) => c.generation === place.generation);
  const base = request.seed ?? null;
  const requestAfter = (invalidAnswers: number) => withSeed(request, requestSeed(base, place.generation, invalidAnswers));
  let invalid = stored.filter((c) => c.status === 'invalid').length;
  // A resumed run reuses a valid answer to any request this place has sent (one per invalid answer before it).
  const sent = new Set(Array.from({ length: invalid + 1 }, (_, k) => hashRequestJson(requestJson(requestAfter(k)))));
  for (const call of stored) {
    if (call.status !== 'ok' || !sent.has(call.request_hash) || call.response === null) continue;
    const parsed = parse(readStoredAnswer(call.response, `llm_calls.response of call ${call.id}`).content);
    if (parsed.ok) return { value: parsed.value, callId: call.id };
  }
  let attempt = everyCall.reduce((max, c) => Math.max(max, c.attempt), 0);
  let transient = 0;
  for (;;) {
    if (e.signal.aborted) throw new Stopped();
    const current = requestAfter(invalid);
    const json = requestJson(current);
    const hash = hashRequestJson(json);
    attempt += 1;
    e.stats.inFlight += 1;
    e.progress();
    const started = performance.now();
    // A signal per call: the SDK leaves its listener on the signal it is given, and the run's signal lives long.
    const callStop = new AbortController();
    const relay = () => callStop.abort();
    e.signal.addEventListener('abort', relay, { once: true });
    const outcome = await e.llm.complete(current, { timeoutMs: e.settings.timeoutMs, signal: callStop.signal }).finally(() => e.signal.removeEventListener('abort', relay));
    const latencyMs = Math.round(performance.now() - started);
    e.stats.inFlight -= 1;
    // A call cut short by a stop is not a completed call: nothing to store. One that completed as the stop came
    // is stored like any other, so that a resumed run does not pay for it again.
    if (outcome.status === 'aborted') throw new Stopped();

    let parsed: Parsed<T> | null = null;
    if (outcome.status === 'ok') parsed = parse(outcome.content);
    const status =
      outcome.status === 'ok'
        ? parsed?.ok
          ? 'ok'
          : 'invalid'
        : outcome.status === 'malformed'
          ? 'invalid'
          : outcome.status;
    const error =
      outcome.status === 'ok' ? (parsed && !parsed.ok ? parsed.error : null) : outcome.status === 'malformed' ? outcome.error : outcome.error;
    const callId = e.calls.insertCall(
      {
        ...place,
        attempt,
        requestHash: hash,
        request: json,
        ...outcomeColumns(outcome),
        status,
        error,
        latencyMs,
        generation: place.generation,
      },
      e.clock(),
    );
    e.stats.calls += 1;
    if (outcome.status === 'ok') {
      e.stats.promptTokens += outcome.promptTokens;
      e.stats.completionTokens += outcome.completionTokens;
    }
    e.progress();

    if (parsed?.ok) return { value: parsed.value, callId };
    if (status === 'invalid') {
      invalid += 1;
      const final = invalid > e.settings.maxInvalidRetries;
      e.onRetry({
        dialogueId: place.dialogueId,
        turnIdx: place.turnIdx,
        attempt,
        status: 'invalid',
        error: error ?? 'invalid',
        delayMs: 0,
        nextSeed: final ? null : requestSeed(base, place.generation, invalid),
        final,
      });
      if (final) throw new DialogueFailure(`invalid model output after ${invalid} attempt(s): ${error ?? 'invalid'}`);
      continue;
    }
    if (outcome.status === 'ok' || outcome.status === 'malformed') continue;
    if (outcome.status === 'http_error' && isLastingRefusal(outcome.httpStatus)) {
      const code = outcome.httpStatus;
      const aboutFormat = /response_format|json_schema|json_object/i.test(outcome.error);
      if (code === 401 || code === 403 || code === 404 || (code === 400 && aboutFormat)) throw new RunStop(stopMessage(e, outcome, attempt));
      throw new DialogueFailure(`the endpoint rejected the request (HTTP ${code}: ${outcome.error})`);
    }
    transient += 1;
    if (transient > e.settings.maxRetries) throw new RunStop(stopMessage(e, outcome, transient));
    const retryAfter = outcome.status === 'http_error' ? outcome.retryAfterMs : null;
    const delayMs = retryDelayMs(transient, retryAfter, e.random, e.backoff);
    e.onRetry({
      dialogueId: place.dialogueId,
      turnIdx: place.turnIdx,
      attempt,
      status: outcome.status === 'http_error' ? `HTTP ${outcome.httpStatus}` : outcome.status,
      error: outcome.error,
      delayMs,
    });
    await sleep(delayMs, e.signal);
  }
}

function loadCast(db: Db, dialogueId: number): { cast: Cast; dialogue: NonNullable<ReturnType<typeof getDialogue>> } {
  const dialogue = getDialogue(db, dialogueId);
  if (!dialogue) throw new Error(`dialogue ${dialogueId} vanished`);
  const scenario = getScenario(db, dialogue.scenario_id);
  const castRow = getCast(db, dialogue.cast_id);
  const c1 = castRow && getCharacter(db, castRow.character_1_id);
  const c2 = castRow && getCharacter(db, castRow.character_2_id);
  if (!scenario || !c1 || !c2) throw new DialogueFailure('its scenario or characters are no longer in the library');
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
    failDialogueWithTurns(e.db, dialogueId, { ...result, reason }, e.clock());
    return 'failed';
  }
  completeDialogue(e.db, dialogueId, result, e.clock());
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
  markRunStarted(db, runId, process.pid, clock());
  const stopAll = new AbortController();
  // Every call in flight and every backoff wait listens to the stop signal.
  setMaxListeners(2 * run.concurrency + 10, stopAll.signal);
  const onOuterAbort = () => stopAll.abort(options.signal?.reason);
  if (options.signal?.aborted) stopAll.abort(options.signal.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const initial = countRunDialogues(db, runId);
  const totals = runCallTotals(db, runId);
  const counters = { done: initial.complete, failed: initial.failed, finishedThisSession: 0 };
  const startedAt = performance.now();
  const engine: Engine = {
    db,
    calls: createCallStore(db),
    run,
    settings,
    prompts,
    llm: options.llm,
    clock,
    random: options.random ?? Math.random,
    backoff: options.backoff ?? { baseMs: 500, maxMs: 30_000 },
    signal: stopAll.signal,
    apiKeyEnv: options.apiKeyEnv ?? 'OPENAI_API_KEY',
    onRetry: options.onRetry ?? (() => {}),
    stats: { inFlight: 0, calls: totals.calls, promptTokens: totals.prompt_tokens, completionTokens: totals.completion_tokens },
    progress: () => {
      if (!options.onProgress) return;
      const elapsedMs = performance.now() - startedAt;
      const left = initial.total - counters.done - counters.failed;
      options.onProgress({
        runId,
        total: initial.total,
        done: counters.done,
        failed: counters.failed,
        inFlight: engine.stats.inFlight,
        calls: engine.stats.calls,
        promptTokens: engine.stats.promptTokens,
        completionTokens: engine.stats.completionTokens,
        elapsedMs,
        remainingMs: counters.finishedThisSession > 0 ? (elapsedMs / counters.finishedThisSession) * left : null,
      });
    },
  };

  // The heartbeat tells other processes (runs list, server start) that this run is alive, even while every
  // call is waiting on a slow server.
  const beat = setInterval(() => touchRunHeartbeat(db, runId, clock()), HEARTBEAT_MS);
  beat.unref();
  let stopError: string | null = null;
  let next = 0;
  const worker = async () => {
    while (!stopAll.signal.aborted && next < ids.length) {
      const id = ids[next++] as number;
      try {
        const state = await generateDialogue(engine, id);
        if (state === 'complete') counters.done += 1;
        else counters.failed += 1;
        counters.finishedThisSession += 1;
      } catch (error) {
        if (error instanceof Stopped) return;
        if (error instanceof RunStop) {
          stopError ??= error.message;
          stopAll.abort('stop');
          return;
        }
        const reason = error instanceof DialogueFailure ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
        failDialogue(db, id, reason, clock());
        counters.failed += 1;
        counters.finishedThisSession += 1;
      }
      engine.progress();
    }
  };
  try {
    engine.progress();
    await Promise.all(Array.from({ length: Math.min(run.concurrency, ids.length) }, worker));
  } finally {
    clearInterval(beat);
    options.signal?.removeEventListener('abort', onOuterAbort);
    resetRunningDialogues(db, runId);
  }
  const state: RunState = stopError ? 'failed' : options.signal?.aborted ? (options.signal.reason === 'cancel' ? 'cancelled' : 'paused') : 'complete';
  finishRun(db, runId, { state, error: stopError, simulationCard: null }, clock());
  finishRun(db, runId, { state, error: stopError, simulationCard: buildSimulationCard(db, runId) }, clock());
  const counts = countRunDialogues(db, runId);
  return { runId, state, error: stopError, total: counts.total, complete: counts.complete, failed: counts.failed };
}
