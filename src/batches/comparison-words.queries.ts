import type { Db } from '../db/connection.js';
import { countTurnWords, countWords } from '../generation/dialogue-words.js';

// The words a rater reads in one comparison of a batch (issue 14; moved here from rating/ for issue 49): the launch
// checklist counts the least time a session takes from them, the consent page (rating/consent-time.queries.ts) too.

/** The served regular pairs of batch `:batchId`, as `pairs p`. */
export const REGULAR_PAIRS = "p.batch_id = :batchId AND p.kind = 'regular' AND p.removed_at IS NULL";
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
