// Streaming exports in constant memory: exports a small and a large batch (100x the judgments) and prints the peak
// live heap during each export, above the heap before it, as a ratio against the small batch. Streaming holds when
// that ratio stays near 1 while the row and byte ratios are ~100 (~10 for per-pair and per-dialogue formats).
// The heap is sampled after a forced collection every 1024 writes, so garbage not yet collected does not count.
//
//   npx tsx scripts/bench/export.ts [--pairs 300] [--raters 100]     (re-runs itself with --expose-gc)
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { type ExportFormat, writeExport } from '../../src/export/export-batch.js';
import { newPublicId } from '../../src/web/ids.js';
import { makeBatch, makeDialogue, makeRater, makeRun, makeScenario, makeTurns } from '../../test/helpers/factories.js';
import { benchDir } from './support/bench-dir.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const LARGE_PAIRS = flag('pairs', 300);
const LARGE_RATERS = flag('raters', 100);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const self = new URL(import.meta.url).pathname;
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, ...args], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

/** A batch of `pairs` pairs, each judged by every one of `raters` raters, written as the rating code writes them. */
function makeLargeBatch(db: Db, pairs: number, raters: number): number {
  const runId = makeRun(db, { modes: ['SCRIPT', 'AGENTS'] });
  const { batchId, comparisonIds } = makeBatch(db, { comparisons: [['SCRIPT:test-model', 'AGENTS:test-model']] });
  const raterIds = Array.from({ length: raters }, () => makeRater(db, { batchId }));
  const insertPair = db.prepare(
    `INSERT INTO pairs (batch_id, comparison_id, kind, dialogue_a_id, dialogue_b_id, scenario_id, cast_id, sample_index)
     VALUES (:batchId, :comparisonId, 'regular', :a, :b, :scenarioId, :castId, :sampleIndex)`,
  );
  const insertAssignment = db.prepare(
    `INSERT INTO assignments (public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at)
     VALUES (:publicId, :batchId, :pairId, :raterId, :leftSide, 'answered', :at, :at)`,
  );
  const insertJudgment = db.prepare(
    `INSERT INTO judgments (assignment_id, batch_id, pair_id, rater_id, left_side, choice, winner, label, reason, is_gold, correct,
       shown_at, submitted_at, active_ms, question_version)
     VALUES (:assignmentId, :batchId, :pairId, :raterId, :leftSide, :choice, :winner, :label, :reason, 0, NULL, :at, :at, 30000, 1)`,
  );
  db.transaction(() => {
    for (let p = 0; p < pairs; p++) {
      const scenario = makeScenario(db);
      const a = makeDialogue(db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(8, 20) });
      const b = makeDialogue(db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(8, 25) });
      const pairId = Number(
        insertPair.run({ batchId, comparisonId: comparisonIds[0], a, b, scenarioId: scenario.scenarioId, castId: scenario.castId, sampleIndex: 0 })
          .lastInsertRowid,
      );
      raterIds.forEach((raterId, r) => {
        const leftSide = (p + r) % 2 === 0 ? 'a' : 'b';
        const winner = (p * 7 + r * 3) % 5 < 3 ? 'a' : 'b';
        const at = '2026-01-15T12:00:00.000Z';
        const assignmentId = Number(insertAssignment.run({ publicId: newPublicId(), batchId, pairId, raterId, leftSide, at }).lastInsertRowid);
        insertJudgment.run({
          assignmentId,
          batchId,
          pairId,
          raterId,
          leftSide,
          choice: winner === leftSide ? 'left' : 'right',
          winner,
          label: winner === 'a' ? 'SCRIPT:test-model' : 'AGENTS:test-model',
          reason: r % 4 === 0 ? `reason ${p}-${r}, with "quotes"\nand a newline` : null,
          at,
        });
      });
    }
  })();
  return batchId;
}

/**
 * A destination like a slow network: takes a chunk, answers on the next turn of the event loop. With `sampleHeap`,
 * forces a collection every 1024 writes and records the live heap (slow: used for the heap figure only).
 */
function measuringSink(sampleHeap: boolean) {
  let bytes = 0;
  let writes = 0;
  let peak = 0;
  const sink = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (sampleHeap && ++writes % 1024 === 0) {
        gc?.();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      setImmediate(callback);
    },
  });
  return { sink, result: () => ({ bytes, peak }) };
}

async function exportOnce(db: Db, batchId: number, format: ExportFormat, sampleHeap: boolean) {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const { sink, result } = measuringSink(sampleHeap);
  const started = performance.now();
  // The bundle's analysis is the analysis module's work (it loads the batch); only the streaming is measured here.
  const exported = await writeExport(db, { batch: String(batchId), format }, sink, { analysis: null });
  const ms = performance.now() - started;
  gc?.();
  const { bytes, peak } = result();
  const after = process.memoryUsage().heapUsed;
  // At least 64 KiB, the destination's own buffer: below that the figure is noise.
  return { rows: exported.rows, bytes, growth: Math.max(Math.max(peak, after) - before, 64 * 1024), ms };
}

async function measure(db: Db, batchId: number, format: ExportFormat) {
  const timed = await exportOnce(db, batchId, format, false);
  const sampled = await exportOnce(db, batchId, format, true);
  return { ...timed, growth: sampled.growth };
}

const dir = benchDir('simarena-bench-export-');
try {
  const db = openDatabase(join(dir, 'bench.db'));
  migrate(db);
  const small = makeLargeBatch(db, Math.max(1, Math.round(LARGE_PAIRS / 10)), Math.max(1, Math.round(LARGE_RATERS / 10)));
  const large = makeLargeBatch(db, LARGE_PAIRS, LARGE_RATERS);
  console.log(`export streaming: small batch ${Math.round(LARGE_PAIRS / 10)} pairs x ${Math.round(LARGE_RATERS / 10)} raters, large batch ${LARGE_PAIRS} x ${LARGE_RATERS}`);
  console.log('format           rows ratio  bytes ratio  peak-live-heap ratio  time ratio   (large / small)');
  for (const format of ['judgments-csv', 'judgments-jsonl', 'arena', 'preferences', 'dialogues', 'bundle'] as const) {
    await measure(db, small, format); // warm-up: JIT and statement caches, so the baseline is not inflated
    const s = await measure(db, small, format);
    const l = await measure(db, large, format);
    const ratio = (x: number, y: number) => (x / y).toFixed(1).padStart(10);
    console.log(`${format.padEnd(16)}${ratio(l.rows, s.rows)} ${ratio(l.bytes, s.bytes)}  ${ratio(l.growth, s.growth).padStart(20)}  ${ratio(l.ms, s.ms)}`);
    console.log(`${''.padEnd(16)}(large: ${l.rows} rows, ${(l.bytes / 1e6).toFixed(1)} MB, live heap +${(l.growth / 1e6).toFixed(2)} MB)`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
