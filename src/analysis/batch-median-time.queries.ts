import type { Db } from '../db/connection.js';
import { medianOfOrdered } from '../numbers/median.js';

// The batch's median time per judgment: the batch page shows it, and the rater flags' "too fast" (rater-quality.ts)
// reads it for the console's payment lists and the platforms' settle commands alike.

export function judgmentCounts(db: Db, batchId: number): { regular: number; timed: number } {
  return (
    db.prepare<{ batchId: number }, { regular: number; timed: number }>('SELECT regular, timed FROM batch_judgment_counts WHERE batch_id = :batchId').get({ batchId }) ?? {
      regular: 0,
      timed: 0,
    }
  );
}

function medianActiveMs(db: Db, batchId: number): number | null {
  // n from the batch's counter; the middle values from the index judgments_by_active_time (migrations 006, 013), entered
  // at the second that holds them (active_time_buckets, migration 025) rather than by skipping half the batch's times:
  // one time per answered comparison, on its first-question row.
  const seconds = db
    .prepare<{ batchId: number }, [number, number]>('SELECT second, judgments FROM active_time_buckets WHERE batch_id = :batchId AND judgments > 0 ORDER BY second')
    .raw()
    .all({ batchId });
  const middle = db
    .prepare<{ batchId: number; from: number; offset: number }, number>(
      `SELECT j.active_ms FROM judgments j WHERE j.batch_id = :batchId AND j.question_index = 0 AND j.is_gold = 0 AND j.active_ms >= :from
       ORDER BY j.active_ms LIMIT 2 OFFSET :offset`,
    )
    .pluck();
  return medianOfOrdered(judgmentCounts(db, batchId).timed, (offset) => {
    let before = 0;
    for (const [second, judgments] of seconds) {
      if (offset < before + judgments) return middle.all({ batchId, from: second * 1000, offset: offset - before });
      before += judgments;
    }
    return [];
  });
}

/** The batch's median time per judgment in seconds (one decimal), as the batch page shows it; the rater flags' "too fast" reads it. */
export function batchMedianSeconds(db: Db, batchId: number): number | null {
  const median = medianActiveMs(db, batchId);
  return median === null ? null : Math.round(median / 100) / 10;
}
