import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock.js';
import { seedFrom } from '../scenarios/seeded-random.js';
import { type CallLedger, type CallStatus, hashRequestJson, requestJson, type StoredCall } from './call.queries.js';
import { type ChatOutcome, type ChatRequest, isLastingRefusal, type LlmClient, outcomeColumns } from './llm-client.js';
import type { Parsed } from './model-output.schema.js';
import { retryDelayMs, sleep } from './retry-delay.js';
import { readStoredAnswer } from './stored-answer.js';

// The one model-call runner, for generation, episode evaluation and the LLM judge alike: every attempt stored with its
// full request and answer before the answer is used; a stored valid answer to the same request reused, so that a resumed
// run or evaluation never pays twice; transient errors (408, 429, 5xx, no answer) retried with backoff a bounded number
// of times; an invalid answer asked again a bounded number of times; a refusal that sending again cannot lift ends the
// item, or stops everything when nothing else would fare better (wrong key, unknown model, wrong address or format).

/** A call already stored at a place (a turn of a dialogue, an item of an evaluation), as the runner reads it. */

/** What the caller says in a stop: where, what to fix, how to resume. Each channel words its own flags. */
export type StopWording = {
  /** `the endpoint "name" at URL` */
  where: string;
  apiKeyEnv: string;
  /** `then resume with: ...` */
  resumeHint: string;
  /** After `where`, when the endpoint does not know the model (HTTP 404 naming the model). */
  unknownModel: string;
  /** What to check when the address answers 404 or does not answer. */
  checkAddress: { noChatApi: string; unreachable: string };
  /** After `where`, when the endpoint rejects the response format. */
  badFormat: string;
  /** Before the resume hint after a timeout (`: raise --timeout..., `), or '; '. */
  timeoutAdvice: string;
  /** "model output", "judge output": named when the answers stay invalid. */
  output: string;
};

export type CallRetryNotice = { attempt: number; status: string; error: string; delayMs: number; nextSeed?: number | null; final?: boolean };

export type CallStats = { inFlight: number; calls: number; promptTokens: number; completionTokens: number };

/** What every call of one run or evaluation shares. */
export type CallRunner = {
  llm: LlmClient;
  clock: Clock;
  random: () => number;
  backoff: { baseMs: number; maxMs: number };
  signal: AbortSignal;
  limits: { timeoutMs: number; maxRetries: number; maxInvalidRetries: number };
  wording: StopWording;
  stats: CallStats;
  progress: () => void;
};

/** One call to obtain at one place. */
export type CallSpec<T> = {
  request: ChatRequest;
  parse: (content: string | null) => Parsed<T>;
  ledger: CallLedger;
  /**
   * After an invalid answer, ask with a seed of its own (generation `generation` of the place; see requestSeed), since
   * a seeded server repeats its answer to an identical request; null sends the same request again.
   */
  reseed: { generation: number } | null;
  onRetry?: (notice: CallRetryNotice) => void;
};

/** Ends one item (a dialogue, an evaluation item) as failed; the rest go on. */
export class ItemFailure extends Error {}
/** Stops the whole run or evaluation; what is done is kept. `unknownModel` when the endpoint does not know the model. */
export class CallStop extends Error {
  constructor(
    message: string,
    readonly unknownModel: boolean = false,
  ) {
    super(message);
  }
}
/** The signal stopped the work (pause or cancel). */
export class Stopped extends Error {}

/**
 * The seed of a request at a place after `invalid` invalid answers there, in generation `generation` of the
 * place. The first request of the first generation keeps its seed; every retry after an invalid answer, and every
 * later generation of a failed dialogue, gets a seed of its own (stored in its request), since a seeded server
 * repeats its answer to an identical request.
 */
export function requestSeed(base: number | null, generation: number, invalid: number): number | null {
  if (generation === 1 && invalid === 0) return base;
  return seedFrom(base ?? 0, 'generation', generation, 'invalid', invalid) % 2 ** 31;
}

function withSeed(request: ChatRequest, seed: number | null): ChatRequest {
  if (seed === null) return request;
  return { ...request, seed };
}

type Failed = Exclude<ChatOutcome, { status: 'ok' | 'aborted' | 'malformed' }>;

/** The stop after a refusal or after the retries ran out, in the caller's words. */
export function stopFor(w: StopWording, outcome: Failed, attempts: number): CallStop {
  if (outcome.status === 'http_error') {
    const code = outcome.httpStatus;
    if (code === 401 || code === 403) return new CallStop(`${w.where} refused the API key (HTTP ${code}): set ${w.apiKeyEnv} to a valid key, ${w.resumeHint}`);
    if (code === 404 && /model/i.test(outcome.error)) return new CallStop(`${w.where} ${w.unknownModel}`, true);
    if (code === 404) return new CallStop(`${w.where} has no chat completions API (HTTP 404: ${outcome.error}): check ${w.checkAddress.noChatApi}, ${w.resumeHint}`);
    if (code === 400) return new CallStop(`${w.where} rejected the request format (HTTP 400: ${outcome.error}): ${w.badFormat}`);
    return new CallStop(`${w.where} kept failing (HTTP ${code}: ${outcome.error}) after ${attempts} attempt(s); ${w.resumeHint}`);
  }
  if (outcome.status === 'timeout') return new CallStop(`${w.where} did not answer in time (${outcome.error}) after ${attempts} attempt(s)${w.timeoutAdvice}${w.resumeHint}`);
  return new CallStop(`cannot reach ${w.where} (${outcome.error}) after ${attempts} attempt(s): check ${w.checkAddress.unreachable} and that the server is running, ${w.resumeHint}`);
}

/**
 * A refusal that no other item would fare better with stops everything: a refused key, an unknown model or address,
 * an unsupported response format. Any other lasting refusal (a request too long, say) ends this item only.
 */
function stopsEverything(outcome: Extract<ChatOutcome, { status: 'http_error' }>): boolean {
  const code = outcome.httpStatus;
  return code === 401 || code === 403 || code === 404 || (code === 400 && /response_format|json_schema|json_object/i.test(outcome.error));
}

/** A valid stored answer at this place to one of the requests it has sent, or null. */
export function reuseStoredAnswer<T>(
  ledger: Pick<CallLedger, 'table'>,
  stored: StoredCall[],
  hashes: Set<string>,
  parse: (content: string | null) => Parsed<T>,
): { value: T; callId: number } | null {
  for (const call of stored) {
    if (call.status !== 'ok' || !hashes.has(call.request_hash) || call.response === null) continue;
    const parsed = parse(readStoredAnswer(call.response, `${ledger.table}.response of call ${call.id}`).content);
    if (parsed.ok) return { value: parsed.value, callId: call.id };
  }
  return null;
}

/** Sends one request with a per-call signal (the SDK leaves its listener on the signal it is given, and the run's lives long). */
async function send(r: CallRunner, request: ChatRequest): Promise<{ outcome: ChatOutcome; latencyMs: number }> {
  r.stats.inFlight += 1;
  r.progress();
  const started = performance.now();
  const callStop = new AbortController();
  const relay = () => callStop.abort();
  r.signal.addEventListener('abort', relay, { once: true });
  const outcome = await r.llm.complete(request, { timeoutMs: r.limits.timeoutMs, signal: callStop.signal }).finally(() => r.signal.removeEventListener('abort', relay));
  r.stats.inFlight -= 1;
  return { outcome, latencyMs: Math.round(performance.now() - started) };
}

/** Stores one completed call and counts it; returns its id and how it reads. */
function record<T>(r: CallRunner, spec: CallSpec<T>, attempt: number, request: ChatRequest, sent: { outcome: Exclude<ChatOutcome, { status: 'aborted' }>; latencyMs: number }) {
  const { outcome, latencyMs } = sent;
  const json = requestJson(request);
  const parsed = outcome.status === 'ok' ? spec.parse(outcome.content) : null;
  const status: CallStatus = outcome.status === 'ok' ? (parsed?.ok ? 'ok' : 'invalid') : outcome.status === 'malformed' ? 'invalid' : outcome.status;
  const error = outcome.status === 'ok' ? (parsed && !parsed.ok ? parsed.error : null) : outcome.error;
  const callId = spec.ledger.insert(
    { attempt, requestHash: hashRequestJson(json), request: json, ...outcomeColumns(outcome), status, error, latencyMs, providerBatchId: null, baseUrl: r.llm.baseUrl },
    r.clock(),
  );
  r.stats.calls += 1;
  if (outcome.status === 'ok') {
    r.stats.promptTokens += outcome.promptTokens;
    r.stats.completionTokens += outcome.completionTokens;
  }
  r.progress();
  return { callId, parsed, status, error };
}

/**
 * One model call at one place, with the runner's retries; returns the valid answer and the id of the call that gave
 * it. Throws ItemFailure (this place cannot be answered), CallStop (nothing can) or Stopped (the signal).
 */
export async function obtainAnswer<T>(r: CallRunner, spec: CallSpec<T>): Promise<{ value: T; callId: number }> {
  const everyCall = spec.ledger.list();
  const generation = spec.reseed?.generation ?? 1;
  // Calls of earlier generations of a failed dialogue are kept but never reused: it is generated anew.
  const current = everyCall.filter((c) => (c.generation ?? 1) === generation);
  const base = spec.request.seed ?? null;
  const requestAfter = (invalidAnswers: number) => (spec.reseed ? withSeed(spec.request, requestSeed(base, generation, invalidAnswers)) : spec.request);
  // With reseeding the next seed depends on the invalid answers before it, so a resume counts them.
  let invalid = spec.reseed ? current.filter((c) => c.status === 'invalid').length : 0;
  // A resume reuses a valid answer to any request this place has sent (one per invalid answer before it).
  const sent = new Set(Array.from({ length: invalid + 1 }, (_, k) => hashRequestJson(requestJson(requestAfter(k)))));
  const reused = reuseStoredAnswer(spec.ledger, current, sent, spec.parse);
  if (reused) return reused;
  const onRetry = spec.onRetry ?? (() => {});
  let attempt = everyCall.reduce((max, c) => Math.max(max, c.attempt), 0);
  let transient = 0;
  for (;;) {
    if (r.signal.aborted) throw new Stopped();
    const request = requestAfter(invalid);
    attempt += 1;
    const sentCall = await send(r, request);
    // A call cut short by a stop is not a completed call: nothing to store. One that completed as the stop came
    // is stored like any other, so that a resume does not pay for it again.
    if (sentCall.outcome.status === 'aborted') throw new Stopped();
    const outcome = sentCall.outcome;
    const { callId, parsed, status, error } = record(r, spec, attempt, request, { outcome, latencyMs: sentCall.latencyMs });
    if (parsed?.ok) return { value: parsed.value, callId };
    if (status === 'invalid') {
      invalid += 1;
      const final = invalid > r.limits.maxInvalidRetries;
      const nextSeed = final || !spec.reseed ? null : requestSeed(base, generation, invalid);
      onRetry({ attempt, status: 'invalid', error: error ?? 'invalid', delayMs: 0, nextSeed, final });
      if (final) throw new ItemFailure(`invalid ${r.wording.output} after ${invalid} attempt(s): ${error ?? 'invalid'}`);
      continue;
    }
    if (outcome.status === 'ok' || outcome.status === 'malformed') continue;
    if (outcome.status === 'http_error' && isLastingRefusal(outcome.httpStatus)) {
      if (stopsEverything(outcome)) throw stopFor(r.wording, outcome, attempt);
      throw new ItemFailure(`the endpoint rejected the request (HTTP ${outcome.httpStatus}: ${outcome.error})`);
    }
    transient += 1;
    if (transient > r.limits.maxRetries) throw stopFor(r.wording, outcome, transient);
    const delayMs = retryDelayMs(transient, outcome.status === 'http_error' ? outcome.retryAfterMs : null, r.random, r.backoff);
    onRetry({ attempt, status: outcome.status === 'http_error' ? `HTTP ${outcome.httpStatus}` : outcome.status, error: outcome.error, delayMs });
    await sleep(delayMs, r.signal);
  }
}

export type WorkCounters = { done: number; failed: number; finishedThisSession: number };

/** Progress of a run or an evaluation; `remainingMs` is estimated from this session's pace, null until an item finished. */
export type WorkProgress = {
  total: number;
  done: number;
  failed: number;
  inFlight: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  elapsedMs: number;
  remainingMs: number | null;
};

export type RunnerSetup = Omit<CallRunner, 'signal' | 'stats' | 'progress' | 'random' | 'backoff'> & {
  random?: () => number;
  backoff?: { baseMs: number; maxMs: number };
  /** The caller's signal: aborting it stops every call and wait, with its reason. */
  signal?: AbortSignal;
  concurrency: number;
  /** What the calls stored before this session counted. */
  totals: { calls: number; promptTokens: number; completionTokens: number };
  total: number;
  counters: WorkCounters;
  onProgress?: (progress: WorkProgress) => void;
};

/** A runner for one session of work: its own stop signal (following the caller's), its counts and its progress. */
export function startCallRunner(setup: RunnerSetup): { runner: CallRunner; stopAll: AbortController; detach: () => void } {
  const { signal: outer, concurrency, totals, total, counters, onProgress, ...shared } = setup;
  const stopAll = new AbortController();
  // Every call in flight and every backoff wait listens to the stop signal.
  setMaxListeners(2 * concurrency + 10, stopAll.signal);
  const onOuterAbort = () => stopAll.abort(outer?.reason);
  if (outer?.aborted) stopAll.abort(outer.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  const startedAt = performance.now();
  const stats: CallStats = { inFlight: 0, ...totals };
  const progress = () => {
    if (!onProgress) return;
    const elapsedMs = performance.now() - startedAt;
    const left = total - counters.done - counters.failed;
    onProgress({
      total,
      done: counters.done,
      failed: counters.failed,
      ...stats,
      elapsedMs,
      remainingMs: counters.finishedThisSession > 0 ? (elapsedMs / counters.finishedThisSession) * left : null,
    });
  };
  const runner: CallRunner = { ...shared, random: setup.random ?? Math.random, backoff: setup.backoff ?? { baseMs: 500, maxMs: 30_000 }, signal: stopAll.signal, stats, progress };
  return { runner, stopAll, detach: () => outer?.removeEventListener('abort', onOuterAbort) };
}

/**
 * Runs `work` on every item with `concurrency` at a time; an item that fails (its work says 'failed', or throws
 * anything but a stop) is counted and told to `onFailure` when it threw; a CallStop ends all. Returns the stop.
 */
export async function runPool<I>(
  items: I[],
  concurrency: number,
  stopAll: AbortController,
  work: (item: I) => Promise<'done' | 'failed'>,
  counters: WorkCounters,
  onFailure: (item: I, reason: string) => void,
  progress: () => void,
): Promise<{ stop: CallStop | null }> {
  let stop: CallStop | null = null;
  let next = 0;
  const worker = async () => {
    while (!stopAll.signal.aborted && next < items.length) {
      const item = items[next++] as I;
      try {
        if ((await work(item)) === 'done') counters.done += 1;
        else counters.failed += 1;
      } catch (error) {
        if (error instanceof Stopped) return;
        if (error instanceof CallStop) {
          stop ??= error;
          stopAll.abort('stop');
          return;
        }
        onFailure(item, error instanceof ItemFailure ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`);
        counters.failed += 1;
      }
      counters.finishedThisSession += 1;
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return { stop };
}
