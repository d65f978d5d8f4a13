// Benchmark of the analysis's page parts (migration 028): the console's analysis, raters and participants pages on the
// first view of a new 1M-judgment result, read from the stored page parts (a page report, the rater figures as rows)
// against the same pages reading the whole report (parsed on the request thread, as before), in the same process on
// the same file. Issue 12: that parse held the server's request thread 54–400 ms each time a console page first
// opened a new result, a stall for every rater in flight.
// Prints, per page, the longest pause of the server's event loop while it answers (what a rater's request waits for)
// and the event loop's busy time for the answer, new against old, as ratios; and the worker's write transactions
// (what raters' writes wait for), with the parts against without them, for a first result and for later ones in which
// --changed raters' figures changed (migration 032: only those are written).
// Run: npx tsx scripts/bench/page-parts.ts [--judgments N] [--rounds R] [--changed 2500]
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import pino from 'pino';
import { analysisVersion, analyzeBatchInput, loadBatchAnalysisInput, storeAnalysis } from '../../src/analysis/analysis-cache.js';
import { drawPlots, storePlots } from '../../src/analysis/analysis-plots.queries.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../../src/analysis/analyze.js';
import { analysisRunning } from '../../src/analysis/background-analysis.js';
import { pageReportOf, type RaterFiguresRow, raterFiguresOf } from '../../src/analysis/page-report.js';
import { storeBatchResult, type WriteStep } from '../../src/analysis/analysis-worker.js';
import { compressReport } from '../../src/analysis/stored-report.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { cacheStatements, openDatabase } from '../../src/db/connection.js';
import { ADMIN, seedBenchDatabase } from './support/bench-study.js';
import { withLongestPause } from './support/loop-pause.js';
import { median } from './support/median-time.js';
import { consoleBrowser, createAgent } from './support/form-client.js';
import { benchDir } from './support/bench-dir.js';
import { numberFlag } from './support/number-flag.js';

const JUDGMENTS = numberFlag('--judgments', 1_000_000);
const ROUNDS = numberFlag('--rounds', 5);
const CHANGED = numberFlag('--changed', 2_500);
/** Later results stored, each with --changed raters' figures changed. */
const LAST_WRITE = 3;
/** A result's write transactions; each timed to its commit's end, the connection's own checkpoint of the log included when one follows. */
type Written = { transactions: number; median: number; longest: number; all: number };
const kb = (bytes: number) => `${(bytes / 1e3).toFixed(0)} KB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const timed = (what: () => unknown) => {
  const t0 = performance.now();
  what();
  return performance.now() - t0;
};

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const dir = benchDir('simarena-bench-page-parts-');
try {
  const path = join(dir, 'bench.db');
  const { db: seeding, study } = await seedBenchDatabase(path, 20, JUDGMENTS, 'page-parts benchmark');
  seeding.close();

  // The report, its plots and its parts, computed once as the worker computes them.
  const worker = cacheStatements(new Database(path, { fileMustExist: true }));
  worker.pragma('busy_timeout = 5000');
  const started = performance.now();
  const settings = { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 };
  const input = loadBatchAnalysisInput(worker, study.batchId);
  if (!input) throw new Error('no report computed');
  const report = analyzeBatchInput(input, { ...settings, now: new Date() });
  const signals = input.signals.stored;
  // The version the server's refresh computes: the worker it starts finds the stored result current and leaves it.
  const version = analysisVersion(worker, study.batchId, settings);
  const plots = await drawPlots(report);
  const json = JSON.stringify(report);
  const gzip = compressReport(json);
  const pageJson = JSON.stringify(pageReportOf(report));
  const pageGzip = compressReport(pageJson);
  const figures = raterFiguresOf(report);
  console.log(
    `report computed in ${((performance.now() - started) / 1000).toFixed(1)} s: JSON ${kb(json.length)} (gzip ${kb(gzip.length)}), ${report.raters.length.toLocaleString('en')} raters; ` +
      `page report JSON ${kb(pageJson.length)} (gzip ${kb(pageGzip.length)}), ${figures.length.toLocaleString('en')} figure rows`,
  );

  // The worker's writes, as src/analysis/analysis-worker.ts makes them (storeBatchResult, each transaction timed, no
  // pause between them): without parts (the report and plots, before migration 028) against with them, for a first
  // result (every figure written), for a later one in which --changed raters' figures changed (one more judgment each:
  // a few seconds of a large study's answers; migration 032 writes only those), and for one in which every rater's did.
  const writes = { without: [] as number[], changed: [] as Written[] };
  const timedWrites = (into: number[]): WriteStep => async (db, write) => {
    const t0 = performance.now();
    const result = db.transaction(write).immediate();
    into.push(performance.now() - t0);
    return result;
  };
  let stamp = Date.now();
  const store = async (version: string, next: RaterFiguresRow[]): Promise<Written> => {
    const times: number[] = [];
    const done = await storeBatchResult(worker, study.batchId, { version, report: gzip, pageReport: pageGzip, plots, figures: next, signals, now: new Date(stamp++) }, timedWrites(times));
    if (done !== 'stored') throw new Error(`not stored: ${done}`);
    return { transactions: times.length, median: median(times), longest: Math.max(...times), all: times.reduce((x, y) => x + y, 0) };
  };
  const firstResult = await store(`${version}|bench-first`, figures);
  const changedEach = Math.min(CHANGED, figures.length);
  let current = figures;
  for (let round = 1; round <= LAST_WRITE; round++) {
    const storedParts = worker.prepare('SELECT parts_id FROM analysis_cache WHERE batch_id = ?').pluck().get(study.batchId);
    writes.without.push(
      timed(() =>
        worker.transaction(() => {
          storeAnalysis(worker, study.batchId, `${version}|without-${round}`, gzip, new Date(stamp++));
          storePlots(worker, study.batchId, `${version}|without-${round}`, plots);
        })(),
      ),
    );
    // Its parts given back, so that the next result replaces a result stored with them, as in the worker.
    worker.prepare('UPDATE analysis_cache SET page_report = ?, parts_id = ? WHERE batch_id = ?').run(pageGzip, storedParts, study.batchId);
    // Other raters each round, one judgment more than they had in the result before.
    const from = (round * changedEach) % figures.length;
    current = current.map((f, i) => ((i - from + figures.length) % figures.length < changedEach ? { ...f, judgments: f.judgments + 1 } : f));
    writes.changed.push(await store(`${version}|bench-${round}`, current));
  }
  const everyRater = await store(`${version}|bench-all`, figures.map((f) => ({ ...f, judgments: f.judgments + 100 })));
  // Last, the result of the version the server's refresh computes: the worker it starts finds it current and leaves it.
  await store(version, figures);
  const partsId = worker.prepare('SELECT parts_id FROM analysis_cache WHERE batch_id = ?').pluck().get(study.batchId) as number;

  // The server: the real app on its own connection, signed in as the admin over HTTP.
  const db = openDatabase(path);
  const app = createApp({ db, config: loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' }), logger: pino({ level: 'silent' }), sessionSecret: 'bench-secret-bench-secret-bench-secret-0123' });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const agent = createAgent(2);
  const browser = await consoleBrowser(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, agent, ADMIN);

  /**
   * One GET on the server's event loop: its longest pause (a 1 ms ticker's longest gap) and its busy time meanwhile.
   * The heap is collected first, so that no view pays for the garbage of the one before it (a whole report parsed
   * leaves 10 MB of text and 50,000 objects, whose collection otherwise landed in the next view, whichever way it
   * went): what the old way's garbage costs later is not counted here, in its favour.
   */
  async function measure(url: string): Promise<{ pause: number; active: number }> {
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = performance.eventLoopUtilization();
    const { value: reply, longestPause } = await withLongestPause(() => browser.request('GET', url));
    const used = performance.eventLoopUtilization(before);
    if (reply.status !== 200) throw new Error(`${url} answered ${reply.status}`);
    return { pause: longestPause, active: used.active };
  }

  const pages = {
    analysis: `/console/batches/${study.batchId}/analysis`,
    raters: `/console/batches/${study.batchId}/raters`,
    participants: `/console/batches/${study.batchId}/participants`,
  };
  type Way = 'parts' | 'whole';
  const results: Record<string, Record<Way, { pause: number[]; active: number[] }>> = {};
  stamp += 60_000;
  // Each view is the first of a new result (another computed_at, so the server reads the row anew), with its page
  // report (the new way) or without (the old: the whole report parsed). The ways alternate, so that the machine's other
  // load falls on both alike; round 0 warms up (templates compiled, statements prepared) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, url] of Object.entries(pages)) {
      for (const way of ['parts', 'whole'] as const) {
        worker
          .prepare('UPDATE analysis_cache SET computed_at = :at, page_report = :page, parts_id = :partsId WHERE batch_id = :b')
          .run({ at: new Date(stamp++).toISOString(), page: way === 'parts' ? pageGzip : null, partsId: way === 'parts' ? partsId : null, b: study.batchId });
        const m = await measure(url);
        if (round === 0) continue;
        const slot = (results[name] ??= { parts: { pause: [], active: [] }, whole: { pause: [], active: [] } })[way];
        slot.pause.push(m.pause);
        slot.active.push(m.active);
      }
    }
  }

  console.log(`\nfirst view of a new result, medians of ${ROUNDS} rounds, page parts against the whole report (server's event loop):`);
  for (const [name, r] of Object.entries(results)) {
    const pause = (way: Way) => median(r[way].pause);
    const active = (way: Way) => median(r[way].active);
    console.log(
      `  ${name} page: longest pause ${ms(pause('parts'))} against ${ms(pause('whole'))} (ratio ${(pause('parts') / pause('whole')).toFixed(3)}); ` +
        `busy ${ms(active('parts'))} against ${ms(active('whole'))} (ratio ${(active('parts') / active('whole')).toFixed(3)})`,
    );
  }
  const written = (w: Written) => `${w.transactions} transactions, median ${ms(w.median)}, longest ${ms(w.longest)}, all ${ms(w.all)}`;
  console.log(`\nthe worker's write transactions per new result of ${figures.length.toLocaleString('en')} raters (raters' writes wait for each):`);
  console.log(`  without parts (report + ${plots.length} plots), median of ${LAST_WRITE}: ${ms(median(writes.without))}`);
  console.log(`  with parts, a first result: ${written(firstResult)}`);
  const mid = (pick: (w: Written) => number) => median(writes.changed.map(pick));
  console.log(
    `  with parts, ${changedEach.toLocaleString('en')} raters' figures changed, median of ${LAST_WRITE}: ${mid((w) => w.transactions)} transactions, ` +
      `median ${ms(mid((w) => w.median))}, longest ${ms(mid((w) => w.longest))}, all ${ms(mid((w) => w.all))} (ratio to a first result's all ${(mid((w) => w.all) / firstResult.all).toFixed(3)})`,
  );
  console.log(`  with parts, every rater's figures changed: ${written(everyRater)}`);

  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  // The server's refreshes ask the worker whether the result is current: let the last answer before the file goes.
  for (let i = 0; i < 200 && analysisRunning(db, study.batchId); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  worker.close();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
