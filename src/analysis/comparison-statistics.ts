// The statistics of one comparison (win rates, majority per pair, breakdowns, cluster bootstrap, agreement, position
// bias, length control, sample size, Dawid-Skene view), from the per-item counts analyze.ts gathers in one pass.
import type { Breakdown, ComparisonReport } from './analysis-report.js';
import { agreementFor } from './agreement.js';
import { bootstrapWinRate, qualifyClusterInterval } from './bootstrap.js';
import type { DawidSkeneResult } from './dawid-skene.js';
import type { JudgmentTable } from './judgment-table.js';
import { lengthControlledWinRate } from './length-control.js';
import { positionBias } from './position-bias.js';
import { planSampleSize } from './sample-size.js';
import { wilsonHalfWidth, wilsonInterval } from './wilson.js';
import { TIE, winRate } from './win-rate.js';
import { pairMajority } from '../numbers/pair-majority.js';

export function analyzeComparison(
  t: JudgmentTable,
  c: number,
  cmp: { a: string; b: string },
  items: number[],
  itemCounts: Int32Array,
  sideSplit: Float64Array,
  ds: DawidSkeneResult | null,
  o: { seed: number; replicates: number; target: number; tiesAllowed: boolean | null; heavy: boolean; resampleRaters: boolean },
): ComparisonReport {
  let wa = 0;
  let wb = 0;
  let ties = 0;
  let majA = 0;
  let majB = 0;
  let majTie = 0;
  const byCategory = new Map<string, [number, number, number]>();
  const byScenario = new Map<string, [number, number, number]>();
  const { allScenarios, clusterIndex } = numberClusters(t, items);
  const clusterA: number[] = new Array<number>(clusterIndex.size).fill(0);
  const clusterB: number[] = new Array<number>(clusterIndex.size).fill(0);
  const itemCluster = new Int32Array(t.itemNames.length).fill(-1);
  for (const i of items) {
    const a = itemCounts[i * 3] as number;
    const b = itemCounts[i * 3 + 1] as number;
    const tie = itemCounts[i * 3 + 2] as number;
    wa += a;
    wb += b;
    ties += tie;
    // Majority per pair: the one definition the stopping rule uses too (src/numbers/pair-majority.ts, issue 51), the
    // condition chosen more often than the other, tie answers aside.
    const majority = pairMajority(a, b);
    if (majority === 'a') majA++;
    else if (majority === 'b') majB++;
    else majTie++;
    const category = t.itemCategory[i] as number;
    const scenario = t.itemScenario[i] as number;
    if (category >= 0) addCounts(byCategory, t.categoryNames[category] as string, a, b, tie);
    if (scenario >= 0) addCounts(byScenario, t.scenarioNames[scenario] as string, a, b, tie);
    const k = clusterIndex.get(allScenarios ? scenario : i) as number;
    clusterA[k]! += a;
    clusterB[k]! += b;
    itemCluster[i] = k;
  }
  const base = winRate(wa, wb, ties);
  const breakdown = (map: Map<string, [number, number, number]>): Breakdown[] =>
    [...map.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([key, [a, b, tie]]) => ({ key, ...winRate(a, b, tie) }));

  const raters = o.resampleRaters ? raterRows(t, c, itemCluster) : undefined;
  const boot = bootstrapWinRate({ clusterWinsA: Float64Array.from(clusterA), clusterWinsB: Float64Array.from(clusterB), raters }, { replicates: o.replicates, seed: o.seed + c });

  const categories = declaredCategories(cmp, o.tiesAllowed, wa, wb, ties);
  const columns = [categories.indexOf(cmp.a), categories.indexOf(cmp.b), categories.indexOf(TIE)];
  const agreement = agreementFor(t, items, itemCounts, categories, () => columns, o.tiesAllowed === null ? 'labels in the data' : 'batch settings', o.heavy, c);

  const wilsonHalf = wilsonHalfWidth(wa, wa + wb);
  const bootHalf = boot.ci95 ? (boot.ci95[1] - boot.ci95[0]) / 2 : null;
  const deff = wilsonHalf && bootHalf ? (bootHalf / wilsonHalf) ** 2 : 1;

  const n = wa + wb + ties;
  return {
    a: cmp.a,
    b: cmp.b,
    ...base,
    ties_half: { win_rate_a: n > 0 ? (wa + ties / 2) / n : null, ci95: wilsonInterval(wa + ties / 2, n) },
    majority: { pairs: items.length, ...winRate(majA, majB, majTie) },
    bootstrap: {
      ...qualifyClusterInterval(boot, { nClusters: clusterA.length, nItems: items.length, clusterKind: allScenarios ? 'scenario' : 'pair', wilson: base.ci95 }),
      cluster: allScenarios && items.length > 0 ? 'scenario' : 'item',
      raters_resampled: o.resampleRaters,
    },
    by_category: breakdown(byCategory),
    by_scenario: breakdown(byScenario),
    agreement,
    position_bias: positionBias({
      leftAWinsA: sideSplit[c * 4] as number,
      leftAWinsB: sideSplit[c * 4 + 1] as number,
      leftBWinsA: sideSplit[c * 4 + 2] as number,
      leftBWinsB: sideSplit[c * 4 + 3] as number,
    }),
    length_control: lengthControlledWinRate(wordsPerItem(t, items, itemCounts)),
    sample_size: planSampleSize({ winsA: wa, winsB: wb, ties }, o.target, deff),
    dawid_skene: ds ? dawidSkeneView(ds, items) : null,
  };
}

/**
 * Which clusters the bootstrap resamples (scenarios when every pair has one, else pairs) and each cluster key's number.
 * Clusters are numbered in the order of their names (scenario slugs, else pair ids), not in the order their rows came:
 * the bootstrap draws clusters by number, and a batch reads its judgments in the order they were made where its
 * judgments export lists them by pair, so the same seed gave another interval for the export (issue 40).
 */
function numberClusters(t: JudgmentTable, items: number[]): { allScenarios: boolean; clusterIndex: Map<number, number> } {
  let allScenarios = true;
  for (const i of items) if ((t.itemScenario[i] as number) < 0) allScenarios = false;
  const clusterKey = (i: number) => (allScenarios ? (t.itemScenario[i] as number) : i);
  const clusterName = (key: number) => (allScenarios ? t.scenarioNames[key] : t.itemNames[key]) as string;
  const clusterIndex = new Map<number, number>();
  for (const key of [...new Set(items.map(clusterKey))].sort((x, y) => compareNames(clusterName(x), clusterName(y)))) clusterIndex.set(key, clusterIndex.size);
  return { allScenarios, clusterIndex };
}

/** The comparison's judgments as rows of the two-way (cluster and rater) bootstrap. */
function raterRows(t: JudgmentTable, c: number, itemCluster: Int32Array): Parameters<typeof bootstrapWinRate>[0]['raters'] {
  const rows: number[] = [];
  for (let j = 0; j < t.n; j++) if ((t.itemComparison[t.item[j] as number] as number) === c) rows.push(j);
  // Resample this comparison's own raters: drawing from every rater of the batch would draw raters who never saw
  // these pairs and leave replicates empty.
  const local = new Map<number, number>();
  const rowRater = Int32Array.from(rows, (j) => {
    const r = t.rater[j] as number;
    let k = local.get(r);
    if (k === undefined) local.set(r, (k = local.size));
    return k;
  });
  return {
    rowCluster: Int32Array.from(rows, (j) => itemCluster[t.item[j] as number] as number),
    rowRater,
    rowOutcome: Int8Array.from(rows, (j) => t.outcome[j] as number),
    nRaters: local.size,
  };
}

/** Declared categories: the two conditions, plus TIE when the batch allows ties; for a file, the labels that occur. */
function declaredCategories(cmp: { a: string; b: string }, tiesAllowed: boolean | null, wa: number, wb: number, ties: number): string[] {
  if (tiesAllowed === null) return [...(wa > 0 ? [cmp.a] : []), ...(wb > 0 ? [cmp.b] : []), ...(ties > 0 ? [TIE] : [])];
  return [cmp.a, cmp.b, ...(tiesAllowed || ties > 0 ? [TIE] : [])];
}

/** Per pair of the comparison: its wins for A and B and its dialogues' words per turn, for the length control. */
function wordsPerItem(t: JudgmentTable, items: number[], itemCounts: Int32Array): Parameters<typeof lengthControlledWinRate>[0] {
  const wordsItems = { winsA: new Float64Array(items.length), winsB: new Float64Array(items.length), aWords: new Float64Array(items.length), bWords: new Float64Array(items.length) };
  items.forEach((i, x) => {
    wordsItems.winsA[x] = itemCounts[i * 3] as number;
    wordsItems.winsB[x] = itemCounts[i * 3 + 1] as number;
    wordsItems.aWords[x] = t.itemWordsA[i] as number;
    wordsItems.bWords[x] = t.itemWordsB[i] as number;
  });
  return wordsItems;
}

/** The comparison's pairs by their Dawid-Skene label. */
function dawidSkeneView(ds: DawidSkeneResult, items: number[]): NonNullable<ComparisonReport['dawid_skene']> {
  let a = 0;
  let b = 0;
  let tie = 0;
  for (const i of items) {
    const l = ds.item_label[i] as number;
    if (l === 0) a++;
    else if (l === 1) b++;
    else tie++;
  }
  return { win_rate_a: a + b > 0 ? a / (a + b) : null, pairs_a: a, pairs_b: b, pairs_tie: tie };
}

function addCounts(map: Map<string, [number, number, number]>, key: string, a: number, b: number, tie: number): void {
  const row = map.get(key);
  if (row) {
    row[0] += a;
    row[1] += b;
    row[2] += tie;
  } else map.set(key, [a, b, tie]);
}

/** A fixed order of names (code units, as a sort without locale would give), the same on every machine. */
function compareNames(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
