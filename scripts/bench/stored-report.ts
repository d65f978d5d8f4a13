// Benchmark of the stored analysis report (migration 027): a large batch's report stored as the gzip of its JSON
// against the same report stored as JSON text (the form before), in the same run. Issue 12's trace showed two stalls
// each time a new 1M-judgment result arrived: a rater's BEGIN IMMEDIATE waiting 55–80 ms for the worker's write
// transaction of the 10–14 MB row, and the server's read of the row taking 66–83 ms of its request thread.
// Prints, for a real report computed from seeded judgments:
//   - gzip levels 1, 3, 6 and 9: size, time to compress (in the worker, before its transaction), time to decompress;
//   - the worker's store transaction (report and plots, on a connection opened as the worker opens its own), gzip
//     against text, as a ratio;
//   - the server's read of a new result on its request thread (the row, and for text the bytes the API sent), gzip
//     against text, as a ratio; and the decompression the server leaves to libuv's thread pool, with the longest
//     pause of its event loop meanwhile.
// Run: npx tsx scripts/bench/stored-report.ts [--judgments N] [--rounds R]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { analysisVersion, computeBatchAnalysis, storeAnalysis } from '../../src/analysis/analysis-cache.js';
import { drawPlots, storePlots } from '../../src/analysis/analysis-plots.queries.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../../src/analysis/analyze.js';
import { compressReport, REPORT_GZIP_LEVEL } from '../../src/analysis/stored-report.js';
import { cacheStatements } from '../../src/db/connection.js';
import { seedBenchDatabase } from './support/bench-study.js';
import { withLongestPause } from './support/loop-pause.js';
import { median, medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const JUDGMENTS = numberFlag('--judgments', 1_000_000);
const ROUNDS = numberFlag('--rounds', 7);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), 'simarena-bench-stored-report-'));
try {
  const path = join(dir, 'bench.db');
  const { db: server, study } = await seedBenchDatabase(path, 20, JUDGMENTS, 'stored-report benchmark');

  const started = performance.now();
  const settings = { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 };
  const report = computeBatchAnalysis(server, study.batchId, { ...settings, now: new Date() });
  if (!report) throw new Error('no report computed');
  const json = JSON.stringify(report);
  const version = analysisVersion(server, study.batchId, settings);
  const plots = await drawPlots(report);
  console.log(`report computed and its ${plots.length} plots drawn in ${((performance.now() - started) / 1000).toFixed(1)} s: JSON ${mb(Buffer.byteLength(json))}`);

  console.log('\ngzip level: size, compress (worker), decompress (median of 3)');
  for (const level of [1, 3, 6, 9]) {
    const gzip = compressReport(json, level);
    const compressMs = medianMs(() => compressReport(json, level), 3);
    const decompressMs = medianMs(() => gunzipSync(gzip), 3);
    const chosen = level === REPORT_GZIP_LEVEL ? '  (stored)' : '';
    console.log(`  level ${level}: ${mb(gzip.length)} (${((100 * gzip.length) / Buffer.byteLength(json)).toFixed(1)}% of the JSON), compress ${ms(compressMs)}, decompress ${ms(decompressMs)}${chosen}`);
  }

  // The worker's connection for storing, opened as src/analysis/analysis-worker.ts opens it (better-sqlite3's and
  // SQLite's defaults: synchronous FULL, checkpoint at 1,000 pages). The text rows go under a batch of their own (a
  // bare copy of the batch's row), so that each form replaces a row of its own form, as in a database of that form alone.
  const worker = cacheStatements(new Database(path, { fileMustExist: true }));
  worker.pragma('busy_timeout = 5000');
  const textBatch = Number(
    server
      .prepare(
        `INSERT INTO batches (public_id, name, state, settings, judge_salt, created_at)
         SELECT 'bench-text-rows', name || ' (text rows)', 'closed', settings, judge_salt, created_at FROM batches WHERE id = :b`,
      )
      .run({ b: study.batchId }).lastInsertRowid,
  );
  const storeText = (at: Date) =>
    worker
      .prepare(
        `INSERT INTO analysis_cache (batch_id, data_version, result, computed_at) VALUES (:b, :version, :result, :at)
         ON CONFLICT (batch_id) DO UPDATE SET data_version = excluded.data_version, result = excluded.result, computed_at = excluded.computed_at`,
      )
      .run({ b: textBatch, version, result: json, at: at.toISOString() });
  const readRow = (batchId: number) => server.prepare<{ b: number }, Buffer | string>('SELECT result FROM analysis_cache WHERE batch_id = :b').pluck().get({ b: batchId });

  const times = { textStore: [] as number[], gzipStore: [] as number[], textRead: [] as number[], gzipRead: [] as number[], textServe: [] as number[], compress: [] as number[] };
  // Rounds alternate the two forms, so that the machine's other load falls on both alike. Each round stores a new
  // result (another computed_at) and reads it once on the server's connection, as a new result is read.
  for (let round = 0; round <= ROUNDS; round++) {
    const at = new Date(Date.now() + round * 1000);
    let t0 = performance.now();
    worker.transaction(() => {
      storeText(at);
      storePlots(worker, textBatch, version, plots);
    })();
    const textStore = performance.now() - t0;
    t0 = performance.now();
    const text = readRow(textBatch) as string;
    const textRead = performance.now() - t0;
    // What the API did besides, once per new result: the text encoded into the bytes it sent.
    const textServe = textRead + medianMs(() => Buffer.from(text, 'utf8'), 1);

    t0 = performance.now();
    const gzip = compressReport(json);
    const compress = performance.now() - t0;
    t0 = performance.now();
    worker.transaction(() => {
      storeAnalysis(worker, study.batchId, version, gzip, at);
      storePlots(worker, study.batchId, version, plots);
    })();
    const gzipStore = performance.now() - t0;
    t0 = performance.now();
    const stored = readRow(study.batchId);
    const gzipRead = performance.now() - t0;
    if (!Buffer.isBuffer(stored) || typeof text !== 'string') throw new Error('the rows were not stored in their forms');
    // Round 0 warms up (statements prepared, file grown); it is not counted.
    if (round === 0) continue;
    Object.entries({ textStore, gzipStore, textRead, gzipRead, textServe, compress }).forEach(([k, v]) => times[k as keyof typeof times].push(v));
  }

  // The server's own decompression for a client that does not accept gzip, or a console page: on the thread pool.
  const gzip = readRow(study.batchId) as Buffer;
  const t0 = performance.now();
  const { longestPause } = await withLongestPause(() => promisify(gunzip)(gzip));
  const asyncMs = performance.now() - t0;

  const ratio = (a: number[], b: number[]) => `${median(a).toFixed(1)} ms against ${median(b).toFixed(1)} ms: ratio ${(median(a) / median(b)).toFixed(3)}`;
  console.log(`\nmedians of ${ROUNDS} rounds, gzip (level ${REPORT_GZIP_LEVEL}, ${mb(gzip.length)}) against text (${mb(Buffer.byteLength(json))}):`);
  console.log(`  worker's store transaction (report + ${plots.length} plots, commit included; raters' writes wait for it): ${ratio(times.gzipStore, times.textStore)}`);
  console.log(`  worker's compression before it (not in the transaction): ${ms(median(times.compress))}`);
  console.log(`  server's read of a new result's row (request thread): ${ratio(times.gzipRead, times.textRead)}`);
  console.log(`  server's request-thread work per new result for the API (row read; for text also encoded to bytes): ${ratio(times.gzipRead, times.textServe)}`);
  console.log(`  decompression on libuv's thread pool (a client without gzip, a console page): ${ms(asyncMs)} wall, longest event-loop pause meanwhile ${ms(longestPause)}`);
  worker.close();
  server.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
