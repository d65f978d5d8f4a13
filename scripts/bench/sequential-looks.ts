// Benchmark of group-sequential stopping on the answer path (issue 44). A look runs inside the answer's write
// transaction (src/rating/sequential-stopping.ts): it counts the comparison's completed pairs, reads their votes and
// computes the bounds at every fraction reached so far, while every other rater's write waits. Raters enter, lease
// and answer through the platform's own functions (admitRater, assignNextPair, recordJudgment) on a real SQLite file,
// in three batches of the same pairs run one after the other in this process:
//   - no stopping rule (the baseline);
//   - O'Brien-Fleming alpha spending, a look every M completed pairs;
//   - the same with non-binding futility (beta 0.2 at a win rate of 0.65), whose bounds cost more to compute.
// Raters choose at random (no preference), so with alpha spending alone every look is taken. Each database also holds
// --history judgments of another batch, as a platform that has run studies does: a look must read its own comparison's
// pairs, not every judgment. Prints, for each batch, the median and the longest answer transaction, those of the
// answers that took a look, and each as a ratio against the baseline's median answer; and the median consent
// (admitRater: the promise reserved) and lease (assignNextPair) against the baseline's, the serving side of a
// sequential batch (issue 51: a comparison is not handed out beyond what its next look needs).
// Run: npx tsx scripts/bench/sequential-looks.ts [--pairs 1200] [--every 60] [--history 200000]
import { join } from 'node:path';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { BatchSettingsInput } from '../../src/batches/batch.schema.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { assignNextPair } from '../../src/rating/assign-next-pair.js';
import { admitRater } from '../../src/rating/rater-pool.js';
import { setRaterStatus } from '../../src/rating/rating.queries.js';
import { recordJudgment } from '../../src/rating/record-judgment.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { newPublicId } from '../../src/web/ids.js';
import { benchDir } from './support/bench-dir.js';
import { benchBatchSettings, buildStudy, seedStoredJudgments } from './support/bench-study.js';
import { median } from './support/median-time.js';
import { numberFlag } from './support/number-flag.js';

const PAIRS = numberFlag('--pairs', 1200);
const EVERY = numberFlag('--every', 60);
const HISTORY = numberFlag('--history', 200_000);
const K = 3;
const CAP = 20;

type Timed = { ms: number; look: boolean };
type Run = { answers: Timed[]; consents: number[]; leases: number[]; looks: number; stopped: string | null };

/** Times one call in ms. */
function timed<T>(call: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = call();
  return { value, ms: performance.now() - started };
}

/**
 * Every answer of one batch, timed, with each consent and lease; `look`: the answer's transaction took a look (a row
 * of sequential_looks).
 */
async function runBatch(dir: string, name: string, stopping: BatchSettingsInput['stopping']): Promise<Run> {
  const db = openDatabase(join(dir, `${name}.db`));
  migrate(db);
  const study = await buildStudy(db, PAIRS, {
    name,
    judgmentsPerPair: K,
    perRaterCap: CAP,
    allowTie: false,
    provider: { kind: 'link' },
    ...(stopping ? { stopping } : {}),
  });
  const history = createBatch(db, benchBatchSettings({ name: `${name} (history)` }), { actor: 'bench', now: new Date() });
  seedStoredJudgments(db, history.batchId, HISTORY);
  const batch = getBatchRow(db, study.batchId);
  if (!batch) throw new Error('no batch');
  const settings = readBatchSettings(batch);
  const random = seededRandom(44);
  const countLooks = db.prepare('SELECT count(*) FROM sequential_looks WHERE batch_id = :b').pluck();
  const answers: Timed[] = [];
  const consents: number[] = [];
  const leases: number[] = [];
  // Simulated time moves 30 s an answer, so nobody is "too fast" and no lease lapses.
  let clock = Date.parse('2026-11-01T09:00:00.000Z');
  for (;;) {
    const now = new Date((clock += 30_000));
    const admission = timed(() => admitRater(db, batch, settings, { kind: 'link', nonce: newPublicId() }, { agree: true, raterPublicId: newPublicId(), userAgent: 'bench', addressHash: null, now }));
    const entered = admission.value;
    if (entered.kind !== 'admitted') break;
    consents.push(admission.ms);
    setRaterStatus(db, entered.rater.id, 'rating', now);
    for (;;) {
      const lease = timed(() => assignNextPair(db, entered.rater.id, { now: new Date((clock += 30_000)), random }));
      const outcome = lease.value;
      if (outcome.kind !== 'assigned') break;
      leases.push(lease.ms);
      const before = countLooks.get({ b: study.batchId }) as number;
      const at = new Date((clock += 30_000));
      const started = performance.now();
      const result = recordJudgment(db, entered.rater.id, { assignmentPublicId: outcome.assignment.public_id, choice: random() < 0.5 ? 'left' : 'right', reason: null, activeMs: 20_000 }, at);
      const ms = performance.now() - started;
      if (result.kind !== 'stored') throw new Error(`answer not stored: ${result.kind}`);
      answers.push({ ms, look: (countLooks.get({ b: study.batchId }) as number) > before });
    }
  }
  const looks = countLooks.get({ b: study.batchId }) as number;
  const stopped = db.prepare<{ b: number }, string>("SELECT group_concat(stop_reason) FROM comparisons WHERE batch_id = :b").pluck().get({ b: study.batchId }) ?? null;
  db.close();
  return { answers, consents, leases, looks, stopped };
}

const dir = benchDir('simarena-bench-sequential-');
const every = { lookEvery: EVERY, alpha: 0.05, spending: 'obrien-fleming' as const };
const runs = [
  { label: 'no stopping rule (baseline)', stopping: undefined },
  { label: `alpha spending, a look every ${EVERY} pairs`, stopping: every },
  { label: `the same with non-binding futility`, stopping: { ...every, futility: { beta: 0.2, effect: 0.65, binding: false } } },
];
const results = [];
for (const run of runs) results.push({ ...run, ...(await runBatch(dir, run.label.replace(/\W+/g, '-'), run.stopping)) });
const base = median((results[0]?.answers ?? []).map((a) => a.ms));
const ratio = (ms: number) => `${ms.toFixed(2)} ms (${(ms / base).toFixed(2)}× the baseline's median answer)`;
const baseConsent = median(results[0]?.consents ?? []);
const baseLease = median(results[0]?.leases ?? []);
const against = (ms: number, of: number) => `${ms.toFixed(3)} ms (${(ms / of).toFixed(2)}× the baseline's)`;
console.log(`${PAIRS} pairs of SCRIPT vs AGENTS, K = ${K}, raters choosing at random, ${HISTORY.toLocaleString('en')} judgments of another batch in each database; answer transactions timed in this process.`);
for (const r of results) {
  const all = r.answers.map((a) => a.ms);
  const looks = r.answers.filter((a) => a.look).map((a) => a.ms);
  console.log(`\n${r.label}: ${r.answers.length} answers, ${r.looks} looks${r.stopped ? `, stopped (${r.stopped})` : ''}`);
  console.log(`  every answer: median ${ratio(median(all))}, longest ${ratio(Math.max(...all))}`);
  if (looks.length > 0) console.log(`  answers that took a look: median ${ratio(median(looks))}, longest ${ratio(Math.max(...looks))}`);
  console.log(`  ${r.consents.length} consents: median ${against(median(r.consents), baseConsent)}; ${r.leases.length} leases: median ${against(median(r.leases), baseLease)}`);
}
