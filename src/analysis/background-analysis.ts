import { type ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { AnalysisReport } from './analysis-report.js';
import { analysisVersion, storeResultInProcess } from './analysis-cache.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from './analyze.js';
import { type AnalysisJobResult, type BatchAnalysisJob, type BundleFilesJob, runAnalysisJob, runBundleFilesJob, type WorkerJob } from './analysis-worker.js';
import { batchChangeKey, findBatchForAnalysis } from './batch-judgments.queries.js';
import { paperDataVersion } from './paper-table.queries.js';
import type { PooledReport } from './pooled-analysis.js';
import { computePooledAnalysis, PooledBatchesError } from './pooled-batches.js';
import { compressReport, decompressReport, gzipHoldsReport, looksLikeGzip, looksLikeReportJson, parseStoredReport, type StoredResult } from './stored-report.js';

// Pages and the API serve a batch's analysis from `analysis_cache` and have it refreshed in a worker process, so a large
// analysis (seconds and about a gigabyte at 1M judgments) never stalls raters' requests nor grows the server (issue 12). While judgments arrive the stored result
// is served with its age and a newer one is computed at most every REFRESH_INTERVAL_MS per batch.
//
// State is kept per database handle in a WeakMap (as the statement cache is), not in a module singleton: two apps on
// two handles share nothing, and the state goes with its handle. The worker is unref'd and ends when idle (and when
// its parent goes), so neither a server's shutdown nor a test's end waits for it.

export const REFRESH_INTERVAL_MS = 5_000;
const WORKER_IDLE_MS = 30_000;

/** The stored report as an answer sends it whole. */
export type ReportResponse = {
  /**
   * Names the stored result and the coding it goes in (a gzip-encoded answer's tag ends in -gzip: a strong tag names
   * one representation, RFC 9110 8.8.3), so that a 304 is decided before a byte is decompressed.
   */
  etag: string;
  /** The bytes are the stored gzip, as they are: they go with `Content-Encoding: gzip`. */
  gzip: boolean;
  /** The bytes; null when the row turns out damaged (it is then dropped, and the next refresh computes it again). */
  body: () => Promise<Buffer | null>;
};

export type ServedAnalysis = {
  /**
   * The report, decompressed on libuv's thread pool and parsed once per stored result (then remembered); null when
   * none is stored or the row turns out damaged (then dropped). Answers that send the report whole (`response`) never
   * parse it.
   */
  report: () => Promise<AnalysisReport | null>;
  /**
   * The report as the console's analysis page reads it (src/analysis/page-report.ts, migration 028): the stored page
   * report, a few tens of KB, decompressed on the thread pool and parsed once per stored result; the whole report
   * (`report`) when the result was stored without one (before migration 028, or computed in process) or it is damaged.
   * Null when none is stored.
   */
  pageReport: () => Promise<AnalysisReport | null>;
  /**
   * Whether the result was stored with its page parts (a page report, and each rater's figures in
   * analysis_rater_figures, those of result parts_id): the raters and participants pages then read those rows, not `report`.
   */
  pageParts: boolean;
  /**
   * Runs `read` (queries of the rater figures of result `partsId`, migration 032) in one read transaction, after checking that
   * the served result is still the stored one: its answer then is of this result and no other. Null when a newer
   * result replaced it meanwhile (the worker stores from its own process at any time; serve again), or the served
   * result has no page parts.
   */
  readParts: <T>(read: (partsId: number) => T) => T | null;
  /** Whether a result is stored (checked whole when awaitBatchAnalysis gives it: a damaged one reads as none). */
  stored: boolean;
  /**
   * The stored report for an answer that sends it whole, in the form the client accepts: the stored gzip as it is
   * (0.8 MB at a million judgments, where the JSON is 14 MB: nothing decompressed, encoded or hashed on the request
   * thread), or its JSON decompressed on the thread pool for this answer alone (not kept). A row stored before
   * migration 027 goes as its text, encoded once. Null when none is stored.
   */
  response: (acceptsGzip: boolean) => ReportResponse | null;
  computedAt: string | null;
  /** The served result's data version (analysis_cache.data_version): its stored plots carry the same. */
  version: string | null;
  /** Seconds since the served result was computed, by the injected clock. */
  ageSeconds: number | null;
  /** A newer result is being computed (or checked for) right now, or is scheduled. */
  updating: boolean;
  /** Set by awaitBatchAnalysis when the refresh it waited for failed: `report`, if any, is an older one. */
  refreshFailed?: true;
};

/**
 * The stored result this process serves, read from the database once per result (computed_at, data_version). It
 * holds the row as stored (about 0.8 MB), not its JSON (14 MB at a million judgments, which the server held twice, as
 * text and as bytes, before migration 027), and the parsed report once a page asked for it.
 */
type StoredEntry = {
  computedAt: string;
  version: string;
  result: StoredResult;
  /** The stored gzip inflated once (on the thread pool, never held whole) and its JSON's ends looked at: not damaged. */
  intact?: Promise<boolean>;
  report?: Promise<AnalysisReport | null>;
  /** The stored page report (migration 028), null when the row has none; `page` once it was read. */
  pageResult: Buffer | null;
  /** Names the result's stored rater figures (analysis_cache.parts_id); null without page parts. */
  partsId: number | null;
  page?: Promise<AnalysisReport | null>;
  /** A row from before migration 027: its text as UTF-8 bytes, encoded once. */
  textBytes?: Buffer;
};

/**
 * What a finished check found: as of the batch's data `key` (changeKeyOf), the stored result of data version `version`
 * was current. While both still hold, nothing newer is there to compute (issue 40: every request used to start a check
 * and say "updating" while the worker found nothing new).
 */
type CurrentAs = { key: string; version: string };

type BatchState = {
  running: Promise<AnalysisJobResult['kind']> | null;
  lastStart: number;
  lastDurationMs: number;
  timer: NodeJS.Timeout | null;
  stored: StoredEntry | null;
  current: CurrentAs | null;
};
type HandleState = {
  worker: ChildProcess | null;
  /** Keeps the process alive while a job waits for its answer (the channel is unref'd between jobs). */
  hold: () => void;
  idle: NodeJS.Timeout | null;
  waiting: Map<number, (result: AnalysisJobResult) => void>;
  nextId: number;
  batches: Map<number, BatchState>;
  /** Pooled analyses sent to the worker and not answered yet. */
  pooledRunning: number;
  /** Export bundles' analysis files asked of the worker and not answered yet. */
  bundleFilesRunning: number;
};

const handles = new WeakMap<Db, HandleState>();

function handleState(db: Db): HandleState {
  let state = handles.get(db);
  if (!state) {
    state = { worker: null, hold: () => undefined, idle: null, waiting: new Map(), nextId: 1, batches: new Map(), pooledRunning: 0, bundleFilesRunning: 0 };
    handles.set(db, state);
  }
  return state;
}

function batchState(db: Db, batchId: number): BatchState {
  const handle = handleState(db);
  let state = handle.batches.get(batchId);
  if (!state) {
    state = { running: null, lastStart: -Infinity, lastDurationMs: 0, timer: null, stored: null, current: null };
    handle.batches.set(batchId, state);
  }
  return state;
}

function workerOf(handle: HandleState): ChildProcess {
  if (handle.idle) clearTimeout(handle.idle);
  handle.idle = null;
  if (handle.worker) return handle.worker;
  // execArgv empty: the boot file runs the compiled worker, or registers tsx itself, whatever flags the parent runs with.
  const worker = fork(fileURLToPath(new URL('./analysis-worker-boot.mjs', import.meta.url)), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const release = () => {
    worker.unref();
    worker.channel?.unref();
  };
  const hold = () => {
    worker.ref();
    worker.channel?.ref();
  };
  release();
  worker.on('message', (result: AnalysisJobResult) => {
    handle.waiting.get(result.id)?.(result);
    handle.waiting.delete(result.id);
    if (handle.waiting.size === 0) {
      release();
      handle.idle = setTimeout(() => worker.kill(), WORKER_IDLE_MS);
      handle.idle.unref();
    }
  });
  const fail = (message: string) => {
    for (const [id, resolve] of handle.waiting) resolve({ id, kind: 'failed', message });
    handle.waiting.clear();
    if (handle.worker === worker) handle.worker = null;
  };
  worker.on('error', (error) => fail(error.message));
  worker.on('exit', () => fail('the analysis worker stopped'));
  handle.worker = worker;
  handle.hold = hold;
  return worker;
}

/** A database that is not a file (`:memory:`) cannot be shared with the worker: its jobs run in process. */
const sharedWithWorker = (db: Db) => !db.memory && Boolean(db.name);

/** Sends one job (numbered here) to the worker; resolves with its answer. */
function sendJob(db: Db, job: (id: number) => WorkerJob): Promise<AnalysisJobResult> {
  const handle = handleState(db);
  const id = handle.nextId++;
  return new Promise((resolve) => {
    handle.waiting.set(id, resolve);
    const worker = workerOf(handle);
    handle.hold();
    worker.send(job(id));
  });
}

/** Sends a job counted under `counter` while it is out (what the tests' "is it running" inspectors read). */
async function sendCountedJob(db: Db, counter: 'pooledRunning' | 'bundleFilesRunning', job: (id: number) => WorkerJob): Promise<AnalysisJobResult> {
  const handle = handleState(db);
  handle[counter]++;
  try {
    return await sendJob(db, job);
  } finally {
    handle[counter]--;
  }
}

/** Runs one batch's analysis job in the worker, or in process for a database the worker cannot open. */
function runJob(db: Db, job: Omit<BatchAnalysisJob, 'id' | 'path'>): Promise<AnalysisJobResult> {
  if (!sharedWithWorker(db)) return Promise.resolve(runAnalysisJob({ ...job, id: handleState(db).nextId++, path: db.name }, () => db));
  return sendJob(db, (id) => ({ ...job, id, path: db.name }));
}

/** Starts a check-and-recompute of the batch in the worker now; resolves when its result is stored, with its outcome. */
function startRefresh(db: Db, batchId: number, now: () => Date): Promise<AnalysisJobResult['kind']> {
  const state = batchState(db, batchId);
  if (state.running) return state.running;
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  state.lastStart = performance.now();
  const started = state.lastStart;
  // Read before the worker reads the data: its result is of this data or newer.
  const key = changeKeyOf(db, batchId);
  const running = runJob(db, { batchId, ...SERVED_SETTINGS, now: now().toISOString() }).then((result) => {
    state.running = null;
    if (result.kind === 'computed' || result.kind === 'stored') state.lastDurationMs = performance.now() - started;
    // The handle may have been closed meanwhile (shutdown, end of a test): then the result has nowhere to go.
    if (result.kind === 'computed' && db.open) storeResultInProcess(db, batchId, result.version, compressReport(result.result), now(), result.signals);
    if (result.kind === 'failed') process.emitWarning(`analysis of batch ${batchId} failed: ${result.message}`);
    if ((result.kind === 'computed' || result.kind === 'stored' || result.kind === 'unchanged') && db.open) {
      const version = storedVersionOf(db, batchId);
      state.current = version === null ? null : { key, version };
    }
    return result.kind;
  });
  state.running = running;
  return running;
}

/** The settings of the result pages and the API serve (the CLI's `analyze` stores the same by default). */
const SERVED_SETTINGS = { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 };

/** The batch's data as far as its analysis reads it, from counters (batchChangeKey) and the evaluations' (paperDataVersion). */
const changeKeyOf = (db: Db, batchId: number) => `${batchChangeKey(db, batchId)}|${paperDataVersion(db)}`;

const storedVersionOf = (db: Db, batchId: number) =>
  db.prepare<{ b: number }, string>('SELECT data_version FROM analysis_cache WHERE batch_id = :b').pluck().get({ b: batchId }) ?? null;

/**
 * Whether the stored result is of the batch's data as it is now: no judgment, exclusion, removed pair, setting or
 * evaluation changed since a check found it current. The first time a process serves a batch it has no such check: the
 * result's data version is then compared with the data's whole (one count of the batch's judgments, once per process).
 */
function storedIsCurrent(db: Db, batchId: number, entry: StoredEntry | null): boolean {
  if (!entry) return false;
  const state = batchState(db, batchId);
  const key = changeKeyOf(db, batchId);
  if (state.current === null && state.running === null && analysisVersion(db, batchId, SERVED_SETTINGS) === entry.version) state.current = { key, version: entry.version };
  return state.current !== null && state.current.key === key && state.current.version === entry.version;
}

/** Has a newer result computed unless the stored one is current; whether a newer one is on its way. */
function refreshUnlessCurrent(db: Db, batchId: number, options: ServeOptions): boolean {
  if (storedIsCurrent(db, batchId, currentEntry(db, batchId))) return false;
  refreshSoon(db, batchId, options.now, options.intervalMs ?? REFRESH_INTERVAL_MS);
  return true;
}

/**
 * Refreshes when the last refresh started long enough ago; otherwise schedules one for when it may start. A batch
 * whose analysis takes long (16 s at a million judgments) waits twice that between starts, so the worker computes at
 * most a third of the time while raters keep the data changing, instead of without a pause beside their requests.
 */
function refreshSoon(db: Db, batchId: number, now: () => Date, intervalMs: number): void {
  const state = batchState(db, batchId);
  if (state.running || state.timer) return;
  const wait = state.lastStart + Math.max(intervalMs, 3 * state.lastDurationMs) - performance.now();
  if (wait <= 0) {
    void startRefresh(db, batchId, now);
    return;
  }
  state.timer = setTimeout(() => {
    state.timer = null;
    if (db.open) void startRefresh(db, batchId, now);
  }, wait);
  state.timer.unref();
}

/** A damaged row is no result: dropped, so that the worker (which skips a batch whose stored version is current) computes it again. */
function dropDamaged(db: Db, batchId: number, computedAt: string): void {
  // The check may end after the handle closed (shutdown, end of a test): then there is nothing left to drop it from.
  if (db.open) db.prepare('DELETE FROM analysis_cache WHERE batch_id = :b AND computed_at = :at').run({ b: batchId, at: computedAt });
  const state = batchState(db, batchId);
  if (state.stored?.computedAt === computedAt) state.stored = null;
}

/** Whether the entry's gzip is whole (inflated once, on the thread pool, and not held); a damaged one is dropped. */
function storedIntact(db: Db, batchId: number, entry: StoredEntry): Promise<boolean> {
  const gzip = entry.result;
  // A text row was checked when it was read (looksLikeReportJson), as before migration 027.
  if (typeof gzip === 'string') return Promise.resolve(true);
  entry.intact ??= gzipHoldsReport(gzip).then((intact) => {
    if (!intact) dropDamaged(db, batchId, entry.computedAt);
    return intact;
  });
  return entry.intact;
}

/**
 * The entry's report, decompressed on the thread pool and parsed on first need, then remembered; null when the row
 * turns out damaged (bad gzip, bad JSON, another shape), which is then dropped. The parse itself runs on the request
 * thread, once per result, as it did before the report was compressed.
 */
function parsedReport(db: Db, batchId: number, entry: StoredEntry): Promise<AnalysisReport | null> {
  entry.report ??= parseStoredReport(entry.result).then((report) => {
    if (!report) dropDamaged(db, batchId, entry.computedAt);
    return report;
  });
  return entry.report;
}

/**
 * The entry's page report, decompressed on the thread pool and parsed on first need, then remembered; the whole report
 * when the row has none or it is damaged (the row stays: its report may be whole, and is checked as it always was).
 */
function parsedPageReport(db: Db, batchId: number, entry: StoredEntry): Promise<AnalysisReport | null> {
  const stored = entry.pageResult;
  if (stored === null) return parsedReport(db, batchId, entry);
  entry.page ??= parseStoredReport(stored);
  return entry.page.then((page) => page ?? parsedReport(db, batchId, entry));
}

/** `read` in a read transaction whose snapshot still holds the entry's result (and so its page parts); null otherwise. */
function readPartsOf<T>(db: Db, batchId: number, entry: StoredEntry, read: (partsId: number) => T): T | null {
  const partsId = entry.partsId;
  if (partsId === null) return null;
  return db.transaction(() => {
    const row = db
      .prepare<{ b: number }, { computed_at: string; data_version: string; parts_id: number | null }>('SELECT computed_at, data_version, parts_id FROM analysis_cache WHERE batch_id = :b')
      .get({ b: batchId });
    return row?.computed_at === entry.computedAt && row.data_version === entry.version && row.parts_id === partsId ? read(partsId) : null;
  })();
}

const etagOf = (entry: StoredEntry) => createHash('sha1').update(`${entry.computedAt}|${entry.version}`).digest('base64url');

function responseOf(db: Db, batchId: number, entry: StoredEntry, acceptsGzip: boolean): ReportResponse {
  const stored = entry.result;
  if (typeof stored === 'string') return { etag: `"${etagOf(entry)}"`, gzip: false, body: () => Promise.resolve((entry.textBytes ??= Buffer.from(stored, 'utf8'))) };
  if (acceptsGzip) return { etag: `"${etagOf(entry)}-gzip"`, gzip: true, body: async () => ((await storedIntact(db, batchId, entry)) ? stored : null) };
  return {
    etag: `"${etagOf(entry)}"`,
    gzip: false,
    body: async () => {
      const json = await decompressReport(stored);
      if (json === null) dropDamaged(db, batchId, entry.computedAt);
      return json;
    },
  };
}

/** The batch's stored result as this process serves it, read from the database when it is a new one. */
function currentEntry(db: Db, batchId: number): StoredEntry | null {
  const state = batchState(db, batchId);
  const row = db.prepare<{ b: number }, { computed_at: string; data_version: string }>('SELECT computed_at, data_version FROM analysis_cache WHERE batch_id = :b').get({ b: batchId });
  if (!row) {
    state.stored = null;
    return null;
  }
  if (state.stored?.computedAt !== row.computed_at || state.stored.version !== row.data_version) {
    // The old report goes before the new one is read: two of a large batch's reports are not held at once.
    state.stored = null;
    const stored = db
      .prepare<{ b: number }, { result: StoredResult; page_report: Buffer | null; parts_id: number | null }>('SELECT result, page_report, parts_id FROM analysis_cache WHERE batch_id = :b')
      .get({ b: batchId });
    const result = stored?.result;
    // What can be checked without decompressing or parsing: gzip's header, or an older row's JSON's ends.
    if (result !== undefined && (typeof result === 'string' ? looksLikeReportJson(result) : looksLikeGzip(result))) {
      const page = stored?.page_report ?? null;
      const parts = page !== null && looksLikeGzip(page) && stored?.parts_id != null;
      state.stored = { computedAt: row.computed_at, version: row.data_version, result, pageResult: parts ? page : null, partsId: parts ? (stored?.parts_id ?? null) : null };
    } else if (result !== undefined) dropDamaged(db, batchId, row.computed_at);
  }
  return state.stored;
}

function servedOf(db: Db, batchId: number, entry: StoredEntry | null, now: () => Date, updating: boolean): ServedAnalysis {
  const state = batchState(db, batchId);
  return {
    // A result replaced meanwhile is not read: two of a large batch's reports are not held at once.
    report: () => (entry && state.stored === entry ? parsedReport(db, batchId, entry) : Promise.resolve(null)),
    pageReport: () => (entry && state.stored === entry ? parsedPageReport(db, batchId, entry) : Promise.resolve(null)),
    pageParts: entry !== null && entry.pageResult !== null,
    readParts: (read) => (entry && db.open ? readPartsOf(db, batchId, entry, read) : null),
    stored: entry !== null,
    response: (acceptsGzip) => (entry ? responseOf(db, batchId, entry, acceptsGzip) : null),
    computedAt: entry?.computedAt ?? null,
    version: entry?.version ?? null,
    ageSeconds: entry ? Math.max(0, Math.round((now().getTime() - Date.parse(entry.computedAt)) / 1000)) : null,
    updating,
  };
}

/** Updating: a newer result than `entry` is being computed or scheduled, for data that changed since it. */
const updatingPast = (db: Db, batchId: number, entry: StoredEntry | null) => {
  const state = batchState(db, batchId);
  return (state.running !== null || state.timer !== null) && !(entry && state.current?.version === entry.version && state.current.key === changeKeyOf(db, batchId));
};

const readStored = (db: Db, batchId: number, now: () => Date): ServedAnalysis => {
  const entry = currentEntry(db, batchId);
  return servedOf(db, batchId, entry, now, updatingPast(db, batchId, entry));
};

/**
 * The stored result with its gzip checked whole first (once per result, on the thread pool): a damaged one is dropped
 * and reads as none, so that the caller has it computed again rather than sending it. Null once the handle is closed.
 */
async function readChecked(db: Db, batchId: number, now: () => Date): Promise<ServedAnalysis | null> {
  for (;;) {
    if (!db.open) return null;
    const entry = currentEntry(db, batchId);
    if (!entry || (await storedIntact(db, batchId, entry))) return db.open ? servedOf(db, batchId, entry, now, updatingPast(db, batchId, entry)) : null;
  }
}

export type ServeOptions = { now: () => Date; intervalMs?: number };

/**
 * The batch's last finished analysis, at once, with its age; has a newer one computed in the worker if the data may
 * have changed (at most every few seconds). Its report is null when none was ever computed. Null when there is no batch.
 */
export function serveBatchAnalysis(db: Db, batchId: number, options: ServeOptions): ServedAnalysis | null {
  if (!findBatchForAnalysis(db, batchId)) return null;
  refreshUnlessCurrent(db, batchId, options);
  return readStored(db, batchId, options.now);
}

/**
 * Like serveBatchAnalysis, with the stored gzip checked whole first; when there is no stored result yet (or it was
 * damaged, or `fresh` asks for the data as of now) waits for the worker: the event loop keeps serving other requests
 * meanwhile.
 */
export async function awaitBatchAnalysis(db: Db, batchId: number, options: ServeOptions & { fresh?: boolean }): Promise<ServedAnalysis | null> {
  if (!findBatchForAnalysis(db, batchId)) return null;
  refreshUnlessCurrent(db, batchId, options);
  const served = await readChecked(db, batchId, options.now);
  if (!served || (served.stored && !options.fresh)) return served;
  const state = batchState(db, batchId);
  // A refresh that started before this request may have read older data: wait for it, then run one of our own.
  if (state.running) await state.running;
  const outcome = options.fresh || !(await readChecked(db, batchId, options.now))?.stored ? await startRefresh(db, batchId, options.now) : null;
  const stored = await readChecked(db, batchId, options.now);
  if (!stored) return null;
  return outcome === 'failed' ? { ...stored, refreshFailed: true } : stored;
}

/** Whether a refresh of the batch's analysis is running now (for tests and the benchmark). */
export function analysisRunning(db: Db, batchId: number): boolean {
  return handles.get(db)?.batches.get(batchId)?.running != null;
}

export type PooledOptions = { now: Date; bootstrap: number; seed?: number };

/**
 * The pooled analysis of several batches (the console's pooled page), computed in the worker process: it reads every
 * judgment of every batch, which at a million judgments held the request thread for seconds and took a gigabyte. The
 * event loop serves other requests meanwhile. A refusal (fewer than two batches, an unknown one) is the
 * PooledBatchesError computePooledAnalysis throws, with its message and status. In process for `:memory:`.
 */
export async function awaitPooledAnalysis(db: Db, batchIds: number[], options: PooledOptions): Promise<PooledReport> {
  const settings = { seed: options.seed ?? DEFAULT_SEED, bootstrap: options.bootstrap };
  if (!sharedWithWorker(db)) return computePooledAnalysis(db, batchIds, { ...settings, now: options.now });
  const result = await sendCountedJob(db, 'pooledRunning', (id) => ({ kind: 'pooled', id, path: db.name, batchIds, ...settings, now: options.now.toISOString() }));
  if (result.kind === 'pooled') return JSON.parse(result.result) as PooledReport;
  if (result.kind === 'refused') {
    // Pooling's own refusal is raised again as itself; another feature's (damaged stored data...) keeps its message and status.
    if (result.name === PooledBatchesError.name) throw new PooledBatchesError(result.message, result.status, result.code);
    throw new UserFacingError(result.message, result.status, result.code);
  }
  throw new Error(`pooled analysis of batches ${batchIds.join(', ')} failed: ${result.kind === 'failed' ? result.message : `unexpected answer ${result.kind}`}`);
}

/** Whether a pooled analysis is being computed in the worker now (for tests). */
export function pooledAnalysisRunning(db: Db): boolean {
  return (handles.get(db)?.pooledRunning ?? 0) > 0;
}

/**
 * Has the worker write an export bundle's analysis.json and report.html into `dir` from the batch's stored analysis
 * (one question's with `question`): the server then streams two files and never parses, pretty-prints or renders a
 * report of 14 MB (issue 12). Answers `bundle-files` with their paths, `missing` when no result is stored, `failed`.
 * Called after awaitBatchAnalysis stored the result to use; the worker runs jobs in order. In process for `:memory:`.
 */
export async function writeBundleFiles(db: Db, batchId: number, question: string | undefined, dir: string): Promise<AnalysisJobResult> {
  const job: Omit<BundleFilesJob, 'id'> = { kind: 'bundle-files', path: db.name, batchId, dir, ...(question === undefined ? {} : { question }) };
  if (!sharedWithWorker(db)) return runBundleFilesJob({ ...job, id: handleState(db).nextId++ }, () => db);
  return sendCountedJob(db, 'bundleFilesRunning', (id) => ({ ...job, id }));
}

/** Whether the worker is writing an export bundle's analysis files now (for tests). */
export function bundleFilesRunning(db: Db): boolean {
  return (handles.get(db)?.bundleFilesRunning ?? 0) > 0;
}

/** Whether this server process has parsed the batch's stored report (for tests: an export bundle, and a page served from the page parts, must not). */
export function storedReportParsed(db: Db, batchId: number): boolean {
  return handles.get(db)?.batches.get(batchId)?.stored?.report !== undefined;
}
