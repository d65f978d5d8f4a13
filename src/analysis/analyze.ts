// The analysis report of a set of judgments: one pass gathers per-item counts and side splits, then each part is
// computed by its module (comparison-statistics.ts, agreement.ts, bradley-terry-report.ts, rater-quality.ts,
// report-notes.ts) and assembled here.
import type { AnalysisReport, ComparisonReport } from './analysis-report.js';
import { REPORT_SCHEMA_VERSION } from './analysis-report.js';
import { agreementFor } from './agreement.js';
import { bradleyTerryByGroup } from './bradley-terry-report.js';
import { analyzeComparison } from './comparison-statistics.js';
import { dawidSkene, type DawidSkeneResult } from './dawid-skene.js';
import type { ConditionDialogueMetrics } from './dialogue-metrics.js';
import type { JudgmentTable } from './judgment-table.js';
import { positionBias } from './position-bias.js';
import { raterView } from './rater-quality.js';
import { intervalNotes } from './report-notes.js';
import { TIE } from './win-rate.js';
import { againstHumans } from './against-humans.js';
import type { QuestionKind } from '../batches/batch.schema.js';

export { TIE, winRate } from './win-rate.js';

export type AnalyzeOptions = {
  source: AnalysisReport['source'];
  now?: Date;
  seed?: number;
  /** Bootstrap replicates; 0 turns the bootstrap off. */
  bootstrap?: number;
  targetHalfWidth?: number;
  /** Also resample raters in the win-rate bootstrap (two-way cluster bootstrap). */
  resampleRaters?: boolean;
  /** Whether the batch allowed ties (declares TIE a category); null for a file: the labels that occur are the categories. */
  tiesAllowed?: boolean | null;
  /** Above this many judgments, Dawid-Skene and Cohen's kappa for every rater pair are skipped with a note. */
  heavyLimit?: number;
  /** Bradley-Terry anchor condition; default the first SCRIPT condition in alphabetical order, else the first condition. */
  anchor?: string;
  /** Attention checks per rater name (from the database; a file has none). */
  attention?: Map<string, { correct: number; answered: number }>;
  exclusions?: AnalysisReport['exclusions'];
  dialogueMetrics?: ConditionDialogueMetrics[];
  /** A which-is-real question's answers (issue 53) are no preference: no win rates against HUMANS:human are given. */
  questionKind?: QuestionKind;
};

export const DEFAULT_BOOTSTRAP = 1000;
export const DEFAULT_SEED = 20240601;
export const DEFAULT_HEAVY_LIMIT = 250_000;

/** Computes the whole report from judgments already filtered by the exclusions. */
export function analyzeJudgments(t: JudgmentTable, options: AnalyzeOptions): AnalysisReport {
  const seed = options.seed ?? DEFAULT_SEED;
  const replicates = options.bootstrap ?? DEFAULT_BOOTSTRAP;
  const target = options.targetHalfWidth ?? 0.05;
  const heavyLimit = options.heavyLimit ?? DEFAULT_HEAVY_LIMIT;
  const tiesAllowed = options.tiesAllowed ?? null;
  const notes: string[] = [];
  const nItems = t.itemNames.length;
  const nComp = t.comparisons.length;
  const nRaters = t.raterNames.length;

  const { itemCounts, sideSplit } = countOutcomesAndSides(t);
  const compItems: number[][] = Array.from({ length: nComp }, () => []);
  for (let i = 0; i < nItems; i++) compItems[t.itemComparison[i] as number]!.push(i);

  const heavy = t.n <= heavyLimit;
  if (!heavy) notes.push(`Dawid-Skene and Cohen's kappa for every rater pair were skipped: ${t.n} judgments is above the limit of ${heavyLimit}.`);
  let ds: DawidSkeneResult | null = null;
  if (heavy && t.n > 0) {
    // EM is slow when raters agree little (a few hundred iterations is common with weak preferences); the iteration
    // cap shrinks with the data so the report stays within a fixed amount of work (about 5e7 judgment visits).
    const maxIterations = Math.max(100, Math.min(1000, Math.floor(5e7 / t.n)));
    ds = dawidSkene({ item: t.item, rater: t.rater, label: t.outcome, nItems, nRaters, q: 3 }, { maxIterations });
    if (!ds.converged) notes.push(`Dawid-Skene stopped after ${ds.iterations} iterations without converging.`);
  }

  const comparisons: ComparisonReport[] = t.comparisons.map((cmp, c) =>
    analyzeComparison(t, c, cmp, compItems[c] as number[], itemCounts, sideSplit, ds, { seed, replicates, target, tiesAllowed, heavy, resampleRaters: options.resampleRaters ?? false }),
  );

  notes.push(...intervalNotes(comparisons));

  // Agreement over the whole batch: labels are conditions (or TIE), so the categories are the union.
  const conditions = [...new Set(t.comparisons.flatMap((c) => [c.a, c.b]))].sort();
  let anyTie = false;
  for (let j = 0; j < t.n && !anyTie; j++) if (t.outcome[j] === 2) anyTie = true;
  const batchCategories = [...conditions, ...(tiesAllowed === true || anyTie ? [TIE] : [])];
  const comparisonColumns = t.comparisons.map((cmp) => [batchCategories.indexOf(cmp.a), batchCategories.indexOf(cmp.b), batchCategories.indexOf(TIE)]);
  const batchAgreement = agreementFor(
    t,
    [...Array(nItems).keys()],
    itemCounts,
    batchCategories,
    (i) => comparisonColumns[t.itemComparison[i] as number] as number[],
    tiesAllowed === null ? 'labels in the data' : 'batch settings',
    heavy,
  );
  if (tiesAllowed === false && anyTie) notes.push('The batch does not allow ties, yet some judgments are ties: TIE was added to the categories.');
  // A pair can only get its own comparison's labels, so pooling comparisons lowers chance agreement (p_e) while
  // observed agreement stays put: batch-level kappa, alpha and AC1 run above every comparison's. Say so.
  if (nComp > 1 && batchAgreement.n_judgments > 0)
    notes.push(
      'Agreement over the whole batch pools comparisons whose pairs can only receive their own two conditions (or TIE), which lowers chance agreement: its kappa, alpha and AC1 are higher than within any comparison. Report the per-comparison values.',
    );

  const bradleyTerry = conditions.length >= 2 ? bradleyTerryByGroup(t, conditions, compItems, itemCounts, { seed, replicates, anchor: options.anchor }) : null;
  for (const b of bradleyTerry?.groups?.map((g) => g.bootstrap) ?? (bradleyTerry ? [bradleyTerry.bootstrap] : [])) if (b.warning) notes.push(`${b.warning}.`);

  const humans = options.questionKind === 'which-is-real' ? null : againstHumans(comparisons);
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    generated_at: (options.now ?? new Date()).toISOString(),
    source: options.source,
    settings: { seed, bootstrap: replicates, target_half_width: target, raters_resampled: options.resampleRaters ?? false, ties_allowed: tiesAllowed },
    n_judgments: t.n,
    n_pairs: nItems,
    n_raters: nRaters,
    exclusions: options.exclusions ?? { raters: [], dropped: [] },
    comparisons,
    by_model: byModel(comparisons),
    agreement: batchAgreement,
    bradley_terry: bradleyTerry,
    position_bias: positionBias(sumSideSplits(sideSplit, nComp)),
    raters: raterView(t, ds, options.attention),
    dialogue_metrics: options.dialogueMetrics ?? [],
    ...(humans ? { against_humans: humans } : {}),
    notes,
  };
}

/** One pass over the judgments: per-item outcome counts (A, B, tie) and per-comparison side splits (left side x winner). */
function countOutcomesAndSides(t: JudgmentTable): { itemCounts: Int32Array; sideSplit: Float64Array } {
  const itemCounts = new Int32Array(t.itemNames.length * 3);
  const sideSplit = new Float64Array(t.comparisons.length * 4);
  for (let j = 0; j < t.n; j++) {
    const i = t.item[j] as number;
    const o = t.outcome[j] as number;
    itemCounts[i * 3 + o]! += 1;
    const side = t.left[j] as number;
    if (o < 2 && side >= 0) sideSplit[(t.itemComparison[i] as number) * 4 + side * 2 + o]! += 1;
  }
  return { itemCounts, sideSplit };
}

/** The side splits of every comparison added up, for the batch's position bias. */
function sumSideSplits(sideSplit: Float64Array, nComp: number): Parameters<typeof positionBias>[0] {
  let leftAWinsA = 0;
  let leftAWinsB = 0;
  let leftBWinsA = 0;
  let leftBWinsB = 0;
  for (let c = 0; c < nComp; c++) {
    leftAWinsA += sideSplit[c * 4] as number;
    leftAWinsB += sideSplit[c * 4 + 1] as number;
    leftBWinsA += sideSplit[c * 4 + 2] as number;
    leftBWinsB += sideSplit[c * 4 + 3] as number;
  }
  return { leftAWinsA, leftAWinsB, leftBWinsA, leftBWinsB };
}

function modelOf(condition: string): string {
  const colon = condition.indexOf(':');
  return colon >= 0 ? condition.slice(colon + 1) : condition;
}

/** Comparisons side by side per model: those whose two conditions share a model are grouped under it. */
function byModel(comparisons: ComparisonReport[]): AnalysisReport['by_model'] {
  const groups = new Map<string, AnalysisReport['by_model'][number]['comparisons']>();
  for (const c of comparisons) {
    const ma = modelOf(c.a);
    const mb = modelOf(c.b);
    const key = ma === mb ? ma : `${ma} vs ${mb}`;
    const list = groups.get(key) ?? [];
    list.push({ a: c.a, b: c.b, n: c.n, win_rate_a: c.win_rate_a, ci95: c.ci95 });
    groups.set(key, list);
  }
  return [...groups.entries()].map(([model, list]) => ({ model, comparisons: list }));
}
