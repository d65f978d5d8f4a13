import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { recordAudit } from '../audit/audit.queries.js';
import { type RunOptionsInput, type RunSettings, createRun, parseRunOptions, planDialogues } from '../generation/create-run.js';
import { type ResolvedEndpoint, resolveEndpoint } from '../generation/endpoints.js';
import { estimateRun } from '../generation/estimate-run.js';
import type { RetryNotice, RunOutcome, RunProgress } from '../generation/execute-run.js';
import { requeueFailedDialogues } from '../generation/requeue-failed-dialogues.js';
import { runAtEndpoint } from '../generation/run-at-endpoint.js';
import { type RunRow, findRun, getRun, markInterruptedRuns, runHasLiveWorker, updateRunPatience } from '../generation/run.queries.js';
import { estimateCost } from '../generation/simulation-card.js';
import { createBatchApiClient } from '../generation/llm-client.js';
import { type ScriptBatchSettings, collectScriptBatch, DEFAULT_BATCH_POLL_MS } from '../generation/script-batch.js';
import { type CliContext, CliError } from './cli-context.js';
import { numberOption } from './cli-numbers.js';
import { parseJsonColumn } from '../db/json-column.js';
import { cardCostSchema, runSettingsSchema } from '../generation/run-columns.schema.js';

type GenerateFlags = {
  scenarios?: string;
  modes?: string;
  model?: string;
  samples?: string;
  concurrency?: string;
  temperature?: string;
  maxTurns?: string;
  maxTokens?: string;
  seed?: string;
  runName?: string;
  endpoint: string;
  responseFormat: string;
  timeout?: string;
  maxRetries?: string;
  maxInvalidRetries?: string;
  promptVersion?: string;
  pricePrompt?: string;
  priceCompletion?: string;
  dryRun?: boolean;
  resume?: string;
  retryFailed?: boolean;
  minSpokenTurns?: string;
  batchApi?: boolean;
  pollSeconds?: string;
};

// What a run generates is fixed when it is created; a resume may change only how patiently it calls
// (--concurrency, --timeout, --max-retries, --max-invalid-retries).
const RUN_FLAGS: (keyof GenerateFlags)[] = [
  'scenarios', 'modes', 'model', 'samples', 'temperature', 'maxTurns', 'maxTokens', 'seed', 'runName', 'promptVersion', 'pricePrompt', 'priceCompletion',
  'minSpokenTurns', 'batchApi',
];

/** One log line per retry and per invalid answer, so that a slow or failing run explains itself. */
export function retryLine(runName: string, r: RetryNotice): string {
  const where = `[${runName}] dialogue ${r.dialogueId} turn ${r.turnIdx}`;
  if (r.status === 'invalid') {
    return r.final
      ? `${where}: invalid answer (${r.error}); no retries left, the dialogue fails`
      : `${where}: invalid answer (${r.error}); retrying with seed ${r.nextSeed ?? 'none'}`;
  }
  return `${where}: ${r.status} (${r.error}); retrying in ${(r.delayMs / 1000).toFixed(1)} s`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
}

function progressLine(name: string, p: RunProgress): string {
  const tokens = p.promptTokens + p.completionTokens;
  const left = p.remainingMs === null ? '' : `, ~${formatDuration(p.remainingMs)} left`;
  return `[${name}] ${p.done + p.failed}/${p.total} dialogues (${p.failed} failed), ${p.inFlight} call(s) in flight, ${tokens} tokens, ${formatDuration(p.elapsedMs)} elapsed${left}`;
}

/** A token count short enough for a terminal line: 980, 140.7k, 2.6M. */
export function formatCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

// Dialogues finished (failed included) of all; most important first, since a narrow terminal cuts the end.
const BAR_TEXT = '{value}/{total} done, {failed} failed | {elapsed} elapsed, {left} left | {inFlight} in flight | {tokens} tokens';
/** Room the text of the bar needs with large counts (e.g. 12000/12000 done, 1:02:03 elapsed, 125.5M tokens). */
const BAR_TEXT_ROOM = 90;

/**
 * The bar's format for a terminal `columns` wide. cli-progress turns line wrapping off, so the terminal cuts
 * whatever passes the right edge: the bar shrinks (or goes) before any figure does, and times come before tokens.
 */
export function progressBarLayout(columns: number | undefined): { format: string; barsize: number } {
  const barsize = Math.min(40, (columns ?? 80) - BAR_TEXT_ROOM - 3);
  return barsize >= 10 ? { format: `[{bar}] ${BAR_TEXT}`, barsize } : { format: BAR_TEXT, barsize: 0 };
}

export function progressBarPayload(p: RunProgress) {
  return {
    failed: p.failed,
    inFlight: p.inFlight,
    tokens: formatCount(p.promptTokens + p.completionTokens),
    elapsed: formatDuration(p.elapsedMs),
    left: p.remainingMs === null ? '?' : formatDuration(p.remainingMs),
  };
}

/**
 * A bar on a terminal; plain log lines (at most every few seconds, and at the end) otherwise. The bar goes to
 * `stream` (stderr, cli-progress's default), so that stdout stays the run's log and summary.
 */
export function progressReporter(ctx: CliContext, name: string, stream: NodeJS.WriteStream = process.stderr) {
  if (ctx.isTty) {
    // The run's name is on the line printed before the bar.
    // forceRedraw: after a log line the bar is drawn again below it at the next tick, even if no figure changed.
    const bar = new SingleBar({ ...progressBarLayout(stream.columns), hideCursor: true, stream, forceRedraw: true });
    let started = false;
    return {
      update(p: RunProgress) {
        const payload = progressBarPayload(p);
        if (!started) {
          bar.start(p.total, p.done + p.failed, payload);
          started = true;
        } else bar.update(p.done + p.failed, payload);
      },
      stop: () => started && bar.stop(),
      // A log line (a retry, an invalid answer) above the bar: clear the bar's line and write; the bar is drawn
      // again below it at its next tick (forceRedraw).
      log: (line: string) => stream.write(`\r\u001b[2K${line}\n`),
    };
  }
  let lastLogged = 0;
  let lastFinished = -1;
  let last: RunProgress | null = null;
  return {
    update(p: RunProgress) {
      last = p;
      const finished = p.done + p.failed;
      if (finished !== lastFinished && Date.now() - lastLogged >= 5000) {
        lastLogged = Date.now();
        lastFinished = finished;
        ctx.out(progressLine(name, p));
      }
    },
    stop: () => {
      if (last && last.done + last.failed !== lastFinished) ctx.out(progressLine(name, last));
    },
    log: (line: string) => ctx.out(line),
  };
}

function summary(ctx: CliContext, runId: number, outcome: RunOutcome): void {
  const run = getRun(ctx.db(), runId);
  const card = run?.simulation_card ? parseJsonColumn(cardCostSchema, run.simulation_card, `runs.simulation_card of run ${runId}`) : null;
  const cost = card?.calls.estimated_cost;
  ctx.out(
    `Run ${run?.name} (id ${runId}): ${outcome.state}. ${outcome.complete}/${outcome.total} dialogues complete, ${outcome.failed} failed; ` +
      `${card?.calls.total ?? 0} calls, ${card?.calls.prompt_tokens ?? 0} prompt + ${card?.calls.completion_tokens ?? 0} completion tokens` +
      (cost === null || cost === undefined ? '.' : `, estimated cost ${cost.toFixed(4)}.`),
  );
}

/**
 * --batch-api: the run's SCRIPT calls through the OpenAI Batch API before the engine runs (src/generation/script-batch.ts).
 * False when stopped while polling: the batch id is stored, and --resume polls it again.
 */
async function collectBatch(ctx: CliContext, runId: number, pollMs: number): Promise<boolean> {
  const db = ctx.db();
  const run = getRun(db, runId);
  if (!run) throw new CliError(`no run with id ${runId}`);
  const endpoint = resolveEndpoint(ctx.config(), ctx.env ?? {}, run.endpoint_name ?? 'default', run.model ?? '');
  const stop = new AbortController();
  const onSignal = () => stop.abort('pause');
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await collectScriptBatch(db, runId, {
      client: createBatchApiClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey }),
      pollMs,
      clock: ctx.now,
      signal: stop.signal,
      onBatch: (b) => ctx.out(`[${run.name}] Batch API ${b.id}: ${b.status}, ${b.counts.completed}/${b.counts.total} answered, ${b.counts.failed} failed`),
    });
    if (result === 'paused') {
      ctx.out(`Paused while batch is in progress; continue with: simarena generate --resume ${run.name}`);
      return false;
    }
    return true;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

async function execute(ctx: CliContext, runId: number): Promise<void> {
  const db = ctx.db();
  const run = getRun(db, runId);
  if (!run) throw new CliError(`no run with id ${runId}`);
  const reporter = progressReporter(ctx, run.name);
  const stop = new AbortController();
  // Ctrl-C pauses: what is done is kept and `--resume` continues.
  const onSignal = () => stop.abort('pause');
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let outcome: RunOutcome;
  try {
    outcome = await runAtEndpoint(db, runId, {
      config: ctx.config(),
      env: ctx.env ?? {},
      clock: ctx.now,
      signal: stop.signal,
      onProgress: (p) => reporter.update(p),
      // Each retry and each invalid answer is a log line (above the bar on a terminal), so a slow start is explained.
      onRetry: (r) => reporter.log(retryLine(run.name, r)),
    });
  } finally {
    reporter.stop();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  recordAudit(db, { actor: 'cli', action: 'runs.generate', targetType: 'run', targetId: runId, details: { state: outcome.state } }, ctx.now());
  summary(ctx, runId, outcome);
  if (outcome.state === 'failed') throw new CliError(outcome.error ?? 'the run failed');
  if (outcome.state === 'paused') ctx.out(`Paused; continue with: simarena generate --resume ${run.name}`);
}

/** What the action reads and checks before it resumes or creates a run, passed to both. */
type GenerateSetup = {
  db: Db;
  config: Config;
  env: Record<string, string | undefined>;
  concurrency: number | undefined;
  pollSeconds: number | undefined;
  pollMs: number;
};

/** The flags given with --resume that only a new run may set, as typed on the command line. */
function flagsNotAllowedOnResume(flags: GenerateFlags): string[] {
  const given = RUN_FLAGS.filter((f) => flags[f] !== undefined).map((f) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
  if (flags.endpoint !== 'default') given.push('--endpoint');
  if (flags.responseFormat !== 'json_schema') given.push('--response-format');
  return given;
}

/** The run's stored settings with the patience a resume may change (--timeout and the retry limits) applied. */
function resumedRunSettings(flags: GenerateFlags, run: RunRow): RunSettings {
  const settings: RunSettings = parseJsonColumn(runSettingsSchema, run.settings, `runs.settings of run ${run.id}`);
  const timeoutSeconds = numberOption('--timeout', flags.timeout, { min: 0.1 });
  if (timeoutSeconds !== undefined) settings.timeoutMs = Math.round(timeoutSeconds * 1000);
  settings.maxRetries = numberOption('--max-retries', flags.maxRetries, { integer: true, min: 0, max: 20 }) ?? settings.maxRetries;
  settings.maxInvalidRetries = numberOption('--max-invalid-retries', flags.maxInvalidRetries, { integer: true, min: 0, max: 10 }) ?? settings.maxInvalidRetries;
  return settings;
}

/** --resume RUN: continues a stopped run with its own settings (and, with --retry-failed, its failed dialogues again). */
async function resumeRun(ctx: CliContext, flags: GenerateFlags, runRef: string, setup: GenerateSetup): Promise<void> {
  const { db, config, env, concurrency, pollSeconds, pollMs } = setup;
  const given = flagsNotAllowedOnResume(flags);
  if (given.length > 0) throw new CliError(`--resume continues a run with its own settings; drop ${given.join(', ')}`);
  markInterruptedRuns(db, ctx.now());
  const run = findRun(db, runRef);
  if (!run) throw new CliError(`no run "${runRef}": see simarena runs list`);
  if (run.kind !== 'generation') throw new CliError(`run "${run.name}" is an ${run.kind} run; only generation runs can be resumed`);
  const failed = db.prepare(`SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'failed'`).pluck().get(run.id) as number;
  if (run.state === 'complete' && !(flags.retryFailed && failed > 0)) {
    ctx.out(
      `Run ${run.name} (id ${run.id}) is already complete` +
        (failed > 0 ? `; ${failed} dialogue(s) failed: generate them again with simarena generate --resume ${run.name} --retry-failed.` : '.'),
    );
    return;
  }
  const settings = resumedRunSettings(flags, run);
  const endpoint = resolveEndpoint(config, env, run.endpoint_name ?? 'default', run.model ?? '');
  if (flags.dryRun) {
    const left = db.prepare(`SELECT count(*) FROM dialogues WHERE run_id = ? AND state IN ('pending', 'running')`).pluck().get(run.id) as number;
    const again = flags.retryFailed ? ` and ${failed} failed dialogue(s) again` : '';
    ctx.out(`Dry run: resuming ${run.name} would generate ${left} remaining dialogue(s)${again} at ${endpoint.baseUrl}.`);
    return;
  }
  if (runHasLiveWorker(run, ctx.now()))
    throw new CliError(`run "${run.name}" is being generated by process ${run.worker_pid}; wait for it or stop that process`);
  updateRunPatience(db, run.id, { concurrency: concurrency ?? run.concurrency, settings });
  if (flags.retryFailed) {
    const again = requeueFailedDialogues(db, run.id, 'cli', ctx.now());
    ctx.out(`Generating ${again.length} failed dialogue(s) of run ${run.name} again (their earlier calls are kept).`);
  }
  ctx.out(`Resuming run ${run.name} (id ${run.id}) at ${endpoint.baseUrl}.`);
  // The batch is read as often as the run asked when it was sent, unless --poll-seconds says otherwise now.
  const batch = (settings as ScriptBatchSettings).scriptBatch;
  if (batch && !(await collectBatch(ctx, run.id, pollSeconds === undefined ? (batch.pollMs ?? pollMs) : pollMs))) return;
  await execute(ctx, run.id);
}

/** The new run the flags describe, each number checked; prices from the flags, else from the endpoint file. */
function newRunInput(flags: GenerateFlags, responseFormat: RunOptionsInput['responseFormat'], endpoint: ResolvedEndpoint, concurrency: number | undefined): RunOptionsInput {
  const model = flags.model as string;
  const timeoutSeconds = numberOption('--timeout', flags.timeout, { min: 0.1 });
  return {
    name: flags.runName,
    scenarios: flags.scenarios as string,
    modes: (flags.modes as string).split(',').map((m) => m.trim()).filter(Boolean),
    model,
    endpointName: endpoint.name,
    baseUrl: endpoint.baseUrl,
    samples: numberOption('--samples', flags.samples, { integer: true, min: 1, max: 1000 }),
    concurrency,
    temperature: numberOption('--temperature', flags.temperature, { min: 0, max: 2 }),
    maxTurns: numberOption('--max-turns', flags.maxTurns, { integer: true, min: 1, max: 200 }),
    maxTokens: numberOption('--max-tokens', flags.maxTokens, { integer: true, min: 1 }) ?? null,
    seed: numberOption('--seed', flags.seed, { integer: true, min: 0, max: 2 ** 31 - 1 }),
    responseFormat,
    promptVersion: flags.promptVersion,
    timeoutMs: timeoutSeconds === undefined ? undefined : Math.round(timeoutSeconds * 1000),
    maxRetries: numberOption('--max-retries', flags.maxRetries, { integer: true, min: 0, max: 20 }),
    maxInvalidRetries: numberOption('--max-invalid-retries', flags.maxInvalidRetries, { integer: true, min: 0, max: 10 }),
    minSpokenTurns: numberOption('--min-spoken-turns', flags.minSpokenTurns, { integer: true, min: 0, max: 200 }),
    pricePromptPerMTok: numberOption('--price-prompt', flags.pricePrompt, { min: 0 }) ?? endpoint.price?.promptPerMTok ?? null,
    priceCompletionPerMTok: numberOption('--price-completion', flags.priceCompletion, { min: 0 }) ?? endpoint.price?.completionPerMTok ?? null,
    createdBy: 'cli',
  };
}

/** --dry-run of a new run: the dialogues it would generate, its calls, tokens and cost; nothing stored. */
function printDryRun(ctx: CliContext, db: Db, config: Config, input: RunOptionsInput, endpoint: ResolvedEndpoint): void {
  const options = parseRunOptions(input);
  const planned = planDialogues(db, options);
  const estimate = estimateRun(db, planned, options);
  const scenarios = new Set(planned.map((p) => p.scenario.id)).size;
  ctx.out(`Dry run: nothing generated, nothing stored.`);
  ctx.out(`Endpoint: ${endpoint.name} (${endpoint.baseUrl}), model ${options.model}, temperature ${options.temperature}, max turns ${options.maxTurns}.`);
  ctx.out(
    `Dialogues: ${estimate.dialogues} (${Object.entries(estimate.byMode).map(([m, n]) => `${m} ${n}`).join(', ')}) over ${scenarios} scenario(s), ${options.samples} sample(s) per cast.`,
  );
  ctx.out(`Calls: at most ${estimate.calls} (every AGENTS/MINDREADERS dialogue running to ${options.maxTurns} turns), before retries.`);
  ctx.out(`Tokens (rough estimate): ${estimate.promptTokens} prompt + ${estimate.completionTokens} completion.`);
  const cost = estimateCost(estimate.promptTokens, estimate.completionTokens, options.pricePromptPerMTok, options.priceCompletionPerMTok);
  ctx.out(
    cost === null
      ? `Cost: unknown (no prices for ${options.model}: declare them in ${config.endpointsFile} or pass --price-prompt and --price-completion).`
      : `Cost (estimate, upper bound): ${cost.toFixed(4)}.`,
  );
}

/** Without --resume: creates the run the flags describe and generates it (or, with --dry-run, only estimates it). */
async function generateNewRun(ctx: CliContext, flags: GenerateFlags, setup: GenerateSetup): Promise<void> {
  const { db, config, env, concurrency, pollMs } = setup;
  const missing = (['scenarios', 'modes', 'model'] as const).filter((f) => !flags[f]);
  if (missing.length > 0) throw new CliError(`generate needs ${missing.map((f) => `--${f}`).join(', ')} (or --resume RUN)`);
  const responseFormat = flags.responseFormat;
  if (responseFormat !== 'json_schema' && responseFormat !== 'json_object')
    throw new CliError(`--response-format must be json_schema or json_object, not "${responseFormat}"`);
  const endpoint = resolveEndpoint(config, env, flags.endpoint, flags.model as string);
  const input = newRunInput(flags, responseFormat, endpoint, concurrency);
  if (flags.dryRun) {
    printDryRun(ctx, db, config, input, endpoint);
    return;
  }
  const runId = createRun(db, input, ctx.now());
  const run = getRun(db, runId);
  ctx.out(`Run ${run?.name} (id ${runId}): ${db.prepare('SELECT count(*) FROM dialogues WHERE run_id = ?').pluck().get(runId)} dialogue(s) at ${endpoint.baseUrl}.`);
  if (flags.batchApi && !(await collectBatch(ctx, runId, pollMs))) return;
  await execute(ctx, runId);
}

export function registerGenerate(program: Command, ctx: CliContext): void {
  program
    .command('generate')
    .description('generate dialogues: for each scenario, cast and sample, one dialogue per mode (or --resume a run)')
    .option('--scenarios <selector>', 'scenario ids separated by commas, a category (cooperative, competitive, mixed) or all')
    .option('--modes <modes>', 'modes separated by commas: script,agents,mindreaders (the human modes are collected or imported, not generated)')
    .option('--model <name>', 'model name as the endpoint knows it, e.g. gpt-4o-mini')
    .option('--samples <n>', 'dialogues per scenario, cast and mode (default 1)')
    .option('--concurrency <n>', 'dialogues generated at once (default 4)')
    .option('--temperature <t>', 'sampling temperature (default 0.7, as in the published study)')
    .option('--max-turns <n>', 'turn limit per dialogue (default 20)')
    .option('--max-tokens <n>', 'max tokens per call (default: the server default)')
    .option('--seed <n>', 'run seed; each dialogue gets a seed derived from it and its scenario sample (default 0)')
    .option('--run-name <name>', 'a name for the run (default gen-<time>-<model>)')
    .option('--endpoint <name>', 'named endpoint from ENDPOINTS_FILE; "default" is OPENAI_BASE_URL with OPENAI_API_KEY', 'default')
    .option('--response-format <kind>', 'json_schema (structured outputs) or json_object for servers without json_schema', 'json_schema')
    .option('--timeout <seconds>', 'per-call timeout in seconds (default 120)')
    .option('--max-retries <n>', 'retries of a call on 429, 5xx, connection errors and timeouts (default 5)')
    .option('--max-invalid-retries <n>', 'retries of a call whose output is invalid before the dialogue fails (default 2)')
    .option('--prompt-version <v>', 'prompt version under src/generation/prompts/ (default v1)')
    .option('--price-prompt <p>', 'price per million prompt tokens (overrides the endpoint file)')
    .option('--price-completion <p>', 'price per million completion tokens (overrides the endpoint file)')
    .option('--batch-api', 'send the SCRIPT calls through the OpenAI Batch API first (half price, answers within 24 h); --resume polls the stored batch again')
    .option('--poll-seconds <s>', 'with --batch-api or on resume: seconds between batch status reads (default 30)')
    .option('--dry-run', 'print the dialogues, estimated calls, tokens and cost; generate nothing')
    .option('--min-spoken-turns <n>', 'a dialogue with fewer spoken turns fails (with the reason) and never enters a batch (default 4)')
    .option('--resume <run>', 'continue a stopped run (id or name) with its own settings; --concurrency, --timeout and the retry limits may change')
    .option('--retry-failed', 'with --resume: generate the failed dialogues of the run again (new calls; the earlier ones are kept)')
    .action(async (flags: GenerateFlags) => {
      const db = ctx.db();
      const config = ctx.config();
      const env = ctx.env ?? {};
      const concurrency = numberOption('--concurrency', flags.concurrency, { integer: true, min: 1, max: 256 });
      const pollSeconds = numberOption('--poll-seconds', flags.pollSeconds, { min: 0.01, max: 3600 });
      const pollMs = pollSeconds === undefined ? DEFAULT_BATCH_POLL_MS : Math.round(pollSeconds * 1000);
      const setup: GenerateSetup = { db, config, env, concurrency, pollSeconds, pollMs };

      if (flags.retryFailed && flags.resume === undefined) throw new CliError('--retry-failed needs --resume RUN (the run whose failed dialogues to generate again)');
      if (flags.resume !== undefined) await resumeRun(ctx, flags, flags.resume, setup);
      else await generateNewRun(ctx, flags, setup);
    });
}
