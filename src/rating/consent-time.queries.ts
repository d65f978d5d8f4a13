import type { Db } from '../db/connection.js';
import { medianOfOrdered } from '../numbers/median.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { type CapacityResult, checkBatchCapacity } from '../batches/batch-capacity.js';
import { REGULAR_PAIRS, wordsPerComparison } from '../batches/comparison-words.queries.js';
import { type SessionMinimum, sessionMinimum } from '../batches/minimum-time.js';
import { type ConsentTime, estimateConsentTime } from './consent-time.js';
import { createTtlMemo } from './ttl-memo.js';

/**
 * How many completed raters of a batch (not excluded, with at least one timed regular answer) there are, and the
 * median of their total active time on regular comparisons. Screened-out raters never reach `completed`; gold answers
 * (onboarding, attention checks) are left out of the totals. Read from the per-rater totals the judgment triggers keep
 * (migration 012), in order, from one partial index: the count and the one or two middle entries, never a list of
 * every rater (50,000 of them in a batch of a million judgments; issue 12).
 */
export function completedRaterMedian(db: Db, batchId: number): { count: number; medianMs: number | null } {
  const where = "batch_id = :batchId AND status = 'completed' AND excluded = 0 AND regular_timed > 0";
  const count = db.prepare<{ batchId: number }, number>(`SELECT count(*) FROM raters WHERE ${where}`).pluck().get({ batchId }) ?? 0;
  const middle = db.prepare<{ batchId: number; offset: number }, number>(`SELECT regular_active_ms FROM raters WHERE ${where} ORDER BY regular_active_ms LIMIT 2 OFFSET :offset`).pluck();
  return { count, medianMs: medianOfOrdered(count, (offset) => middle.all({ batchId, offset })) };
}

/**
 * Which regular pairs a batch serves, in one string: when it is unchanged, so are the words of its comparisons
 * (dialogues of a batch are complete and never edited; only removing or restoring pairs changes the set).
 */
function regularPairsSignature(db: Db, batchId: number): string {
  const row = db
    .prepare<{ batchId: number }, { n: number; ids: number; squares: number }>(
      `SELECT count(*) AS n, total(p.id) AS ids, total(p.id * p.id) AS squares FROM pairs p WHERE ${REGULAR_PAIRS}`,
    )
    .get({ batchId });
  return `${row?.n ?? 0}:${row?.ids ?? 0}:${row?.squares ?? 0}`;
}

/**
 * Words per comparison remembered per batch, recounted only when the batch's regular pairs change: counting them
 * reads every turn of the batch, which on the consent page of a large batch cost more than the rest of the request.
 * With `ttlMs`, a batch's figures (finished raters' median and words) are also taken as they were for that long
 * before they are read again: reading them cost 4 ms of every rater page that shows the time at 1M judgments (20,000
 * pairs, 50,000 raters), about a fifth of the server's work per judgment (issue 12); a promise made a few seconds
 * after a rater finished may not count them yet. Made once per app (or command), never module-wide; the words are kept
 * per database handle (as the statement cache is), so that the console's first view of a batch finds what the rater
 * pages counted, and a rater's first consent page what the console counted (40 ms at 20,000 pairs, issue 12).
 */
type TimeFacts = { completed: { count: number; medianMs: number | null }; words: number };

export type WordsMemo = {
  /** A batch's figures within `ttlMs`; null: read each time. */
  facts: ((key: string, read: () => TimeFacts) => TimeFacts) | null;
};

export function createWordsMemo(options: { ttlMs?: number; now?: () => number } = {}): WordsMemo {
  return { facts: options.ttlMs ? createTtlMemo<TimeFacts>({ ttlMs: options.ttlMs, max: 200, now: options.now }) : null };
}

const memoKey = (batchId: number, withGoals: boolean) => `${batchId}:${withGoals ? 1 : 0}`;
const wordsByHandle = new WeakMap<Db, Map<string, { signature: string; words: number }>>();

function rememberedWords(db: Db, batchId: number, withGoals: boolean, memo: WordsMemo | undefined): number {
  if (!memo) return wordsPerComparison(db, batchId, withGoals);
  const key = memoKey(batchId, withGoals);
  const signature = regularPairsSignature(db, batchId);
  let remembered = wordsByHandle.get(db);
  if (!remembered) wordsByHandle.set(db, (remembered = new Map()));
  const known = remembered.get(key);
  if (known && known.signature === signature) return known.words;
  const words = wordsPerComparison(db, batchId, withGoals);
  remembered.set(key, { signature, words });
  return words;
}

/** A batch's figures for the time promised: read now, or as remembered within the memo's `ttlMs`. */
function batchTimeFacts(db: Db, batchId: number, withGoals: boolean, memo: WordsMemo | undefined): TimeFacts {
  const read = () => ({ completed: completedRaterMedian(db, batchId), words: rememberedWords(db, batchId, withGoals, memo) });
  return memo?.facts ? memo.facts(memoKey(batchId, withGoals), read) : read();
}

/** The time promised at consent for a rater shown `comparisons` comparisons of a batch (see consent-time.ts), with the minimum it holds to. */
export function consentTimeOfBatch(db: Db, batchId: number, settings: BatchSettings, comparisons: number, memo?: WordsMemo): ConsentTime & { minimum: SessionMinimum } {
  const facts = batchTimeFacts(db, batchId, settings.context === 'scenario+profiles+goals', memo);
  const minimum = sessionMinimum(settings, facts.words, comparisons);
  const time = estimateConsentTime({
    estimatedMinutes: settings.estimatedMinutes,
    completedRaters: facts.completed.count,
    medianTotalMs: facts.completed.medianMs,
    minimumMinutes: minimum.minutes,
  });
  return { ...time, minimum };
}

/**
 * The time a full session promises now, for the coordinator (console batch page, `batches open`, the platforms'
 * estimated completion time): a rater who goes on to their cap, over the comparisons the capacity check counts
 * (onboarding, regular pairs up to the cap or the samples there are, attention checks due).
 */
export function consentTimeOfFullSession(db: Db, batchId: number, settings: BatchSettings, memo?: WordsMemo, capacity?: CapacityResult): ConsentTime & { minimum: SessionMinimum } {
  return consentTimeOfBatch(db, batchId, settings, (capacity ?? checkBatchCapacity(db, batchId)).sessionComparisons, memo);
}
