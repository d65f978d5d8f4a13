// Benchmark of the analysis's page parts (migration 028): the console's analysis, raters and participants pages on the
// first view of a new 1M-judgment result, read from the stored page parts (a page report, the rater figures as rows)
// against the same pages reading the whole report (parsed on the request thread, as before), in the same process on
// the same file. Issue 12: that parse held the server's request thread 54–400 ms each time a console page first
// opened a new result, a stall for every rater in flight.
// Prints, per page, the longest pause of the server's event loop while it answers (what a rater's request waits for)
// and the event loop's busy time for the answer, new against old, as ratios; and the worker's write transactions
// (what raters' writes wait for), with the parts against without them.
// Run: npx tsx scripts/bench/page-parts.ts [--judgments N] [--rounds R]
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import pino from 'pino';
import { analysisVersion, computeBatchAnalysis, storeAnalysis } from '../../src/analysis/analysis-cache.js';
import { drawPlots, storePlots } from '../../src/analysis/analysis-plots.queries.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../../src/analysis/analyze.js';
import { analysisRunning } from '../../src/analysis/background-analysis.js';
import { pageReportOf, raterFiguresOf } from '../../src/analysis/page-report.js';
import { deleteOtherRaterFigures, insertRaterFigures } from '../../src/analysis/rater-figures.queries.js';
import { compressReport } from '../../src/analysis/stored-report.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { cacheStatements, openDatabase } from '../../src/db/connection.js';
import { ADMIN, seedBenchDatabase } from './support/bench-study.js';
import { withLongestPause } from './support/loop-pause.js';
import { median } from './support/median-time.js';
import { consoleBrowser, createAgent } from './support/form-client.js';

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const JUDGMENTS = flag('--judgments', 1_000_000);
const ROUNDS = flag('--rounds', 5);
const FIGURES_PER_WRITE = 1_000;
const kb = (bytes: number) => `${(bytes / 1e3).toFixed(0)} KB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const timed = (what: () => unknown) => {
  const t0 = performance.now();
  what();
  return performance.now() - t0;
};

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const dir = mkdtempSync(join(tmpdir(), 'simarena-bench-page-parts-'));
try {
  const path = join(dir, 'bench.db');
  const { db: seeding, study } = await seedBenchDatabase(path, 20, JUDGMENTS, 'page-parts benchmark');
  seeding.close();

  // The report, its plots and its parts, computed once as the worker computes them.
  const worker = cacheStatements(new Database(path, { fileMustExist: true }));
  worker.pragma('busy_timeout = 5000');
  const started = performance.now();
  const settings = { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 };
  const report = computeBatchAnalysis(worker, study.batchId, { ...settings, now: new Date() });
  if (!report) throw new Error('no report computed');
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

  // The worker's writes, as src/analysis/analysis-worker.ts makes them: without parts (the report and plots, before
  // migration 028) against with them (figures in transactions of their own, then the report, page report and plots,
  // then the old result's figures deleted). Alternated, each storing a new result.
  const writes = { without: [] as number[], main: [] as number[], longestFigures: [] as number[], allFigures: [] as number[] };
  const LAST_WRITE = 3;
  for (let round = 0; round <= LAST_WRITE; round++) {
    const at = new Date(Date.now() + round * 1000);
    // Each round's result of its own version (the last of the version the server's refresh computes), so that each
    // replaces the previous round's figures.
    const stored = round === LAST_WRITE ? version : `${version}|bench-${round}`;
    const partsId = round + 1;
    const without = timed(() =>
      worker.transaction(() => {
        storeAnalysis(worker, study.batchId, `${stored}|without`, gzip, at);
        storePlots(worker, study.batchId, `${stored}|without`, plots);
      })(),
    );
    const figureWrites: number[] = [];
    for (let i = 0; i < figures.length; i += FIGURES_PER_WRITE) {
      figureWrites.push(timed(() => worker.transaction(() => insertRaterFigures(worker, study.batchId, partsId, figures.slice(i, i + FIGURES_PER_WRITE)))()));
    }
    const main = timed(() =>
      worker.transaction(() => {
        storeAnalysis(worker, study.batchId, stored, gzip, at, { report: pageGzip, id: partsId });
        storePlots(worker, study.batchId, stored, plots);
      })(),
    );
    for (let deleted = FIGURES_PER_WRITE; deleted === FIGURES_PER_WRITE; ) {
      const t0 = performance.now();
      deleted = worker.transaction(() => deleteOtherRaterFigures(worker, study.batchId, partsId, FIGURES_PER_WRITE))();
      figureWrites.push(performance.now() - t0);
    }
    // Round 0 warms up (statements prepared, file grown); the other rounds each replace a stored result.
    if (round === 0) continue;
    writes.without.push(without);
    writes.main.push(main);
    writes.longestFigures.push(Math.max(...figureWrites));
    writes.allFigures.push(figureWrites.reduce((a, b) => a + b, 0));
  }

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
  let stamp = Date.now() + 60_000;
  // Each view is the first of a new result (another computed_at, so the server reads the row anew), with its page
  // report (the new way) or without (the old: the whole report parsed). The ways alternate, so that the machine's other
  // load falls on both alike; round 0 warms up (templates compiled, statements prepared) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, url] of Object.entries(pages)) {
      for (const way of ['parts', 'whole'] as const) {
        worker
          .prepare('UPDATE analysis_cache SET computed_at = :at, page_report = :page, parts_id = :partsId WHERE batch_id = :b')
          .run({ at: new Date(stamp++).toISOString(), page: way === 'parts' ? pageGzip : null, partsId: way === 'parts' ? LAST_WRITE + 1 : null, b: study.batchId });
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
  console.log(`\nthe worker's write transactions per new result, medians of ${LAST_WRITE} (raters' writes wait for each):`);
  console.log(`  without parts (report + ${plots.length} plots): ${ms(median(writes.without))}`);
  console.log(`  with parts: report + page report + plots ${ms(median(writes.main))}; longest figure transaction (${FIGURES_PER_WRITE} rows) ${ms(median(writes.longestFigures))}; all figure transactions ${ms(median(writes.allFigures))}`);

  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  // The server's refreshes ask the worker whether the result is current: let the last answer before the file goes.
  for (let i = 0; i < 200 && analysisRunning(db, study.batchId); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  worker.close();
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
