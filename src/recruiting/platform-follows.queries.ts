import type { Db } from '../db/connection.js';
import type { Platform } from './platform-operations.queries.js';

// What the server last brought a batch's platform to (migration 055), written only by src/recruiting/platform-follow.ts.

export type FollowTarget = 'active' | 'paused' | 'stopped' | 'expired';

export type PlatformFollowRow = {
  batch_id: number;
  platform: Platform;
  target: FollowTarget;
  why: string;
  reached_at: string | null;
  acted: number;
  problem: string | null;
  checked_at: string;
};

export function getPlatformFollow(db: Db, batchId: number, platform: Platform): PlatformFollowRow | undefined {
  return db
    .prepare<{ batchId: number; platform: Platform }, PlatformFollowRow>(
      'SELECT batch_id, platform, target, why, reached_at, acted, problem, checked_at FROM platform_follows WHERE batch_id = :batchId AND platform = :platform',
    )
    .get({ batchId, platform });
}

/** Records the outcome of bringing the platform to `target`: reached (with whether the server moved it) or a problem. */
export function recordPlatformFollow(
  db: Db,
  row: { batchId: number; platform: Platform; target: FollowTarget; why: string; outcome: { reached: true; acted: boolean } | { reached: false; problem: string } },
  now: Date,
): void {
  const reached = row.outcome.reached;
  db.prepare(
    `INSERT INTO platform_follows (batch_id, platform, target, why, reached_at, acted, problem, checked_at)
     VALUES (:batchId, :platform, :target, :why, :reachedAt, :acted, :problem, :now)
     ON CONFLICT (batch_id, platform) DO UPDATE SET target = excluded.target, why = excluded.why, reached_at = excluded.reached_at,
       acted = excluded.acted, problem = excluded.problem, checked_at = excluded.checked_at`,
  ).run({
    batchId: row.batchId,
    platform: row.platform,
    target: row.target,
    why: row.why.slice(0, 200),
    reachedAt: reached ? now.toISOString() : null,
    acted: row.outcome.reached && row.outcome.acted ? 1 : 0,
    problem: row.outcome.reached ? null : row.outcome.problem.slice(0, 2000),
    now: now.toISOString(),
  });
}

/** Batches published on a platform that are not drafts: the ones whose platform may have to follow them. */
export function listFollowedBatches(db: Db): { batch_id: number; platform: Platform }[] {
  return db
    .prepare<[], { batch_id: number; platform: Platform }>(
      `SELECT DISTINCT l.batch_id, l.platform FROM batch_platform_links l JOIN batches b ON b.id = l.batch_id
       WHERE b.state <> 'draft' AND ((l.platform = 'prolific' AND l.kind = 'study') OR (l.platform = 'mturk' AND l.kind = 'hit'))
       ORDER BY l.batch_id, l.platform`,
    )
    .all();
}
