// The analysis worker, a child process of the server: computes batch analyses on its own read-only connection to the
// database file, so a large analysis never runs on the server's request thread nor grows the server's memory (issue 12:
// 1M judgments take about a gigabyte while they are analysed). It stores each result itself and tells the server only
// that it did: a report of a million judgments is 14 MB of JSON, which carried through the server (message, copy,
// store) raised its peak memory by about 100 MB. A pooled analysis (several batches, the console's pooled page) is
// computed here too and its report sent back, as it is stored nowhere; a refusal comes back as its name, message and
// status, for the server to raise again. The analysis files of an export bundle are written here too, into a folder the
// server names, for the server to stream into the archive without parsing, rendering or pretty-printing the report.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { cacheStatements, type Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { analyzeBatchInput, storeAnalysis } from './analysis-cache.js';
import { readAnalysisInput } from './analysis-input.js';
import { type DrawnPlot, drawPlots, storePlots } from './analysis-plots.queries.js';
import type { AnalysisReport } from './analysis-report.js';
import { pageReportOf, type RaterFiguresRow, raterFiguresOf } from './page-report.js';
import { computePooledAnalysis } from './pooled-batches.js';
import { selectQuestionReport } from './question-reports.js';
import { planFigureChanges } from './rater-figures-plan.js';
import {
  applyFigureChanges,
  claimFiguresWriter,
  deleteEndedFigureRows,
  listStoredFigureRows,
  markFiguresWriter,
  releaseFiguresWriter,
} from './rater-figures.queries.js';
import { renderAnalysisHtml } from './report-html.js';
import { applySignalChanges, listStoredSignals, planSignalChanges, type StoredSignalRow } from './rater-signals.queries.js';
import { compressReport, readStoredReport, type StoredResult } from './stored-report.js';

/** In the worker the job stores its result (and its plots) itself; in process it returns it for the caller to store. */
export type BatchAnalysisJob = { kind?: 'batch'; id: number; path: string; batchId: number; seed: number; bootstrap: number; targetHalfWidth: number; now: string };
/** Several batches pooled (src/analysis/pooled-batches.ts); the report comes back as JSON, never stored. */
export type PooledAnalysisJob = { kind: 'pooled'; id: number; path: string; batchIds: number[]; seed: number; bootstrap: number; now: string };
export type AnalysisJob = BatchAnalysisJob | PooledAnalysisJob;
/**
 * An export bundle's analysis.json and report.html (src/export/bundle-export.ts), written into `dir` from the batch's
 * stored analysis (one question's with `question`, an id the server has checked against the batch). At a million
 * judgments the report is 14 MB: parsed, pretty-printed and rendered in the server it raised its peak memory past
 * 300 MB and held its event loop ~0.45 s (issue 12).
 */
export type BundleFilesJob = { kind: 'bundle-files'; id: number; path: string; batchId: number; question?: string; dir: string };
/** Everything the worker process is sent. */
export type WorkerJob = AnalysisJob | BundleFilesJob;
export type AnalysisJobResult =
  | { id: number; kind: 'unchanged' }
  | { id: number; kind: 'stored' }
  /** In process only (a database the worker cannot open): the caller stores the report and the raters' signal rows. */
  | { id: number; kind: 'computed'; version: string; result: string; signals: StoredSignalRow[] }
  | { id: number; kind: 'missing' }
  | { id: number; kind: 'pooled'; result: string }
  /** The paths of the bundle's two files, written. */
  | { id: number; kind: 'bundle-files'; json: string; html: string }
  /** A UserFacingError of the computation (PooledBatchesError: fewer than two batches, an unknown one): the person's message. */
  | { id: number; kind: 'refused'; name: string; message: string; status: number; code: string }
  | { id: number; kind: 'failed'; message: string };

/** Rater figure rows changed per transaction of the worker; each such transaction is what raters' writes may wait for. */
const FIGURES_PER_WRITE = 1_000;

/**
 * Runs `write` as a transaction, then leaves the database to others for a while before the caller's next one. The
 * server's writes that met one of these transactions wait in SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20,
 * then 25 ms between tries: run back to back, the next transaction held the lock again before the server woke, and a
 * result's fifty transactions of rater figures held every rater's answer for 200–350 ms (issue 12). The pause is
 * longer than the handler's sleep at that moment, so its next try finds the lock free: never under 30 ms, and as long
 * as the transaction took (the handler's sleeps grow to 50 and 100 ms only after it has waited that long).
 */
async function writeThenYield<T>(db: Db, write: () => T): Promise<T> {
  const started = performance.now();
  // IMMEDIATE: the write lock first, waited for in the busy handler. A transaction that reads before it writes (the
  // worker's check that the batch's figures are still its own) and meets another's lock when it comes to write is
  // refused at once, not made to wait: under rater load the worker's results then failed with "database is locked".
  const result = db.transaction(write).immediate();
  await delay(Math.max(MIN_YIELD_MS, performance.now() - started));
  return result;
}
const MIN_YIELD_MS = 30;

// Its priority (Linux's idle class, or nice 19) is set by analysis-worker-boot.mjs before anything else runs.

const connections = new Map<string, Db>();

/**
 * This process's connections to a database file, opened on first use: one read-only for computing, one for storing
 * results (a job that finds nothing new never opens it).
 */
function connectionTo(path: string, access: 'read' | 'write' = 'read'): Db {
  const key = `${access}:${path}`;
  let db = connections.get(key);
  if (!db) {
    db = cacheStatements(new Database(path, { readonly: access === 'read', fileMustExist: true }));
    db.pragma('busy_timeout = 5000');
    // As the server's own connection (src/db/connection.ts): SQLite's default (FULL) synced the shared log at every
    // commit while holding the write lock, raters' log pages included, and a result is now some fifty transactions
    // (its rater figures): each such sync is what a rater's commit waited for, the server's thread asleep in SQLite's
    // busy handler meanwhile (issue 12). A result lost to a power cut is computed again.
    if (access === 'write') db.pragma('synchronous = NORMAL');
    connections.set(key, db);
  }
  return db;
}

/** `open`: the connection to read from; the server's own for a database the worker cannot open (`:memory:`). */
export function runAnalysisJob(job: AnalysisJob, open: () => Db = () => connectionTo(job.path)): AnalysisJobResult {
  return job.kind === 'pooled' ? runPooledJob(job, open) : runBatchJob(job, open);
}

/** Pools the batches in one read transaction (one snapshot of all of them) and returns the report as JSON. */
function runPooledJob(job: PooledAnalysisJob, open: () => Db): AnalysisJobResult {
  try {
    const db = open();
    const report = db.transaction(() => computePooledAnalysis(db, job.batchIds, { seed: job.seed, bootstrap: job.bootstrap, now: new Date(job.now) }))();
    return { id: job.id, kind: 'pooled', result: JSON.stringify(report) };
  } catch (error) {
    if (error instanceof UserFacingError) return { id: job.id, kind: 'refused', name: error.constructor.name, message: error.message, status: error.status, code: error.code };
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

type Computed = { outcome: AnalysisJobResult; report: AnalysisReport | null; signals: StoredSignalRow[] };

/**
 * Recomputes unless the stored result already has this data version. What it computes from is read first
 * (src/analysis/analysis-input.ts: no snapshot held through the judgments' read) and computed after that: a snapshot
 * held through the computation, at this process's idle priority while raters keep the machine busy, stopped the
 * server's write-ahead log from being reset for tens of seconds at a million judgments, and the log grew by every
 * rater's commit meanwhile (issue 12).
 */
function computeBatchJob(job: BatchAnalysisJob, open: () => Db): Computed {
  const db = open();
  const settings = { seed: job.seed, bootstrap: job.bootstrap, targetHalfWidth: job.targetHalfWidth };
  const read = readAnalysisInput(db, job.batchId, settings);
  if (read === 'unchanged') return { outcome: { id: job.id, kind: 'unchanged' }, report: null, signals: [] };
  if (!read.input) return { outcome: { id: job.id, kind: 'missing' }, report: null, signals: [] };
  const report = analyzeBatchInput(read.input, { ...settings, now: new Date(job.now) });
  const signals = read.input.signals.stored;
  return { outcome: { id: job.id, kind: 'computed', version: read.version, result: JSON.stringify(report), signals }, report, signals };
}

/** In process (a database the worker cannot open): the result goes back to be stored by the caller; no plots. */
function runBatchJob(job: BatchAnalysisJob, open: () => Db): AnalysisJobResult {
  try {
    return computeBatchJob(job, open).outcome;
  } catch (error) {
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

/** Runs one of the worker's write transactions (writeThenYield); a benchmark passes its own to time them. */
export type WriteStep = <T>(db: Db, write: () => T) => Promise<T>;

/** A computed result as it is stored: the report's gzip, its page report's, its plots, its raters' figures and their signals. */
export type ResultToStore = { version: string; report: Buffer; pageReport: Buffer; plots: DrawnPlot[]; figures: RaterFiguresRow[]; signals: StoredSignalRow[]; now: Date };

/**
 * Stores a batch's result: the rater figures that changed since the stored result (migration 032) in parts of their
 * own, then the raters' signals that changed (migration 078) likewise, then the report, its page report and its plots
 * in one transaction, then the figure rows no result reads any longer. Rewriting all 50,000 raters' figures of a
 * million judgments took some hundred transactions per result, each of which raters' answers waited for; between
 * results a few hundred to a few thousand change (issue 12). Pages read the stored result's figures until the report
 * is stored, then this one's. The signal rows are not kept per result: from their write until the report's, a page
 * may show a rater's signals of this result beside figures of the one before. 'busy' when another server process's
 * worker is storing this batch's result right now: nothing is written.
 */
export async function storeBatchResult(db: Db, batchId: number, result: ResultToStore, write: WriteStep = writeThenYield): Promise<'stored' | 'busy'> {
  const claim = await write(db, () => claimFiguresWriter(db, batchId, Date.now()));
  if (!claim) return 'busy';
  const owned = () => {
    if (!markFiguresWriter(db, batchId, claim.parts, Date.now())) throw new Error(`another process took over writing the analysis of batch ${batchId}`);
  };
  try {
    const changes = planFigureChanges(listStoredFigureRows(db, batchId), claim.stored, result.figures);
    for (let i = 0; i < changes.length; i += FIGURES_PER_WRITE) {
      await write(db, () => {
        owned();
        applyFigureChanges(db, batchId, claim.parts, changes.slice(i, i + FIGURES_PER_WRITE));
      });
    }
    const signalChanges = planSignalChanges(listStoredSignals(db, batchId), result.signals);
    for (let i = 0; i < signalChanges.length; i += FIGURES_PER_WRITE) {
      await write(db, () => {
        owned();
        applySignalChanges(db, batchId, signalChanges.slice(i, i + FIGURES_PER_WRITE));
      });
    }
    await write(db, () => {
      owned();
      storeAnalysis(db, batchId, result.version, result.report, result.now, { report: result.pageReport, id: claim.parts });
      storePlots(db, batchId, result.version, result.plots);
      releaseFiguresWriter(db, batchId, claim.parts);
    });
    // What is left here after a crash the next result clears.
    const ended = changes.flatMap((change) => (change.op === 'close' ? [change.row] : []));
    for (let i = 0; i < ended.length; i += FIGURES_PER_WRITE) {
      await write(db, () => deleteEndedFigureRows(db, batchId, claim.parts, ended.slice(i, i + FIGURES_PER_WRITE)));
    }
    return 'stored';
  } catch (error) {
    // Given up: the batch's next result need not wait for this number to go stale (another's claim is left as it is).
    db.transaction(() => releaseFiguresWriter(db, batchId, claim.parts)).immediate();
    throw error;
  }
}

/**
 * In the worker: computes, draws the console's plots from the report while it is at hand, and stores them, the report
 * and its page report in one transaction, the per-rater figures that changed just before, so that a plot
 * or figure served is always of the report served (issue 12: drawing them on the request thread took
 * up to 285 ms a plot at a million judgments). Plots that fail to draw are left out: the console draws those itself.
 */
async function runStoredBatchJob(job: BatchAnalysisJob): Promise<AnalysisJobResult> {
  try {
    const { outcome, report, signals } = computeBatchJob(job, () => connectionTo(job.path));
    if (outcome.kind !== 'computed' || !report) return outcome;
    const plots = await drawPlots(report).catch(() => []);
    // Compressed here, before the write transaction: raters' writes wait for that transaction, and 14 MB of JSON held
    // them 55–80 ms where its gzip (~0.8 MB) holds them a few (issue 12; src/analysis/stored-report.ts).
    const stored = compressReport(outcome.result);
    // What the console's pages read (migration 028): the report without most of its per-rater array, and each rater's
    // figures as rows, so that no page parses the whole report on the server's request thread (issue 12).
    const pageReport = compressReport(JSON.stringify(pageReportOf(report)));
    const db = connectionTo(job.path, 'write');
    // The result's pages reach the database file by this connection's own checkpoint at commit (it keeps SQLite's
    // default), in this low-priority process; the server's are copied by its checkpoint thread (src/db/background-checkpoint.ts).
    const figures = raterFiguresOf(report);
    const done = await storeBatchResult(db, job.batchId, { version: outcome.version, report: stored, pageReport, plots, figures, signals, now: new Date(job.now) });
    // Another server process's worker is storing this batch's result right now: that one is served.
    if (done === 'busy') return { id: job.id, kind: 'unchanged' };
    return { id: job.id, kind: 'stored' };
  } catch (error) {
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Writes the bundle's analysis.json (the text a bundle has always carried: the report pretty-printed) and report.html
 * from the stored analysis, read through its schema as the server reads it. `missing` when none is stored; a damaged
 * row is a failure (the server's next refresh computes it again). `open`: the connection to read from (the server's
 * own for a database the worker cannot open).
 */
export async function runBundleFilesJob(job: BundleFilesJob, open: () => Db = () => connectionTo(job.path)): Promise<AnalysisJobResult> {
  try {
    const stored = storedReportOf(open(), job.batchId);
    if (stored === undefined) return { id: job.id, kind: 'missing' };
    if (stored === null) return { id: job.id, kind: 'failed', message: `the stored analysis of batch ${job.batchId} is damaged` };
    const report = job.question === undefined ? stored : selectQuestionReport(stored, job.question);
    const json = join(job.dir, 'analysis.json');
    await writeFile(json, `${JSON.stringify(report, null, 2)}\n`, { flag: 'wx' });
    const html = join(job.dir, 'report.html');
    await writeFile(html, await renderAnalysisHtml(report), { flag: 'wx' });
    return { id: job.id, kind: 'bundle-files', json, html };
  } catch (error) {
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The stored report, decompressed (an older row: its text) and parsed, both let go on return; undefined when none is
 * stored, null when it is damaged (bad gzip, bad JSON, another shape).
 */
function storedReportOf(db: Db, batchId: number) {
  const stored = db.prepare<{ b: number }, StoredResult>('SELECT result FROM analysis_cache WHERE batch_id = :b').pluck().get({ b: batchId });
  return stored === undefined ? undefined : readStoredReport(stored);
}

function runWorkerJob(job: WorkerJob): Promise<AnalysisJobResult> {
  if (job.kind === 'bundle-files') return runBundleFilesJob(job);
  return job.kind === 'pooled' ? Promise.resolve(runAnalysisJob(job)) : runStoredBatchJob(job);
}

if (process.send) {
  // One job at a time, in the order they came: a bundle's files are rendered asynchronously, and a batch analysis
  // started meanwhile would run beside them (two large reports in memory at once) and answer out of turn.
  let queue: Promise<void> = Promise.resolve();
  process.on('message', (job: WorkerJob) => {
    queue = queue
      .then(() => runWorkerJob(job))
      .then((result) => {
        // The server may have stopped while this job ran: then there is nobody to tell, and nothing more to do.
        if (!process.connected) process.exit(0);
        process.send?.(result, (error: Error | null) => {
          if (error) process.exit(0);
        });
      })
      // Jobs never reject; a broken channel does (send throws): the server then fails the jobs it waits for.
      .catch(() => process.exit(1));
  });
  // The server went away (stopped, crashed): nothing is left to compute for.
  process.on('disconnect', () => process.exit(0));
}
