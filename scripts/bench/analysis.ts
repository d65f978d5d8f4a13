// Benchmark of the analysis: 1,000,000 judgments (100,000 pairs × 10 raters).
// Targets (issue 5): point statistics < 1 s in process; a 1,000-replicate cluster bootstrap < 5 s; the CLI on the
// 1M-row file end to end, default bootstrap included, < 30 s with memory < 1 GB.
// Figures are printed with a ratio to a baseline measured in the same process: one plain pass summing the outcomes.
// Run: npx tsx scripts/bench/analysis.ts [--pairs N]
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { analyzeJudgments } from '../../src/analysis/analyze.js';
import { bootstrapWinRate } from '../../src/analysis/bootstrap.js';
import { createJudgmentTableBuilder } from '../../src/analysis/judgment-table.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { benchDir } from './support/bench-dir.js';

const pairsArg = process.argv.indexOf('--pairs');
const PAIRS = pairsArg > 0 ? Number(process.argv[pairsArg + 1]) : 100_000;
const RATERS_PER_PAIR = 10;
const RATER_POOL = 2_000;
const SCENARIOS = 900;
const CATEGORIES = ['cooperative', 'competitive', 'mixed'];
const A = 'SCRIPT:gpt-4o-mini';
const B = 'AGENTS:gpt-4o-mini';

// Wall time is what the targets name; CPU time is printed beside it because a shared machine's load inflates wall time.
let lastCpuMs = 0;
function time<T>(fn: () => T): [T, number] {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const value = fn();
  const c = process.cpuUsage(c0);
  lastCpuMs = (c.user + c.system) / 1000;
  return [value, Number(process.hrtime.bigint() - t0) / 1e6];
}

const random = seededRandom(42);
type Row = { item: number; rater: number; outcome: 0 | 1 | 2; left: 0 | 1; aWords: number; bWords: number; scenario: number };
function* rows(): Generator<Row> {
  for (let i = 0; i < PAIRS; i++) {
    const aWords = 12 + random() * 8;
    const bWords = 24 + random() * 12;
    // Pairs differ in how clearly one side wins: clustered judgments, as in real batches.
    const pA = 0.2 + 0.4 * random();
    for (let k = 0; k < RATERS_PER_PAIR; k++) {
      const u = random();
      const outcome = u < 0.1 ? 2 : u < 0.1 + 0.9 * pA ? 0 : 1;
      yield { item: i, rater: (i * 7 + k * 131) % RATER_POOL, outcome, left: random() < 0.5 ? 0 : 1, aWords, bWords, scenario: i % SCENARIOS };
    }
  }
}

console.log(`analysis benchmark: ${PAIRS * RATERS_PER_PAIR} judgments (${PAIRS} pairs × ${RATERS_PER_PAIR} raters)`);
const [table, buildMs] = time(() => {
  const b = createJudgmentTableBuilder();
  for (const r of rows())
    b.add({
      item: `p${r.item}`,
      rater: `r${r.rater}`,
      conditionA: A,
      conditionB: B,
      outcome: r.outcome,
      left: r.left,
      seconds: 20 + (r.item % 40),
      aWords: r.aWords,
      bWords: r.bWords,
      scenario: `s${r.scenario}`,
      category: CATEGORIES[r.scenario % 3] as string,
    });
  return b.build();
});
console.log(`build the in-memory table: ${buildMs.toFixed(0)} ms`);

const [, baselineMs] = time(() => {
  let s = 0;
  for (let j = 0; j < table.n; j++) s += table.outcome[j] as number;
  return s;
});
const ratio = (ms: number, cpuMs = lastCpuMs) =>
  `${ms.toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU (${(ms / Math.max(baselineMs, 0.001)).toFixed(0)}× baseline ${baselineMs.toFixed(2)} ms)`;

const [report, pointMs] = time(() => analyzeJudgments(table, { source: { kind: 'file', path: 'bench' }, bootstrap: 0 }));
console.log(`point statistics (win rates, breakdowns, agreement, BT, position bias, length control, raters): ${ratio(pointMs)}  target < 1000 ms  ${pointMs < 1000 ? 'OK' : 'SLOW'}`);
console.log(`  win rate a ${report.comparisons[0]?.win_rate_a?.toFixed(4)}, Fleiss kappa ${report.agreement.fleiss_kappa?.toFixed(4)}, alpha ${report.agreement.krippendorff_alpha?.toFixed(4)}`);

// The bootstrap over pairs (the worst case: 100,000 clusters), resampling per-pair totals.
const wa = new Float64Array(table.itemNames.length);
const wb = new Float64Array(table.itemNames.length);
for (let j = 0; j < table.n; j++) {
  const o = table.outcome[j] as number;
  if (o === 0) wa[table.item[j] as number]! += 1;
  else if (o === 1) wb[table.item[j] as number]! += 1;
}
const [boot, bootMs] = time(() => bootstrapWinRate({ clusterWinsA: wa, clusterWinsB: wb }, { replicates: 1000, seed: 1 }));
console.log(`1,000-replicate cluster bootstrap over ${wa.length} pairs: ${ratio(bootMs)}  target < 5000 ms  ${bootMs < 5000 ? 'OK' : 'SLOW'}  ci95 ${boot.ci95?.map((x) => x.toFixed(4)).join('–')}`);
const [, fullMs] = time(() => analyzeJudgments(table, { source: { kind: 'file', path: 'bench' } }));
console.log(`full report in process, default bootstrap (by scenario, plus Bradley-Terry): ${ratio(fullMs)}`);

// End to end: write the CSV and run the real CLI in a child process, measuring wall time and peak memory.
const dir = benchDir('simarena-bench-');
const file = join(dir, 'judgments.csv');
await new Promise<void>((resolve, reject) => {
  const out = createWriteStream(file);
  out.on('error', reject);
  out.write('item_id,rater_id,label,condition_a,condition_b,left,a_words_per_turn,b_words_per_turn,scenario_id\n');
  let buffer = '';
  for (let j = 0; j < table.n; j++) {
    const i = table.item[j] as number;
    const o = table.outcome[j] as number;
    buffer += `${table.itemNames[i]},${table.raterNames[table.rater[j] as number]},${o === 0 ? A : o === 1 ? B : 'tie'},${A},${B},${table.left[j] === 0 ? 'a' : 'b'},${(table.itemWordsA[i] as number).toFixed(1)},${(table.itemWordsB[i] as number).toFixed(1)},s${i % SCENARIOS}\n`;
    if (buffer.length > 1 << 20) {
      out.write(buffer);
      buffer = '';
    }
  }
  out.end(buffer, () => resolve());
});
const t0 = Date.now();
const child = spawnSync('/usr/bin/time', ['-f', '%M %U %S', process.execPath, 'bin/simarena.js', 'analyze', '--judgments', file, '--out', join(dir, 'report.json')], {
  encoding: 'utf8',
  env: { ...process.env, DATABASE_PATH: join(dir, 'unused.db') },
});
const cliMs = Date.now() - t0;
if (child.error || child.status !== 0) {
  console.log(`CLI failed: ${child.error?.message ?? child.stderr}`);
} else {
  const [peak, user, sys] = (child.stderr.trim().split('\n').pop() ?? '').split(' ').map(Number) as [number, number, number];
  const peakKb = peak;
  console.log(
    `npx simarena analyze --judgments (1M rows, default bootstrap) end to end: ${ratio(cliMs, (user + sys) * 1000)}  target < 30000 ms  ${cliMs < 30000 ? 'OK' : 'SLOW'}; peak memory ${(peakKb / 1024).toFixed(0)} MB  target < 1024 MB  ${peakKb < 1024 * 1024 ? 'OK' : 'HIGH'}`,
  );
}
