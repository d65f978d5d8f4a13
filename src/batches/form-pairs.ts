import { parseCondition } from '../generation/mode.js';
import type { SampleDialogueRow } from './batch.queries.js';

/** A scenario sample: (scenario, cast, sample index). */
export type SampleKey = { scenarioId: string; castId: number; sampleIndex: number };

export type PlannedPair = SampleKey & { comparison: [string, string]; comparisonIndex: number; dialogueA: number; dialogueB: number };

export type SkippedSample = SampleKey & { comparison: [string, string]; reason: string };

/**
 * Forms a pair for every scenario sample with a completed dialogue in both conditions of a comparison;
 * a sample where either side is missing, failed or empty is skipped and listed, so the researcher sees what fell out.
 * When several runs hold the same sample in one condition, the earliest dialogue wins (stable across previews).
 */
export function formPairs(
  dialogues: SampleDialogueRow[],
  comparisons: [string, string][],
  scenarioAllowed: (scenarioId: string) => boolean,
): { pairs: PlannedPair[]; skipped: SkippedSample[] } {
  const pairs: PlannedPair[] = [];
  const skipped: SkippedSample[] = [];
  const bySample = new Map<string, SampleDialogueRow[]>();
  for (const d of dialogues) {
    if (!scenarioAllowed(d.scenario_id)) continue;
    const key = JSON.stringify([d.scenario_id, d.cast_id, d.sample_index]);
    const list = bySample.get(key) ?? [];
    list.push(d);
    bySample.set(key, list);
  }
  comparisons.forEach((comparison, comparisonIndex) => {
    const [condA, condB] = comparison.map((c) => parseCondition(c));
    if (!condA || !condB) return;
    for (const list of bySample.values()) {
      const first = list[0];
      if (!first) continue;
      const sample: SampleKey = { scenarioId: first.scenario_id, castId: first.cast_id, sampleIndex: first.sample_index };
      const inA = list.filter((d) => d.mode === condA.mode && d.model === condA.model);
      const inB = list.filter((d) => d.mode === condB.mode && d.model === condB.model);
      if (inA.length === 0 && inB.length === 0) continue;
      const usable = (rows: SampleDialogueRow[]) => rows.find((d) => d.state === 'complete' && d.visible_turns > 0);
      const a = usable(inA);
      const b = usable(inB);
      if (a && b) {
        pairs.push({ ...sample, comparison, comparisonIndex, dialogueA: a.id, dialogueB: b.id });
        continue;
      }
      const why = (label: string, rows: SampleDialogueRow[], found: SampleDialogueRow | undefined) => {
        if (found) return null;
        if (rows.length === 0) return `${label} has no dialogue`;
        if (rows.some((d) => d.state === 'complete')) return `${label} dialogue is empty`;
        return `${label} dialogue is ${rows[0]?.state ?? 'missing'}`;
      };
      const reasons = [why(comparison[0], inA, a), why(comparison[1], inB, b)].filter((r): r is string => r !== null);
      skipped.push({ ...sample, comparison, reason: reasons.join('; ') });
    }
  });
  return { pairs, skipped };
}
