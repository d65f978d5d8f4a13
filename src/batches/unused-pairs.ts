import type { Db } from '../db/connection.js';
import { listSampleDialogues } from './batch.queries.js';
import type { BatchSettings } from './batch.schema.js';
import { scenarioFilter } from './scenario-filter.js';
import { formPairs, type PlannedPair } from './form-pairs.js';
import { sampleKeyOf } from './gold-sources.js';

// The pairs a comparison could still be given (reallocation, issue 44): formed exactly as the batch's own pairs were
// (src/batches/form-pairs.ts: the batch's runs and scenario selection, a completed non-empty dialogue in both
// conditions, the earliest dialogue of a sample), from scenario samples the comparison has no pair of yet (dialogues
// completed after the batch was formed, or extra samples generated for this). Samples the batch uses for gold pairs
// stay held out, as they were when its pairs were formed.

export type UnusedPair = PlannedPair & { sample: string };

/** Unused pairs of each of the batch's comparisons, by comparison position, in the order the batch forms pairs. */
export function listUnusedPairs(db: Db, batchId: number, settings: BatchSettings): UnusedPair[][] {
  const runIds = db.prepare<{ batchId: number }, number>('SELECT run_id FROM batch_runs WHERE batch_id = :batchId ORDER BY run_id').pluck().all({ batchId });
  const { pairs } = formPairs(listSampleDialogues(db, runIds), settings.comparisons, scenarioFilter(db, settings.scenarios));
  const existing = db
    .prepare<{ batchId: number }, { position: number | null; kind: string; sample: string; dialogues: string }>(
      `SELECT c.position, p.kind, json_array(p.scenario_id, p.cast_id, p.sample_index) AS sample, p.dialogue_a_id || '|' || p.dialogue_b_id AS dialogues
       FROM pairs p LEFT JOIN comparisons c ON c.id = p.comparison_id WHERE p.batch_id = :batchId`,
    )
    .all({ batchId });
  const gold = new Set(existing.filter((p) => p.kind !== 'regular').map((p) => p.sample));
  const paired = new Set(existing.filter((p) => p.kind === 'regular').map((p) => `${p.position}|${p.sample}`));
  const dialogues = new Set(existing.map((p) => p.dialogues));
  const unused: UnusedPair[][] = settings.comparisons.map(() => []);
  for (const pair of pairs) {
    const sample = sampleKeyOf(pair);
    if (gold.has(sample) || paired.has(`${pair.comparisonIndex}|${sample}`) || dialogues.has(`${pair.dialogueA}|${pair.dialogueB}`)) continue;
    unused[pair.comparisonIndex]?.push({ ...pair, sample });
  }
  return unused;
}
