import { readSequentialSection, type SequentialSection } from './sequential-report.js';
import type { Db } from '../db/connection.js';
import type { AnalysisReport } from './analysis-report.js';
import { type AnalyzeOptions, analyzeJudgments, DEFAULT_BOOTSTRAP, DEFAULT_SEED } from './analyze.js';
import {
  type AnalysisQuestion,
  type BatchForAnalysis,
  type BatchJudgments,
  batchDataVersion,
  countGoldFromRatedSamples,
  findBatchForAnalysis,
  joinJudgments,
  type JudgmentFrame,
  readBatchFrame,
  readJudgmentFrame,
  readJudgmentRows,
  resolveAnalysisQuestion,
} from './batch-judgments.queries.js';
import { readRaterSignalFlags } from './quality-signals.queries.js';
import { replaceRaterSignals, signalRowsOf, type StoredSignalRow } from './rater-signals.queries.js';
import type { RaterSignalFlags } from './rater-quality.js';
import { sensitivitySection } from './sensitivity.js';
import type { RaterFlag } from './analysis-report.js';
import { combineQuestionReports, type QuestionPart, selectQuestionReport } from './question-reports.js';
import { dialogueMetrics } from './dialogue-metrics.js';
import type { JudgmentTable } from './judgment-table.js';
import { realismSection } from './realism-section.js';
import { loadPaperData, type PaperData, paperDataVersion, paperSectionOf } from './paper-table.queries.js';
import { compressReport, readStoredReport, type StoredResult } from './stored-report.js';

/** Bumped when the report's computation changes, so old cached results are recomputed. */
// analysis-2: Dawid-Skene runs to convergence, batch-agreement note, Bradley-Terry fitted per group of connected conditions.
// analysis-3: the interval rule (few clusters warned, none for a single pair).
// analysis-4: one report per question (issue 16); a one-question report is unchanged.
// analysis-5: bootstrap clusters in the order of their names; goal and believability intervals clipped to 0-10 (issue 40).
// analysis-6: which-is-real questions' realism section, win rates against HUMANS:human, the paper table's two columns (issues 52, 53).
// analysis-6 also: position-aware Dawid-Skene; raters' flags with their rules; sensitivity on pair majorities (issue 51).
// analysis-7: each rater's signal counts stored beside the result (migration 078), so every batch's are written once.
const ANALYSIS_VERSION = 'analysis-7';

type ComputeOptions = { now?: Date; seed?: number; bootstrap?: number; targetHalfWidth?: number; resampleRaters?: boolean; question?: string };

/**
 * Computes a batch's analysis from the database (no cache). Null when there is no such batch. A batch with several
 * questions (issue 16) gets one report per question: the top-level fields are the first question's (or the asked
 * one's), `questions` holds all of them and `cross_question` how often their answers agree; with `question` only that
 * question is computed. A one-question batch's report is exactly what it was before questions existed.
 */
export function computeBatchAnalysis(db: Db, batchId: number, options: ComputeOptions = {}): AnalysisReport | null {
  const input = loadBatchAnalysisInput(db, batchId, options);
  return input && analyzeBatchInput(input, options);
}

/**
 * A batch's quality-signal flags by rater (export pseudonym), each with its rule and whether the batch declares it
 * grounds for exclusion, and those grounds (issues 43, 51): the raters table shows them, the sensitivity section leaves
 * out the raters with a ground. `stored`: every rater's signal counts by rater id, as the result stores them beside
 * itself for the console's raters and participants pages (migration 078), which read them a page at a time.
 */
export type SignalFlagsInput = { grounds: string[]; byRater: [string, RaterFlag[]][]; stored: StoredSignalRow[] };

/**
 * Everything a batch's analysis reads from the database, read before any of it is computed. `sequential`: a sequential
 * batch's section, where each comparison stopped with its sequential p-value and repeated interval, and its methods
 * paragraph (issues 44 and 51; the report leads with it). `signals`: the raters' flags.
 */
export type BatchAnalysisInput = { batch: BatchForAnalysis; asked: AnalysisQuestion | null; parts: QuestionInput[]; sequential: SequentialSection | null; signals: SignalFlagsInput };
type QuestionInput = { question: AnalysisQuestion; data: BatchJudgments; paper: PaperData; goldFromRated: number };

/**
 * Reads a batch's analysis input (null: no such batch) in the caller's snapshot. Apart from the computation, so that a
 * caller can read it in one read transaction and compute with no snapshot held: the analysis worker's snapshot of a
 * million judgments, held through the whole computation at idle priority, kept the server's write-ahead log from being
 * reset for tens of seconds while raters wrote (issue 12). The worker reads even the judgments outside that
 * transaction (src/analysis/analysis-input.ts).
 */
export function loadBatchAnalysisInput(db: Db, batchId: number, options: Pick<ComputeOptions, 'question'> = {}): BatchAnalysisInput | null {
  const frame = readBatchAnalysisFrame(db, batchId, options);
  return frame && completeBatchAnalysisInput(db, frame);
}

/** A batch's analysis input but its judgments, read in one snapshot; `upTo` is the last of the batch's judgment ids it holds (0: none). */
export type BatchAnalysisFrame = { batch: BatchForAnalysis; asked: AnalysisQuestion | null; parts: QuestionFrame[]; upTo: number; sequential: SequentialSection | null; signals: SignalFlagsInput };
type QuestionFrame = { question: AnalysisQuestion; frame: JudgmentFrame; paper: PaperData; goldFromRated: number };

export function readBatchAnalysisFrame(db: Db, batchId: number, options: Pick<ComputeOptions, 'question'> = {}): BatchAnalysisFrame | null {
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) return null;
  const asked = options.question === undefined ? null : resolveAnalysisQuestion(batch, options.question);
  const paper = loadPaperData(db, batch.id);
  const goldFromRated = countGoldFromRatedSamples(db, batch.id);
  const shared = readBatchFrame(db, batch);
  const parts = (asked ? [asked] : batch.questions).map((question) => ({ question, frame: readJudgmentFrame(db, batch, question.id, shared), paper, goldFromRated }));
  const flags = readRaterSignalFlags(db, batch.id);
  const byRater = [...flags.byRater].flatMap(([id, list]): [string, RaterFlag[]][] => {
    const name = shared.raters.get(id)?.name;
    return name === undefined ? [] : [[name, list]];
  });
  const signals = { grounds: flags.grounds, byRater, stored: signalRowsOf(flags.signals) };
  return { batch, asked, parts, upTo: shared.range.hi, sequential: readSequentialSection(db, batch.id), signals };
}

/** The frame's judgments read (those up to its `upTo`, in `idsPerPart` ids per statement) and joined to it. */
export function completeBatchAnalysisInput(db: Db, { batch, asked, parts, sequential, signals }: BatchAnalysisFrame, idsPerPart?: number): BatchAnalysisInput {
  return {
    batch,
    asked,
    sequential,
    signals,
    parts: parts.map(({ question, frame, paper, goldFromRated }) => ({ question, data: joinJudgments(db, frame, readJudgmentRows(db, batch.id, frame.range, idsPerPart)), paper, goldFromRated })),
  };
}

/** The batch's analysis from its input: no database is read. */
export function analyzeBatchInput({ batch, asked, parts, sequential, signals }: BatchAnalysisInput, options: ComputeOptions = {}): AnalysisReport {
  const byRater = new Map(signals.byRater);
  const raterSignals: RaterSignalFlags = { flagsOf: (rater) => byRater.get(rater) ?? [] };
  // Issue 53: the which-is-real question's answers (its realism section; each condition's judged-real share in the
  // paper table of the preference questions) and the first preference question's (the 2×2's naturalness).
  const realism = parts.find((p) => p.question.kind === 'which-is-real' && p.question.real !== null);
  const natural = parts.find((p) => p.question.kind === 'preference');
  const realismTable = realism?.question.real ? { real: realism.question.real, table: realism.data.table } : null;
  const reports = parts.map(({ question, data, paper, goldFromRated }) => {
    const report = questionReport(batch, question, data, paper, goldFromRated, realismTable, { ...options, raterSignals });
    // The sensitivity section (issues 43, 51): the raters with a flag the batch declares grounds for exclusion left out.
    report.sensitivity = sensitivitySection(data.table, { grounds: signals.grounds, flagsOf: raterSignals.flagsOf });
    return { id: question.id, text: question.text, report, table: data.table };
  });
  if (realism?.question.real) {
    const report = reports[parts.indexOf(realism)]?.report as AnalysisReport;
    report.realism = realismSection({ questionId: realism.question.id, real: realism.question.real, margin: batch.equivalenceMargin, table: realism.data.table, natural: natural?.data.table ?? null });
  }
  const part = reports[0] as QuestionPart;
  // The sequential rule tests the first question (the one that stands for the comparison in every counter).
  if (sequential) part.report.sequential = sequentialJson(sequential);
  // One question asked of a several-question batch: its report, naming it.
  if (asked && batch.questions.length > 1) part.report.question = { id: asked.id, text: asked.text, index: batch.questions.indexOf(asked) };
  return combineQuestionReports(reports);
}

/** The report's sequential section (snake_case, as the rest of the report). */
function sequentialJson(section: SequentialSection): NonNullable<AnalysisReport['sequential']> {
  return {
    comparisons: section.comparisons.map((c) => ({
      comparison: c.comparison,
      state: c.state,
      stop_reason: c.reason,
      look: c.look,
      planned_looks: c.plannedLooks,
      pairs_used: c.pairsUsed,
      max_pairs: c.maxPairs,
      statistic: c.statistic?.kind ?? null,
      statistic_reason: c.statistic?.reason ?? null,
      raters: c.statistic?.raters ?? null,
      design_effect: c.statistic?.designEffect ?? null,
      sequential_p: c.sequentialP,
      win_rate_a: c.estimate,
      repeated_ci: c.repeatedCi,
      naive_win_rate_a: c.naive.winRate,
      naive_ci95: c.naive.ci95,
      after_stop: c.afterStop,
    })),
    lines: section.lines,
    methods: section.methods,
  };
}

function analysisOptions(batch: BatchForAnalysis, question: AnalysisQuestion, data: BatchJudgments, options: ComputeOptions & { raterSignals?: RaterSignalFlags }): AnalyzeOptions {
  return {
    source: { kind: 'batch', batch_id: batch.id, name: batch.name },
    now: options.now,
    seed: options.seed,
    bootstrap: options.bootstrap,
    targetHalfWidth: options.targetHalfWidth,
    resampleRaters: options.resampleRaters,
    tiesAllowed: question.tiesAllowed,
    questionKind: question.kind,
    attention: data.attention,
    exclusions: data.exclusions,
    dialogueMetrics: dialogueMetrics(data.dialogues),
    raterSignals: options.raterSignals,
  };
}

function questionReport(
  batch: BatchForAnalysis,
  question: AnalysisQuestion,
  data: BatchJudgments,
  paper: PaperData,
  goldFromRated: number,
  realism: { real: string; table: JudgmentTable } | null,
  options: ComputeOptions & { raterSignals?: RaterSignalFlags },
): AnalysisReport {
  const report = analyzeJudgments(data.table, analysisOptions(batch, question, data, options));
  // The paper table is of a preference question (naturalness); a which-is-real question's share of "chosen" is each
  // condition's judged-real share, which the preference questions' paper tables carry.
  if (question.kind === 'preference') report.paper = paperSectionOf(paper, data.table, realism);
  // The gold-pair rule of issue 10 (docs/researcher/rating-batches.md): say when a rater could meet a rated dialogue in a gold pair first.
  if (goldFromRated > 0) {
    report.notes.push(
      `${goldFromRated} onboarding or attention-check pair(s) were made from scenario samples that are also rated (the runs had too few held-out samples); a rater who met such a sample in a gold pair could still be given its regular pair (served last), so no regular pair was unreachable, but that rater had seen one of its dialogues before.`,
    );
  }
  return report;
}

/**
 * The batch's analysis, served from `analysis_cache` while its data version (judgments, exclusions, removed pairs,
 * settings) and the requested settings are unchanged; recomputed and stored otherwise. Null when there is no batch.
 */
export function getBatchAnalysis(
  db: Db,
  batchId: number,
  options: { now?: Date | (() => Date); seed?: number; bootstrap?: number; targetHalfWidth?: number; question?: string } = {},
): AnalysisReport | null {
  const now = typeof options.now === 'function' ? options.now() : (options.now ?? new Date());
  const seed = options.seed ?? DEFAULT_SEED;
  const bootstrap = options.bootstrap ?? DEFAULT_BOOTSTRAP;
  const target = options.targetHalfWidth ?? 0.05;
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) return null;
  // The whole report is cached; a question is picked out of it (an unknown id is refused before any work).
  const questionId = options.question === undefined ? undefined : resolveAnalysisQuestion(batch, options.question).id;
  const pick = (report: AnalysisReport) => (questionId === undefined ? report : selectQuestionReport(report, questionId));
  const version = analysisVersion(db, batchId, { seed, bootstrap, targetHalfWidth: target });
  const cached = db
    .prepare<{ b: number }, { data_version: string; result: StoredResult }>('SELECT data_version, result FROM analysis_cache WHERE batch_id = :b')
    .get({ b: batchId });
  const stored = cached && cached.data_version === version ? readStoredReport(cached.result) : null;
  if (stored) return pick(stored);
  const input = loadBatchAnalysisInput(db, batchId);
  if (!input) return null;
  const report = analyzeBatchInput(input, { now, seed, bootstrap, targetHalfWidth: target });
  storeResultInProcess(db, batchId, version, compressReport(JSON.stringify(report)), now, input.signals.stored);
  return pick(report);
}

export type AnalysisSettings = { seed: number; bootstrap: number; targetHalfWidth: number };

/**
 * The cache key of a batch's analysis: the computation's version, the batch's data version and the settings; with
 * `upTo`, of its judgments up to that id only (batchDataVersion).
 */
export function analysisVersion(db: Db, batchId: number, settings: AnalysisSettings, upTo?: number): string {
  return `${ANALYSIS_VERSION}|${batchDataVersion(db, batchId, upTo)}|paper=${paperDataVersion(db)}|seed=${settings.seed}|bootstrap=${settings.bootstrap}|target=${settings.targetHalfWidth}`;
}

/**
 * Stores a batch's report in the form of src/analysis/stored-report.ts (`compressReport`, called by the caller before
 * its write transaction opens: compressing 14 MB takes ~30 ms, which raters' writes would otherwise wait for), with
 * its page parts (migration 028, src/analysis/page-report.ts) when the caller has them: the page report, and the id its
 * rater figures are stored under. A row stored without them has none, never those of the result it replaces.
 */
export function storeAnalysis(db: Db, batchId: number, version: string, result: Buffer, now: Date, parts: { report: Buffer; id: number } | null = null): void {
  db.prepare(
    `INSERT INTO analysis_cache (batch_id, data_version, result, computed_at, page_report, parts_id) VALUES (:b, :version, :result, :at, :page, :partsId)
     ON CONFLICT (batch_id) DO UPDATE SET data_version = excluded.data_version, result = excluded.result, computed_at = excluded.computed_at,
       page_report = excluded.page_report, parts_id = excluded.parts_id`,
  ).run({ b: batchId, version, result, at: now.toISOString(), page: parts?.report ?? null, partsId: parts?.id ?? null });
}

/**
 * A result computed in the server's or the CLI's process (no page parts), stored in one transaction with its raters'
 * signal rows (migration 078), which the worker writes in parts of their own instead (storeBatchResult).
 */
export function storeResultInProcess(db: Db, batchId: number, version: string, result: Buffer, now: Date, signals: readonly StoredSignalRow[]): void {
  db.transaction(() => {
    storeAnalysis(db, batchId, version, result, now);
    replaceRaterSignals(db, batchId, signals);
  })();
}

/** When the cached analysis of a batch was computed, or null when there is none. */
export function analysisComputedAt(db: Db, batchId: number): string | null {
  return db.prepare<{ b: number }, { computed_at: string }>('SELECT computed_at FROM analysis_cache WHERE batch_id = :b').get({ b: batchId })?.computed_at ?? null;
}
