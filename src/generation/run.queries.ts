import type { Db } from '../db/connection.js';
import { processAlive } from '../db/process-alive.js';

export type RunKind = 'generation' | 'import' | 'demo' | 'collection';
export type RunState = 'pending' | 'running' | 'paused' | 'interrupted' | 'complete' | 'failed' | 'cancelled';

export type RunRow = {
  id: number;
  name: string;
  kind: RunKind;
  state: RunState;
  endpoint_name: string | null;
  base_url: string | null;
  model: string | null;
  modes: string;
  scenario_selector: string;
  samples: number;
  temperature: number | null;
  max_tokens: number | null;
  max_turns: number | null;
  seed: number | null;
  concurrency: number;
  response_format: 'json_schema' | 'json_object';
  prompt_version: string | null;
  price_prompt_per_mtok: number | null;
  price_completion_per_mtok: number | null;
  settings: string;
  simulation_card: string | null;
  error: string | null;
  worker_pid: number | null;
  heartbeat_at: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};

const RUN_COLUMNS =
  'id, name, kind, state, endpoint_name, base_url, model, modes, scenario_selector, samples, temperature, max_tokens, max_turns, seed, concurrency, response_format, prompt_version, price_prompt_per_mtok, price_completion_per_mtok, settings, simulation_card, error, worker_pid, heartbeat_at, created_by, created_at, started_at, finished_at';

export function insertSimpleRun(
  db: Db,
  run: { name: string; kind: RunKind; state: RunState; model?: string | null; modes?: string[]; createdBy?: string },
  now: Date,
): number {
  const result = db
    .prepare(
      `INSERT INTO runs (name, kind, state, model, modes, created_by, created_at, started_at, finished_at)
       VALUES (:name, :kind, :state, :model, :modes, :createdBy, :now, :now, :finishedAt)`,
    )
    .run({
      name: run.name,
      kind: run.kind,
      state: run.state,
      model: run.model ?? null,
      modes: JSON.stringify(run.modes ?? []),
      createdBy: run.createdBy ?? null,
      now: now.toISOString(),
      finishedAt: run.state === 'complete' ? now.toISOString() : null,
    });
  return Number(result.lastInsertRowid);
}

/** A collection run's modes and model, as the batches writing into it now need them (batches/collection.ts). */
export function setCollectionRunModes(db: Db, id: number, change: { modes: string[]; model: string }): void {
  db.prepare("UPDATE runs SET modes = :modes, model = :model WHERE id = :id AND kind = 'collection'").run({ id, modes: JSON.stringify(change.modes), model: change.model });
}

/** A run named on the command line: its numeric id or its name. */
export function findRun(db: Db, idOrName: string): RunRow | undefined {
  const byName = db.prepare<{ name: string }, RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE name = :name`).get({ name: idOrName });
  if (byName) return byName;
  return /^\d+$/.test(idOrName)
    ? db.prepare<{ id: number }, RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = :id`).get({ id: Number(idOrName) })
    : undefined;
}

export function getRun(db: Db, id: number): RunRow | undefined {
  return db.prepare<{ id: number }, RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = :id`).get({ id });
}

export function runNameTaken(db: Db, name: string): boolean {
  return db.prepare('SELECT 1 FROM runs WHERE name = :name').get({ name }) !== undefined;
}

export type NewGenerationRun = {
  name: string;
  endpointName: string;
  baseUrl: string;
  model: string;
  modes: string[];
  scenarioSelector: string;
  samples: number;
  temperature: number;
  maxTokens: number | null;
  maxTurns: number;
  seed: number;
  concurrency: number;
  responseFormat: 'json_schema' | 'json_object';
  promptVersion: string;
  pricePromptPerMTok: number | null;
  priceCompletionPerMTok: number | null;
  settings: Record<string, unknown>;
  createdBy: string | null;
};

export function insertGenerationRun(db: Db, run: NewGenerationRun, now: Date): number {
  const result = db
    .prepare(
      `INSERT INTO runs (name, kind, state, endpoint_name, base_url, model, modes, scenario_selector, samples, temperature,
         max_tokens, max_turns, seed, concurrency, response_format, prompt_version, price_prompt_per_mtok,
         price_completion_per_mtok, settings, created_by, created_at)
       VALUES (:name, 'generation', 'pending', :endpointName, :baseUrl, :model, :modes, :scenarioSelector, :samples, :temperature,
         :maxTokens, :maxTurns, :seed, :concurrency, :responseFormat, :promptVersion, :pricePromptPerMTok,
         :priceCompletionPerMTok, :settings, :createdBy, :now)`,
    )
    .run({ ...run, modes: JSON.stringify(run.modes), settings: JSON.stringify(run.settings), now: now.toISOString() });
  return Number(result.lastInsertRowid);
}

/**
 * What a resumed run may change: how many dialogues at once and how patiently it calls (timeout, retries),
 * never what it sends, so that its stored calls stay valid. `settings` is the runs.settings JSON.
 */
export function updateRunPatience(db: Db, id: number, change: { concurrency: number; settings: unknown }): void {
  db.prepare('UPDATE runs SET concurrency = :concurrency, settings = :settings WHERE id = :id').run({
    id,
    concurrency: change.concurrency,
    settings: JSON.stringify(change.settings),
  });
}

/** `baseUrl`: where this session sends its calls (a run resumed after its address was fixed sends them elsewhere). */
export function markRunStarted(db: Db, id: number, pid: number, now: Date, baseUrl: string): void {
  db.prepare(
    `UPDATE runs SET state = 'running', error = NULL, worker_pid = :pid, heartbeat_at = :now,
       started_at = coalesce(started_at, :now), finished_at = NULL, base_url = :baseUrl WHERE id = :id`,
  ).run({ id, pid, now: now.toISOString(), baseUrl });
}

export function touchRunHeartbeat(db: Db, id: number, now: Date): void {
  db.prepare('UPDATE runs SET heartbeat_at = :now WHERE id = :id').run({ id, now: now.toISOString() });
}

export function finishRun(
  db: Db,
  id: number,
  result: { state: Exclude<RunState, 'pending' | 'running'>; error: string | null; simulationCard: unknown },
  now: Date,
): void {
  db.prepare(
    `UPDATE runs SET state = :state, error = :error, simulation_card = :card, worker_pid = NULL, heartbeat_at = :now,
       finished_at = :now WHERE id = :id`,
  ).run({ id, state: result.state, error: result.error, card: JSON.stringify(result.simulationCard), now: now.toISOString() });
}

export type RunSummaryRow = RunRow & {
  dialogues: number;
  complete: number;
  failed: number;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
};

export function listRunSummaries(db: Db): RunSummaryRow[] {
  return db
    .prepare<[], RunSummaryRow>(
      `SELECT ${RUN_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')},
         coalesce(t.dialogues, 0) AS dialogues, coalesce(t.complete, 0) AS complete, coalesce(t.failed, 0) AS failed,
         coalesce(t.calls, 0) AS calls, coalesce(t.prompt_tokens, 0) AS prompt_tokens, coalesce(t.completion_tokens, 0) AS completion_tokens
       FROM runs r LEFT JOIN run_totals t ON t.run_id = r.id ORDER BY r.id`,
    )
    .all();
}

/** A running run's process beats every HEARTBEAT_MS (src/generation/execute-run.ts); silence this long means it is gone. */
export const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 6 * HEARTBEAT_MS;

/**
 * Whether the process generating a run is gone: no pid, a pid that is not alive, or (a pid reused by another
 * process after a restart) a heartbeat that stopped.
 */
function workerGone(run: Pick<RunRow, 'worker_pid' | 'heartbeat_at'>, now: Date, ownPidCounts: boolean): boolean {
  if (run.worker_pid === null) return true;
  if (run.worker_pid === process.pid) return !ownPidCounts;
  if (!processAlive(run.worker_pid)) return true;
  return run.heartbeat_at !== null && now.getTime() - Date.parse(run.heartbeat_at) > STALE_AFTER_MS;
}

/** True when a run (or anything with a worker and a heartbeat, such as an evaluation) is being worked on right now by a live process other than this one. */
export function runHasLiveWorker(run: Pick<RunRow, 'state' | 'worker_pid' | 'heartbeat_at'>, now: Date = new Date()): boolean {
  return run.state === 'running' && run.worker_pid !== process.pid && !workerGone(run, now, false);
}

/**
 * A run left "running" by a process that is gone becomes "interrupted" (resumable), and its half-done dialogues
 * go back to pending, so nothing is counted that was not finished. Returns the run ids. At server start, pass
 * `atStart: true`: a run marked with this very pid was then left by an earlier process that had the same pid
 * (containers restart with the same pids); otherwise runs of this process are taken to be alive.
 */
export function markInterruptedRuns(db: Db, now: Date = new Date(), options: { atStart?: boolean } = {}): number[] {
  // A collection run is "running" while its batch collects, with no process generating it: its live dialogues stay.
  const running = db.prepare<[], RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE state = 'running' AND kind <> 'collection'`).all();
  const stale = running.filter((r) => workerGone(r, now, !options.atStart));
  db.transaction(() => {
    for (const run of stale) {
      db.prepare(
        `UPDATE runs SET state = 'interrupted', worker_pid = NULL, error = coalesce(error, 'the process generating this run stopped'),
           heartbeat_at = :now WHERE id = :id AND state = 'running'`,
      ).run({ id: run.id, now: now.toISOString() });
      db.prepare(`UPDATE dialogues SET state = 'pending' WHERE run_id = :id AND state = 'running'`).run({ id: run.id });
    }
  })();
  return stale.map((r) => r.id);
}
