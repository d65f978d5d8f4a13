import type { CollectionSlot } from '../batches/collection.js';
import type { Db } from '../db/connection.js';

// Which scenario sample a new live dialogue plays. Rating pairs dialogues of the same scenario sample (scenario, cast,
// sample index: src/batches/form-pairs.ts), so the collection fills each cast's sample 0 first, then each one's sample
// 1, and so on: generating an AGENTS run with `--samples N` then gives every collected dialogue of index below N its
// counterpart. Counted per mode (HUMANS and HUMAN_AGENT each fill their own), least-played cast first.

/** The next sample to play in `mode`, or null when the batch has no cast. */
export function nextSample(db: Db, runId: number, slots: readonly CollectionSlot[], mode: string): (CollectionSlot & { sampleIndex: number }) | null {
  if (slots.length === 0) return null;
  const played = new Map(
    db
      .prepare<{ runId: number; mode: string }, { cast_id: number; n: number; top: number }>(
        'SELECT cast_id, count(*) AS n, max(sample_index) AS top FROM dialogues WHERE run_id = :runId AND mode = :mode GROUP BY cast_id',
      )
      .all({ runId, mode })
      .map((r) => [r.cast_id, r]),
  );
  let best: CollectionSlot | null = null;
  let fewest = Number.POSITIVE_INFINITY;
  for (const slot of slots) {
    const n = played.get(slot.castId)?.n ?? 0;
    if (n < fewest) {
      fewest = n;
      best = slot;
    }
  }
  if (!best) return null;
  const top = played.get(best.castId)?.top;
  return { ...best, sampleIndex: top === undefined ? 0 : top + 1 };
}
