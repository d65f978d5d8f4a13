import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../db/connection.js';
import type { AnalysisReport } from './analysis-report.js';
import type { DialogueForMetrics } from './dialogue-metrics.js';
import { wordsPerTurn } from './dialogue-metrics.js';
import { judgePseudonym } from '../rating/judge-pseudonym.js';
import { createJudgmentTableBuilder, type JudgmentRowInput, type JudgmentTable } from './judgment-table.js';
import { parseJsonColumn } from '../db/json-column.js';
import { DEFAULT_QUESTION, DEFAULT_QUESTION_ID, findQuestion, QUESTION_KINDS, type QuestionKind } from '../batches/batch.schema.js';
import { UserFacingError } from '../errors/user-facing-error.js';

/**
 * Only the questions and whether ties are declared are read here; the rest of batches.settings is batchSettingsSchema's.
 * `questions` (issue 16) lists each question with its own tie rule; without it the single `question` is question "natural".
 */
const analysisSettingsSchema = z.looseObject({
  allowTie: z.unknown(),
  question: z.string().optional(),
  questions: z
    .array(z.looseObject({ id: z.string(), text: z.string(), allowTie: z.boolean().optional(), kind: z.enum(QUESTION_KINDS).optional(), real: z.string().optional() }))
    .min(1)
    .nullable()
    .optional(),
  equivalenceMargin: z.number().nullable().optional(),
});

/**
 * A question of the batch as the analysis names it: its id, its text, whether it allowed ties, and its kind (issue
 * 53: a which-is-real question names the condition that is real).
 */
export type AnalysisQuestion = { id: string; text: string; tiesAllowed: boolean; kind: QuestionKind; real: string | null };

/**
 * `tiesAllowed` is the first question's; `questions` are in page order (the first is the default everywhere);
 * `equivalenceMargin` is the margin a which-is-real question's equivalence test was stated with (null: none).
 */
export type BatchForAnalysis = { id: number; name: string; judgeSalt: string; tiesAllowed: boolean; questions: AnalysisQuestion[]; equivalenceMargin: number | null };

export function findBatchForAnalysis(db: Db, batchId: number): BatchForAnalysis | null {
  const row = db
    .prepare<{ id: number }, { id: number; name: string; judge_salt: string; settings: string }>(
      'SELECT id, name, judge_salt, settings FROM batches WHERE id = :id',
    )
    .get({ id: batchId });
  if (!row) return null;
  let tiesAllowed = false;
  let questions: AnalysisQuestion[] | null = null;
  let text = DEFAULT_QUESTION;
  let equivalenceMargin: number | null = null;
  try {
    const settings = parseJsonColumn(analysisSettingsSchema, row.settings, `batches.settings of batch ${row.id}`);
    tiesAllowed = settings.allowTie === true;
    text = settings.question ?? DEFAULT_QUESTION;
    questions = settings.questions?.map((q) => ({ id: q.id, text: q.text, tiesAllowed: q.allowTie === true, kind: q.kind ?? 'preference', real: q.real ?? null })) ?? null;
    equivalenceMargin = settings.equivalenceMargin ?? null;
  } catch {
    // Settings are validated on write; an unreadable value means no ties were declared and the one default question.
  }
  if (questions?.[0]) tiesAllowed = questions[0].tiesAllowed;
  const single: AnalysisQuestion = { id: DEFAULT_QUESTION_ID, text, tiesAllowed, kind: 'preference', real: null };
  return { id: row.id, name: row.name, judgeSalt: row.judge_salt, tiesAllowed, questions: questions ?? [single], equivalenceMargin };
}

/** A question id no question of the batch has: a 400 in the console and the API, one line in the CLI. */
export class UnknownQuestionError extends UserFacingError {}

/** The batch's question with this id (the first question when none is asked); an unknown id names the batch's questions. */
export function resolveAnalysisQuestion(batch: Pick<BatchForAnalysis, 'id' | 'questions'>, id: string | undefined | null): AnalysisQuestion {
  const first = batch.questions[0] as AnalysisQuestion;
  if (id === undefined || id === null || id === '') return first;
  const found = findQuestion(batch.id, batch.questions, id);
  if ('problem' in found) throw new UnknownQuestionError(found.problem);
  return found.question;
}

/**
 * Changes whenever a judgment is added, removed or changed, a rater is excluded or screened out, a pair is removed, or
 * the batch's settings change: the analysis cache key. With `upTo`, of the batch's judgments with ids up to it only:
 * the analysis worker, having read judgments in parts (readJudgmentRows), checks with it that none of those it read was
 * removed or changed meanwhile. Removals and changes are counted (migration 031), as a count and a last id alone are
 * the same again when the last judgments are deleted and new ones take their ids.
 */
export function batchDataVersion(db: Db, batchId: number, upTo?: number): string {
  // Without `upTo` no id is compared: a third faster at a million judgments.
  const judgments =
    upTo === undefined
      ? db.prepare<{ b: number }, { n: number; max_id: number }>('SELECT count(*) AS n, coalesce(max(id), 0) AS max_id FROM judgments WHERE batch_id = :b').get({ b: batchId })
      : db
          .prepare<{ b: number; upTo: number }, { n: number; max_id: number }>(
            'SELECT count(*) AS n, coalesce(max(id), 0) AS max_id FROM judgments WHERE batch_id = :b AND id <= :upTo',
          )
          .get({ b: batchId, upTo });
  const { raters, pairs, batch } = batchStateParts(db, batchId);
  // The count of removals and changes joins the key once there is one: a result stored before migration 031 keeps its key.
  const revisions = batch?.revisions ? [`revised ${batch.revisions}`] : [];
  return createHash('sha256')
    .update([judgments?.n, judgments?.max_id, ...revisions, raters?.ids ?? '', pairs?.ids ?? '', batch?.settings ?? ''].join('|'))
    .digest('hex')
    .slice(0, 32);
}

/**
 * Changes whenever batchDataVersion does, read from counters kept by triggers (answered comparisons, migrations 006
 * and 013; removals and changes, migration 031) instead of a count of the judgments: the server checks it on every
 * analysis request, where counting a million judgments took tens of milliseconds (issue 40). Judgments are only ever
 * added with new ids and every removal or change is counted, so the counters move with every change of the judgments.
 * Not a cache key: two states of the batch give the same key only if nothing changed between them.
 */
export function batchChangeKey(db: Db, batchId: number): string {
  const { raters, pairs, batch } = batchStateParts(db, batchId);
  return [batch?.judgments ?? '', batch?.revisions ?? '', raters?.ids ?? '', pairs?.ids ?? '', batch?.settings ?? ''].join('|');
}

/** What batchDataVersion and batchChangeKey read besides the judgments: exclusions, removed pairs, settings and counters. */
function batchStateParts(db: Db, batchId: number) {
  const raters = db
    .prepare<{ b: number }, { ids: string | null }>(
      `SELECT group_concat(id || ':' || excluded || ':' || status, ',') AS ids FROM
         (SELECT id, excluded, status FROM raters WHERE batch_id = :b AND (excluded = 1 OR status = 'screened_out') ORDER BY id)`,
    )
    .get({ b: batchId });
  const pairs = db
    .prepare<{ b: number }, { ids: string | null }>(
      'SELECT group_concat(id, \',\') AS ids FROM (SELECT id FROM pairs WHERE batch_id = :b AND removed_at IS NOT NULL ORDER BY id)',
    )
    .get({ b: batchId });
  const batch = db
    .prepare<{ b: number }, { settings: string; revisions: number; judgments: number }>(
      'SELECT b.settings, coalesce(c.revisions, 0) AS revisions, coalesce(c.judgments, 0) AS judgments FROM batches b LEFT JOIN batch_judgment_counts c ON c.batch_id = b.id WHERE b.id = :b',
    )
    .get({ b: batchId });
  return { raters, pairs, batch };
}

/** A judgment of the batch as its one scan reads it (raw: a row is an array, in this order). */
type JudgmentRow = [
  pairId: number,
  raterId: number,
  questionId: string,
  isGold: number,
  correct: number | null,
  winner: 'a' | 'b' | 'tie',
  leftSide: 'a' | 'b',
  activeMs: number | null,
  confidence: number | null,
];

/** A judgment's pair as the analysis needs it; `joined` 0 when it has no comparison or scenario row (its judgments are left out). */
type PairRow = { id: number; kind: string; removed: number; joined: number; scenario_id: string; dialogue_a_id: number; dialogue_b_id: number; condition_a: string; condition_b: string; category: string };
const PAIR_SELECT = `SELECT p.id, p.kind, p.removed_at IS NOT NULL AS removed, c.id IS NOT NULL AND s.id IS NOT NULL AS joined, p.scenario_id,
         p.dialogue_a_id, p.dialogue_b_id, c.condition_a, c.condition_b, s.category
  FROM pairs p LEFT JOIN comparisons c ON c.id = p.comparison_id LEFT JOIN scenarios s ON s.id = p.scenario_id`;

export type BatchJudgments = {
  table: JudgmentTable;
  exclusions: AnalysisReport['exclusions'];
  attention: Map<string, { correct: number; answered: number }>;
  dialogues: DialogueForMetrics[];
};

/** The ids, first to last, of a batch's judgments in one snapshot; `hi` 0 when it has none. */
export type JudgmentRange = { lo: number; hi: number };

export function judgmentRange(db: Db, batchId: number): JudgmentRange {
  const range = db.prepare<{ b: number }, { lo: number | null; hi: number | null }>('SELECT min(id) AS lo, max(id) AS hi FROM judgments WHERE batch_id = :b').get({ b: batchId });
  return { lo: range?.lo ?? 1, hi: range?.hi ?? 0 };
}

/** Judgment ids per statement of readJudgmentRows. */
const JUDGMENT_IDS_PER_PART = 20_000;

/**
 * A batch's judgments with ids in `range`, in id order, read in parts of `idsPerPart` ids, each part one statement run
 * to its end. Inside a transaction every part reads its snapshot; outside one each part reads its own, and none is held
 * between parts: the analysis worker reads a million judgments so (src/analysis/analysis-input.ts). It reads the id
 * range in rowid order, so no sort and no index: batches are made one after another, so the range is mostly theirs.
 */
export function* readJudgmentRows(db: Db, batchId: number, range: JudgmentRange, idsPerPart = JUDGMENT_IDS_PER_PART): Generator<JudgmentRow> {
  const part = db
    .prepare<{ b: number; lo: number; hi: number }, JudgmentRow>(
      `SELECT j.pair_id, j.rater_id, j.question_id, j.is_gold, j.correct, j.winner, j.left_side, j.active_ms, j.confidence
       FROM judgments j NOT INDEXED WHERE j.id BETWEEN :lo AND :hi AND j.batch_id = :b ORDER BY j.id`,
    )
    .raw();
  for (let lo = range.lo; lo <= range.hi; lo += idsPerPart) yield* part.all({ b: batchId, lo, hi: Math.min(range.hi, lo + idsPerPart - 1) });
}

/**
 * What a batch's judgments are joined to, whatever the question (its raters, pairs and rated dialogues with their words
 * per turn), read in one snapshot with the id range of the judgments that snapshot holds: read once for all of a
 * batch's questions.
 */
export type BatchFrame = {
  batch: BatchForAnalysis;
  range: JudgmentRange;
  raters: Map<number, { name: string; excluded: number; status: string } | null>;
  pairs: Map<number, PairRow | null>;
  dialogues: Map<number, DialogueForMetrics>;
  wordsPerTurn: Map<number, number>;
};

/** A batch frame with what depends on one question: its excluded raters with their judgments to it. */
export type JudgmentFrame = BatchFrame & {
  questionId: string;
  excludedRaters: { id: number; excluded: number; status: string; exclusion_reason: string | null; judgments: number }[];
};

export function readBatchFrame(db: Db, batch: BatchForAnalysis): BatchFrame {
  const range = judgmentRange(db, batch.id);
  const raters = new Map<number, { name: string; excluded: number; status: string } | null>();
  for (const r of db
    .prepare<{ b: number }, { id: number; provider: string; participant_id: string | null; public_id: string; excluded: number; status: string }>(
      'SELECT id, provider, participant_id, public_id, excluded, status FROM raters WHERE batch_id = :b',
    )
    .all({ b: batch.id })) {
    // Raters are named by the export's `judge` pseudonym, so a report and an export of the same batch can be joined.
    raters.set(r.id, { name: judgePseudonym(batch.judgeSalt, { provider: r.provider, participantId: r.participant_id, raterPublicId: r.public_id }), excluded: r.excluded, status: r.status });
  }
  const pairs = new Map<number, PairRow | null>(db.prepare<{ b: number }, PairRow>(`${PAIR_SELECT} WHERE p.batch_id = :b`).all({ b: batch.id }).map((p) => [p.id, p]));
  const dialogueRows = db
    .prepare<{ b: number }, { id: number; mode: string; model: string; end_reason: string | null }>(
      `SELECT d.id, d.mode, d.model, d.end_reason FROM dialogues d
       WHERE d.id IN (SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular'
                      UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular')
       ORDER BY d.id`,
    )
    .all({ b: batch.id });
  const dialogues = new Map<number, DialogueForMetrics>(
    dialogueRows.map((d) => [d.id, { mode: d.mode, model: d.model, endReason: d.end_reason, turns: [] }]),
  );
  const turnRows = db
    .prepare<{ b: number }, { dialogue_id: number; speaker: number; action: string; text: string }>(
      `SELECT t.dialogue_id, t.speaker, t.action, t.text FROM turns t
       WHERE t.dialogue_id IN (SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular'
                               UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular')
       ORDER BY t.dialogue_id, t.idx`,
    )
    .iterate({ b: batch.id });
  for (const t of turnRows) dialogues.get(t.dialogue_id)?.turns.push({ speaker: t.speaker, action: t.action, text: t.text });
  return { batch, range, raters, pairs, dialogues, wordsPerTurn: new Map([...dialogues].map(([id, d]) => [id, wordsPerTurn(d.turns)])) };
}

/** The frame of the batch's judgments to one question (default the first); `shared` when the caller has read it already. */
export function readJudgmentFrame(db: Db, batch: BatchForAnalysis, questionId: string = (batch.questions[0] as AnalysisQuestion).id, shared = readBatchFrame(db, batch)): JudgmentFrame {
  const excludedRaters = db
    .prepare<{ b: number; q: string }, JudgmentFrame['excludedRaters'][number]>(
      `SELECT r.id, r.excluded, r.status, r.exclusion_reason,
              (SELECT count(*) FROM judgments j WHERE j.rater_id = r.id AND j.is_gold = 0 AND j.question_id = :q) AS judgments
       FROM raters r WHERE r.batch_id = :b AND (r.excluded = 1 OR r.status = 'screened_out') ORDER BY r.id`,
    )
    .all({ b: batch.id, q: questionId });
  return { ...shared, questionId, excludedRaters };
}

/**
 * A batch's judgments to one question (default the first) with the exclusions applied: gold pairs (attention,
 * onboarding), raters excluded by a researcher or screened out, and removed pairs are left out and listed. One
 * question at a time: two questions' rows of one assignment are two answers of the same rater to the same pair, and
 * mixed they would count that rater twice in every win rate and agreement. Read in the caller's snapshot.
 */
export function loadBatchJudgments(db: Db, batch: BatchForAnalysis, questionId: string = (batch.questions[0] as AnalysisQuestion).id): BatchJudgments {
  const frame = readJudgmentFrame(db, batch, questionId);
  return joinJudgments(db, frame, readJudgmentRows(db, batch.id, frame.range));
}

/**
 * The frame's judgments (`rows`, its range's in id order) joined to it. One pass, each row joined here to its pair
 * and rater from the frame's maps (never a million row objects held: that was most of the analysis worker's gigabyte,
 * issue 12). SQLite joining them itself, through the question's index and a sort by id, took 2.5 s at a million
 * judgments and two more scans (gold and removed counts, attention checks) 0.6 s; this pass takes about a third of that.
 */
export function joinJudgments(db: Db, frame: JudgmentFrame, rows: Iterable<JudgmentRow>): BatchJudgments {
  const { batch, questionId } = frame;
  const { raterOf, pairOf } = frameLookups(db, frame);
  const builder = createJudgmentTableBuilder();
  const rowOfPair = new Map<number, JudgmentRowInput>();
  const dropped = { gold: 0, removed: 0 };
  const attentionByRater = new Map<number, { correct: number; answered: number }>();
  for (const [pairId, raterId, question, isGold, correct, winner, leftSide, activeMs, confidence] of rows) {
    const pair = pairOf(pairId);
    const rater = raterOf(raterId);
    if (!pair) continue;
    // Attention checks count across every question of the batch.
    if (pair.kind === 'attention' && correct !== null) {
      const tally = attentionByRater.get(raterId) ?? { correct: 0, answered: 0 };
      tally.correct += correct;
      tally.answered += 1;
      attentionByRater.set(raterId, tally);
    }
    if (question !== questionId) continue;
    if (isGold === 1 || pair.kind !== 'regular') {
      dropped.gold += 1;
      continue;
    }
    if (pair.removed === 1) {
      dropped.removed += 1;
      continue;
    }
    if (!rater || rater.excluded !== 0 || rater.status === 'screened_out' || pair.joined === 0) continue;
    // One row object per pair, its judgment's own fields set each time (the builder keeps none of it): not a million
    // objects and pair ids made text (issue 12).
    let row = rowOfPair.get(pairId);
    if (!row) {
      row = pairRowInput(frame, pairId, pair);
      rowOfPair.set(pairId, row);
    }
    row.rater = rater.name;
    row.outcome = winner === 'a' ? 0 : winner === 'b' ? 1 : 2;
    row.left = leftSide === 'a' ? 0 : 1;
    row.seconds = activeMs === null ? NaN : activeMs / 1000;
    row.confidence = confidence ?? 0;
    const problem = builder.add(row);
    // A pair's comparison is fixed by the schema; say so loudly if that ever breaks.
    if (problem) throw new Error(`batch ${batch.id}: ${problem}`);
  }

  // In rater id order, as SQL's GROUP BY gave them.
  const attention = new Map<string, { correct: number; answered: number }>(
    [...attentionByRater].sort(([a], [b]) => a - b).map(([id, tally]) => [raterOf(id)?.name ?? `rater:${id}`, tally]),
  );
  const droppedList: AnalysisReport['exclusions']['dropped'] = [];
  if (dropped.gold > 0) droppedList.push({ reason: 'gold (attention or onboarding) pairs', judgments: dropped.gold });
  if (dropped.removed > 0) droppedList.push({ reason: 'pairs removed from the batch', judgments: dropped.removed });
  return {
    table: builder.build(),
    exclusions: {
      raters: frame.excludedRaters.map((r) => ({
        rater: raterOf(r.id)?.name ?? `rater:${r.id}`,
        reason: r.excluded === 1 ? `excluded: ${r.exclusion_reason ?? 'no reason given'}` : 'screened out (failed attention checks or onboarding)',
        judgments: r.judgments,
      })),
      dropped: droppedList,
    },
    attention,
    dialogues: [...frame.dialogues.values()],
  };
}

/**
 * The frame's raters and pairs by id. A judgment whose rater or pair is not the batch's own (the schema does not forbid
 * it) is looked up on its own and remembered in the frame's maps.
 */
function frameLookups(db: Db, frame: JudgmentFrame): {
  raterOf: (id: number) => { name: string; excluded: number; status: string } | null;
  pairOf: (id: number) => PairRow | null;
} {
  const { raters, pairs } = frame;
  const raterOf = (id: number) => {
    let rater = raters.get(id);
    if (rater === undefined) {
      const row = db.prepare<{ id: number }, { excluded: number; status: string }>('SELECT excluded, status FROM raters WHERE id = :id').get({ id });
      rater = row ? { name: `rater:${id}`, ...row } : null;
      raters.set(id, rater);
    }
    return rater;
  };
  const pairOf = (id: number) => {
    let pair = pairs.get(id);
    if (pair === undefined) {
      pair = db.prepare<{ id: number }, PairRow>(`${PAIR_SELECT} WHERE p.id = :id`).get({ id }) ?? null;
      pairs.set(id, pair);
    }
    return pair;
  };
  return { raterOf, pairOf };
}

/** The builder's row for a pair, its judgment's own fields (rater, outcome, left, seconds) left for the caller to set. */
function pairRowInput(frame: JudgmentFrame, pairId: number, pair: PairRow): JudgmentRowInput {
  return {
    item: String(pairId),
    rater: '',
    conditionA: pair.condition_a,
    conditionB: pair.condition_b,
    outcome: 0,
    left: 0,
    seconds: NaN,
    aWords: frame.wordsPerTurn.get(pair.dialogue_a_id) ?? NaN,
    bWords: frame.wordsPerTurn.get(pair.dialogue_b_id) ?? NaN,
    scenario: pair.scenario_id,
    category: pair.category,
  };
}

/** Gold pairs of a batch made from a scenario sample that also has regular pairs (src/batches/gold-sources.ts). */
export function countGoldFromRatedSamples(db: Db, batchId: number): number {
  return db
    .prepare<{ b: number }, number>(
      `SELECT count(*) FROM pairs g WHERE g.batch_id = :b AND g.kind <> 'regular' AND EXISTS (
         SELECT 1 FROM pairs p WHERE p.batch_id = g.batch_id AND p.kind = 'regular'
           AND p.scenario_id = g.scenario_id AND p.cast_id = g.cast_id AND p.sample_index = g.sample_index)`,
    )
    .pluck()
    .get({ b: batchId }) ?? 0;
}
