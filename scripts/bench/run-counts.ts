// The console's run counts (run page and its polled progress.json, runs list, API, simulation card) with many model
// calls stored: read from run_totals (migration 024), against counting the rows as the pages did before, measured in
// the same process on the same file. A call's row holds its whole request and response, so counting calls reads them.
// Then the run page's list of dialogues, a page of 50 of a run of --dialogues (20 turns each), read in the order of
// its index (migration 079) against the same query with the index dropped (every dialogue read, counted and sorted).
//   npx tsx scripts/bench/run-counts.ts [--calls 90000] [--runs 3] [--dialogues 100000]
import { join } from 'node:path';
import { findRunWithCounts, listRunDialogues, listRunsWithCounts } from '../../src/console/run-list.queries.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { runCallTotals } from '../../src/generation/call.queries.js';
import { insertDialogue } from '../../src/generation/dialogue.queries.js';
import { insertSimpleRun } from '../../src/generation/run.queries.js';
import { builtInLibraryDir, installLibrary, readLibrary } from '../../src/scenarios/load-library.js';
import { medianMs } from './support/median-time.js';
import { benchDir } from './support/bench-dir.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? (argv[i + 1] as string) : fallback;
};
const CALLS = Number(option('calls', '90000'));
const RUNS = Number(option('runs', '3'));
const DIALOGUES = Number(option('dialogues', '100000'));
const now = new Date('2026-11-25T10:00:00Z');

const dir = benchDir('simarena-run-counts-');
const path = join(dir, 'runs.db');
let db = openDatabase(path);
migrate(db);
installLibrary(db, readLibrary(builtInLibraryDir), 'simarena', now.toISOString());
const sample = db.prepare('SELECT scenario_id AS scenarioId, id AS castId FROM casts ORDER BY id LIMIT 1').get() as { scenarioId: string; castId: number };
const runIds: number[] = [];
const started = performance.now();
db.transaction(() => {
  for (let r = 0; r < RUNS; r++) {
    const runId = insertSimpleRun(db, { name: `bench run ${r}`, kind: 'generation', state: 'complete', model: 'bench-model', modes: ['AGENTS'] }, now);
    runIds.push(runId);
    const dialogueId = insertDialogue(db, { runId, ...sample, sampleIndex: 0, mode: 'AGENTS', model: 'bench-model', origin: 'generated', state: 'complete' }, now);
    // Calls of a realistic weight: an agent's prompt of about 4 KB (profile, goal, conversation so far), a 1 KB answer.
    db.prepare(
      `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :calls)
       INSERT INTO llm_calls (run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, prompt_tokens, completion_tokens, latency_ms, created_at)
       SELECT :runId, :dialogueId, n, 1 + n % 2, 1, 'h' || n, printf('{"messages":"%.4000c"}', 'x'), printf('{"content":"%.1000c"}', 'y'),
         CASE WHEN n % 50 = 0 THEN 'invalid' ELSE 'ok' END, 900, 60, 1000, :now FROM seq`,
    ).run({ calls: Math.round(CALLS / RUNS), runId, dialogueId, now: now.toISOString() });
  }
})();
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
console.log(`${CALLS} model calls stored in ${RUNS} runs (${((performance.now() - started) / 1000).toFixed(1)} s)`);

// What the pages did before migration 024: count the rows.
db = openDatabase(path);
const countedFromRows = db.prepare(
  `SELECT r.id, d.total, d.complete, c.calls, c.failed_calls, c.prompt_tokens, c.completion_tokens FROM runs r
   LEFT JOIN (SELECT run_id, count(*) AS total, sum(state = 'complete') AS complete FROM dialogues GROUP BY run_id) d ON d.run_id = r.id
   LEFT JOIN (SELECT run_id, count(*) AS calls, sum(status <> 'ok') AS failed_calls, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens
     FROM llm_calls GROUP BY run_id) c ON c.run_id = r.id WHERE r.id = :id`,
);
const time = (what: () => unknown) => medianMs(what, 7);
const runId = runIds[0] as number;
const baseline = time(() => countedFromRows.get({ id: runId }));
const rows: [string, number][] = [
  ['run page / progress.json (findRunWithCounts)', time(() => findRunWithCounts(db, runId))],
  ['runs list, 20 a page (listRunsWithCounts)', time(() => listRunsWithCounts(db, 20, 0))],
  ['one run\'s call totals (runCallTotals)', time(() => runCallTotals(db, runId))],
];
console.log(`baseline, one run's counts taken from the rows: ${baseline.toFixed(1)} ms (median of 7)`);
for (const [what, ms] of rows) console.log(`${what.padEnd(48)} ${ms.toFixed(2)} ms = 1/${Math.round(baseline / Math.max(ms, 0.001))} of the baseline`);

// The run page's dialogue list: a run of DIALOGUES dialogues over the library's casts, every 97th failed.
const casts = db.prepare('SELECT scenario_id, id FROM casts ORDER BY id').all() as { scenario_id: string; id: number }[];
const bigRun = insertSimpleRun(db, { name: 'bench run of many dialogues', kind: 'generation', state: 'complete', model: 'bench-model', modes: ['AGENTS', 'SCRIPT', 'MINDREADERS'] }, now);
const seeded = performance.now();
db.transaction(() => {
  const modes = ['AGENTS', 'SCRIPT', 'MINDREADERS'] as const;
  const turns = db.prepare(
    `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 19)
     INSERT INTO turns (dialogue_id, idx, speaker, action, text) SELECT :id, n, 1 + n % 2, 'speak', 'a turn of about the usual length, said' FROM seq`,
  );
  for (let i = 0; i < DIALOGUES; i++) {
    const cast = casts[i % casts.length] as { scenario_id: string; id: number };
    const round = Math.floor(i / casts.length);
    const id = insertDialogue(
      db,
      { runId: bigRun, scenarioId: cast.scenario_id, castId: cast.id, sampleIndex: Math.floor(round / 3), mode: modes[round % 3] as (typeof modes)[number], model: 'bench-model', origin: 'generated', state: i % 97 === 0 ? 'failed' : 'complete' },
      now,
    );
    turns.run({ id });
  }
})();
console.log(`\n${DIALOGUES} dialogues of 20 turns stored in one run (${((performance.now() - seeded) / 1000).toFixed(1)} s); the run page's list, 50 a page, median of 7:`);
const middle = Math.floor(DIALOGUES / 2 / 50) * 50;
const pageTimes = () => ({ first: time(() => listRunDialogues(db, bigRun, 50, 0)), middle: time(() => listRunDialogues(db, bigRun, 50, middle)) });
const indexed = pageTimes();
const indexSql = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE name = 'dialogues_run_page'").pluck().get();
if (!indexSql) throw new Error('index dialogues_run_page is missing');
db.exec('DROP INDEX dialogues_run_page');
const unindexed = pageTimes();
db.exec(indexSql);
for (const [what, key] of [['first page', 'first'], [`page at offset ${middle}`, 'middle']] as const) {
  console.log(`  ${what.padEnd(22)} ${indexed[key].toFixed(2)} ms in the index's order against ${unindexed[key].toFixed(1)} ms without it = ${(indexed[key] / unindexed[key]).toFixed(3)}`);
}
db.close();
