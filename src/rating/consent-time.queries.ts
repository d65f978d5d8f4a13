import type { Db } from '../db/connection.js';
import { medianOfOrdered } from '../numbers/median.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import { countTurnWords, countWords } from '../generation/dialogue-words.js';
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

const REGULAR_PAIRS = "p.batch_id = :batchId AND p.kind = 'regular' AND p.removed_at IS NULL";
/** A batch's served regular pairs with their two dialogues. */
const REGULAR_PAIRS_WITH_DIALOGUES = `pairs p JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id WHERE ${REGULAR_PAIRS}`;

/**
 * Mean words of one regular comparison of a batch: both conversations, the scenario's context and (when shown) its
 * goals. Zero when the batch has no regular pair. Each dialogue's words are stored with it (migration 021), so this is
 * two aggregates: the dialogues' words over the batch's pairs, and the pairs per scenario (20,000 pairs at a million
 * judgments: read as rows, 80–120 ms on a console batch page's first view; issue 12). A dialogue written before that
 * is counted from its turns here and stored, so that is done once (where storing fails, e.g. on a read-only handle,
 * it is counted again next time).
 */
export function wordsPerComparison(db: Db, batchId: number, withGoals: boolean): number {
  const sums = db
    .prepare<{ batchId: number }, { n: number; words: number; unstored: number }>(
      `SELECT count(*) AS n, total(da.words) + total(db.words) AS words, count(*) FILTER (WHERE da.words IS NULL OR db.words IS NULL) AS unstored
       FROM ${REGULAR_PAIRS_WITH_DIALOGUES}`,
    )
    .get({ batchId });
  if (!sums || sums.n === 0) return 0;
  const dialogueWords = sums.unstored > 0 ? countUnstoredWords(db, batchId) : sums.words;
  const scenarios = db
    .prepare<{ batchId: number }, { id: string; pairs: number }>(`SELECT p.scenario_id AS id, count(*) AS pairs FROM pairs p WHERE ${REGULAR_PAIRS} GROUP BY p.scenario_id`)
    .all({ batchId });
  const scenarioWords = scenarios.reduce((sum, scenario) => sum + scenario.pairs * wordsOfScenario(db, scenario.id, withGoals), 0);
  return (dialogueWords + scenarioWords) / sums.n;
}

/** Words of a scenario's context and, when shown, its goals. */
function wordsOfScenario(db: Db, id: string, withGoals: boolean): number {
  const s = db.prepare<{ id: string }, { context: string; goal_1: string; goal_2: string }>('SELECT context, goal_1, goal_2 FROM scenarios WHERE id = :id').get({ id });
  return s ? countWords(s.context) + (withGoals ? countWords(s.goal_1) + countWords(s.goal_2) : 0) : 0;
}

/** Both dialogues' words over a batch's regular pairs, counting (and storing) those of dialogues stored without them. */
function countUnstoredWords(db: Db, batchId: number): number {
  const pairs = db
    .prepare<{ batchId: number }, { a: number; b: number; wordsA: number | null; wordsB: number | null }>(
      `SELECT p.dialogue_a_id AS a, p.dialogue_b_id AS b, da.words AS wordsA, db.words AS wordsB
       FROM ${REGULAR_PAIRS_WITH_DIALOGUES}`,
    )
    .all({ batchId });
  const counted = new Map<number, number>();
  const dialogueWords = (id: number, stored: number | null): number => {
    if (stored !== null) return stored;
    let words = counted.get(id);
    if (words === undefined) {
      words = countTurnWords(db.prepare<{ id: number }, { text: string }>('SELECT text FROM turns WHERE dialogue_id = :id').all({ id }));
      counted.set(id, words);
      storeDialogueWords(db, id, words);
    }
    return words;
  };
  return pairs.reduce((sum, p) => sum + dialogueWords(p.a, p.wordsA) + dialogueWords(p.b, p.wordsB), 0);
}

function storeDialogueWords(db: Db, id: number, words: number): void {
  try {
    db.prepare('UPDATE dialogues SET words = :words WHERE id = :id AND words IS NULL').run({ id, words });
  } catch (error) {
    // Storing is only a saving: a read-only handle, a full disk or a busy database must not fail the page that asked
    // (it is counted again next time). Anything but SQLite's own refusal is a fault of the code.
    if (!String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_')) throw error;
  }
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

/** The time promised at consent for a rater shown `comparisons` comparisons of a batch (see consent-time.ts). */
export function consentTimeOfBatch(db: Db, batchId: number, settings: BatchSettings, comparisons: number, memo?: WordsMemo): ConsentTime {
  const facts = batchTimeFacts(db, batchId, settings.context === 'scenario+profiles+goals', memo);
  return estimateConsentTime({
    estimatedMinutes: settings.estimatedMinutes,
    completedRaters: facts.completed.count,
    medianTotalMs: facts.completed.medianMs,
    wordsPerComparison: facts.words,
    comparisons,
  });
}

/**
 * The time a full session promises now, for the coordinator (console batch page, `batches open`): a rater who goes
 * on to the per-rater cap after the onboarding pairs.
 */
export function consentTimeOfFullSession(db: Db, batchId: number, settings: BatchSettings, memo?: WordsMemo): ConsentTime {
  // A collecting batch has no comparisons to time: it promises the time it states, its wait included (issue 52).
  if (settings.task !== 'rate') return { minutes: settings.estimatedMinutes, source: 'estimate', completedRaters: 0, readingMinutes: 0 };
  return consentTimeOfBatch(db, batchId, settings, settings.perRaterCap + (settings.onboarding?.pairs ?? 0), memo);
}
