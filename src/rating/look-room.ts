import type { BatchSettings, StoppingRule } from '../batches/batch.schema.js';
import { lookSchedule } from '../batches/sequential-rule.js';
import type { Db } from '../db/connection.js';
import { listOpenComparisonServing } from './look-room.queries.js';

// Serving a sequential batch (issue 51, item 8): a comparison's pairs are handed out (reserved at consent or leased)
// only as far as its next look needs, so that judgments are not spent on a comparison its next look may stop. Pairs
// already started (judged, leased or reserved) are served as before, up to K; a pair nobody holds yet is handed out
// only while fewer than the next look's count of the comparison's pairs are started. Once the look is taken, the next
// one's count applies. Answers after a stop can then only come from pairs the stopping look itself was waiting for.

/**
 * The completed-pair count of a comparison's next look: the first point of its schedule beyond both its last look and
 * what is complete now (a look that was due and could not be taken, e.g. every pair tied or fewer than ten raters
 * behind it in a batch that waits for them, src/batches/sequential-look.ts, is not waited for here), or
 * null when no look is left (every pair may be handed out).
 */
export function nextLookAt(rule: Pick<StoppingRule, 'looks' | 'lookEvery'>, pairs: number, completed: number, lastLookAt: number | null): number | null {
  const beyond = Math.max(completed, lastLookAt ?? 0);
  return lookSchedule(rule, pairs).find((n) => n > beyond) ?? null;
}

/**
 * Per open comparison of a sequential batch (by id), how many pairs nobody holds yet may still be handed out before
 * its next look: the look's count less the pairs started. Null for a batch without a stopping rule (no limit).
 */
export function lookRoom(db: Db, batchId: number, settings: Pick<BatchSettings, 'stopping' | 'judgmentsPerPair'>): Map<number, number> | null {
  const rule = settings.stopping;
  if (!rule) return null;
  const room = new Map<number, number>();
  for (const c of listOpenComparisonServing(db, batchId, settings.judgmentsPerPair)) {
    const next = nextLookAt(rule, c.pairs, c.completed, c.last_look_at);
    room.set(c.id, next === null ? Number.POSITIVE_INFINITY : Math.max(0, next - c.started));
  }
  return room;
}

/** The comparisons whose pairs nobody holds yet are held back now: the `heldBack` of the open-pair queries. */
export function heldBackComparisons(room: ReadonlyMap<number, number> | null): number[] {
  return room ? [...room].filter(([, left]) => left <= 0).map(([id]) => id) : [];
}

/**
 * Takes one unstarted pair of `comparisonId` out of the room, if there is room (a comparison without an entry, e.g. no
 * stopping rule, always has). Returns whether the pair may be handed out.
 */
export function takeRoom(room: Map<number, number> | null, comparisonId: number | null): boolean {
  if (!room || comparisonId === null) return true;
  const left = room.get(comparisonId);
  if (left === undefined) return true;
  if (left <= 0) return false;
  room.set(comparisonId, left - 1);
  return true;
}
