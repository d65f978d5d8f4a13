// The analysis worker, a child process of the server: computes batch analyses on its own read-only connection to the
// database file, so a large analysis never runs on the server's request thread nor grows the server's memory (issue 12:
// 1M judgments take about a gigabyte while they are analysed). It stores each result itself and tells the server only
// that it did: a report of a million judgments is 14 MB of JSON, which carried through the server (message, copy,
// store) raised its peak memory by about 100 MB. A pooled analysis (several batches, the console's pooled page) is
// computed here too and its report sent back, as it is stored nowhere; a refusal comes back as its name, message and
// status, for the server to raise again.
import Database from 'better-sqlite3';
import { cacheStatements, type Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { analysisVersion, computeBatchAnalysis, storeAnalysis } from './analysis-cache.js';
import { computePooledAnalysis } from './pooled-batches.js';

/** `store`: the job writes its result to analysis_cache itself (the worker); otherwise it returns it (in process). */
export type BatchAnalysisJob = { kind?: 'batch'; id: number; path: string; batchId: number; seed: number; bootstrap: number; targetHalfWidth: number; now: string; store: boolean };
/** Several batches pooled (src/analysis/pooled-batches.ts); the report comes back as JSON, never stored. */
export type PooledAnalysisJob = { kind: 'pooled'; id: number; path: string; batchIds: number[]; seed: number; bootstrap: number; now: string };
export type AnalysisJob = BatchAnalysisJob | PooledAnalysisJob;
export type AnalysisJobResult =
  | { id: number; kind: 'unchanged' }
  | { id: number; kind: 'stored' }
  | { id: number; kind: 'computed'; version: string; result: string }
  | { id: number; kind: 'missing' }
  | { id: number; kind: 'pooled'; result: string }
  /** A UserFacingError of the computation (PooledBatchesError: fewer than two batches, an unknown one): the person's message. */
  | { id: number; kind: 'refused'; name: string; message: string; status: number; code: string }
  | { id: number; kind: 'failed'; message: string };

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
    connections.set(key, db);
  }
  return db;
}

export function runAnalysisJob(job: AnalysisJob): AnalysisJobResult {
  return job.kind === 'pooled' ? runPooledJob(job) : runBatchJob(job);
}

/** Pools the batches in one read transaction (one snapshot of all of them) and returns the report as JSON. */
function runPooledJob(job: PooledAnalysisJob): AnalysisJobResult {
  try {
    const db = connectionTo(job.path);
    const report = db.transaction(() => computePooledAnalysis(db, job.batchIds, { seed: job.seed, bootstrap: job.bootstrap, now: new Date(job.now) }))();
    return { id: job.id, kind: 'pooled', result: JSON.stringify(report) };
  } catch (error) {
    if (error instanceof UserFacingError) return { id: job.id, kind: 'refused', name: error.constructor.name, message: error.message, status: error.status, code: error.code };
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

/** Recomputes unless the stored result already has this data version; one read transaction, so one snapshot. */
function runBatchJob(job: BatchAnalysisJob): AnalysisJobResult {
  try {
    const db = connectionTo(job.path);
    const outcome = db.transaction((): AnalysisJobResult => {
      const settings = { seed: job.seed, bootstrap: job.bootstrap, targetHalfWidth: job.targetHalfWidth };
      const version = analysisVersion(db, job.batchId, settings);
      const stored = db.prepare<{ b: number }, { data_version: string }>('SELECT data_version FROM analysis_cache WHERE batch_id = :b').get({ b: job.batchId });
      if (stored?.data_version === version) return { id: job.id, kind: 'unchanged' };
      const report = computeBatchAnalysis(db, job.batchId, { ...settings, now: new Date(job.now) });
      return report ? { id: job.id, kind: 'computed', version, result: JSON.stringify(report) } : { id: job.id, kind: 'missing' };
    })();
    if (outcome.kind !== 'computed' || !job.store) return outcome;
    // The result's pages reach the database file by this connection's own checkpoint at commit (it keeps SQLite's
    // default), in this low-priority process; the server's are copied by its checkpoint thread (src/db/background-checkpoint.ts).
    storeAnalysis(connectionTo(job.path, 'write'), job.batchId, outcome.version, outcome.result, new Date(job.now));
    return { id: job.id, kind: 'stored' };
  } catch (error) {
    return { id: job.id, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
}

if (process.send) {
  process.on('message', (job: AnalysisJob) => {
    const result = runAnalysisJob(job);
    // The server may have stopped while this job ran: then there is nobody to tell, and nothing more to do.
    if (!process.connected) process.exit(0);
    process.send?.(result, (error: Error | null) => {
      if (error) process.exit(0);
    });
  });
  // The server went away (stopped, crashed): nothing is left to compute for.
  process.on('disconnect', () => process.exit(0));
}
