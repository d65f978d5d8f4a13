// The run page's simulation card, rebuilt on each view of a run (src/console/run-pages.routes.ts), on the request
// thread. Its list of endpoints counted every model call of the run; migration 083 keeps those counts with the calls.
// Times the list as the card reads it now against the count from the calls as before, in the same process on the same
// file (results compared), and the whole card, for a run of --dialogues dialogues of 20 calls each.
//   npx tsx scripts/bench/run-card.ts [--dialogues 45000]
import { listRunEndpoints } from '../../src/generation/call.queries.js';
import { insertDialogue } from '../../src/generation/dialogue.queries.js';
import { insertSimpleRun } from '../../src/generation/run.queries.js';
import { buildSimulationCard } from '../../src/generation/simulation-card.js';
import { type BenchCast, libraryDb } from './support/library-db.js';
import { medianMs } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const DIALOGUES = numberFlag('--dialogues', 45_000);
const CALLS_EACH = 20;
const now = new Date('2026-12-04T10:00:00Z');

const { db, casts } = libraryDb('simarena-run-card-', now);
const cast = casts[0] as BenchCast;
const runId = insertSimpleRun(db, { name: 'bench run card', kind: 'generation', state: 'complete', model: 'bench-model', modes: ['AGENTS'] }, now);
const started = performance.now();
db.transaction(() => {
  const ids = Array.from({ length: DIALOGUES }, (_, i) => insertDialogue(db, { runId, ...cast, sampleIndex: i, mode: 'AGENTS', model: 'bench-model', origin: 'generated', state: 'complete' }, now));
  const first = ids[0] as number;
  // Two endpoints (a fallback answered every tenth dialogue), one call in fifty invalid; small bodies: the count reads
  // an index and the counters, never the bodies. The triggers of migration 083 run for each row, as for a real call.
  db.prepare(
    `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < :calls - 1)
     INSERT INTO llm_calls (run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, prompt_tokens, completion_tokens, latency_ms, created_at, base_url)
     SELECT :runId, :first + n / ${CALLS_EACH}, n % ${CALLS_EACH}, 1 + n % 2, 1, 'h' || n, '{}', '{}', CASE WHEN n % 50 = 0 THEN 'invalid' ELSE 'ok' END, 900, 60, 1000, :now,
       CASE WHEN (n / ${CALLS_EACH}) % 10 = 0 THEN 'http://127.0.0.1:8002/v1' ELSE 'http://127.0.0.1:8001/v1' END FROM seq`,
  ).run({ calls: DIALOGUES * CALLS_EACH, runId, first, now: now.toISOString() });
})();
const calls = DIALOGUES * CALLS_EACH;
console.log(`${DIALOGUES.toLocaleString('en')} dialogues, ${calls.toLocaleString('en')} calls stored (${((performance.now() - started) / 1000).toFixed(1)} s)`);

// What the card counted before migration 083 (from index llm_calls_by_run_endpoint, migration 038).
const fromCalls = db.prepare(
  `SELECT base_url, count(*) AS calls, coalesce(sum(status = 'ok'), 0) AS ok, count(DISTINCT CASE WHEN status = 'ok' THEN dialogue_id END) AS dialogues
   FROM llm_calls WHERE run_id = :runId GROUP BY base_url ORDER BY min(id)`,
);
if (JSON.stringify(fromCalls.all({ runId })) !== JSON.stringify(listRunEndpoints(db, runId))) throw new Error('the endpoint counts differ');
const before = medianMs(() => fromCalls.all({ runId }), 5, { warm: true });
const after = medianMs(() => listRunEndpoints(db, runId), 5, { warm: true });
const card = medianMs(() => buildSimulationCard(db, runId), 5, { warm: true });
console.log(
  `endpoints of the card: before ${before.toFixed(1)} ms, now ${after.toFixed(2)} ms (${(before / after).toFixed(0)}x); ` +
    `the whole card now ${card.toFixed(1)} ms (the rest reads the run's dialogues: their modes, end reasons, failures)`,
);
