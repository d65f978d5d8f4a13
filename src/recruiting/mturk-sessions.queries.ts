import type { Db } from '../db/connection.js';
import type { MturkSession } from './mturk-plan.js';

// Which MTurk assignments reached simarena, and as which rater: every assignmentId a worker entered a batch with
// (rater_sessions holds one row per HIT of a multi-HIT study; raters.session_id the latest).

export function listMturkSessions(db: Db, batchId: number): MturkSession[] {
  return db
    .prepare<{ batchId: number }, MturkSession>(
      `SELECT r.id AS raterId, r.participant_id AS workerId, s.session_id AS assignmentId
         FROM raters r JOIN rater_sessions s ON s.rater_id = r.id
        WHERE r.batch_id = :batchId AND r.provider = 'mturk' AND r.participant_id IS NOT NULL
       UNION
       SELECT r.id, r.participant_id, r.session_id
         FROM raters r
        WHERE r.batch_id = :batchId AND r.provider = 'mturk' AND r.participant_id IS NOT NULL AND r.session_id IS NOT NULL`,
    )
    .all({ batchId });
}

/** The MTurk workers of earlier batches, for the "took part before" qualification of a batch that blocks them. */
export function listMturkWorkersOf(db: Db, batchIds: readonly number[]): string[] {
  if (batchIds.length === 0) return [];
  return db
    .prepare<{ ids: string }, string>(
      `SELECT DISTINCT participant_id FROM raters
        WHERE provider = 'mturk' AND participant_id IS NOT NULL AND batch_id IN (SELECT value FROM json_each(:ids))
        ORDER BY participant_id`,
    )
    .pluck()
    .all({ ids: JSON.stringify(batchIds) });
}
