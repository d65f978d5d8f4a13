import type { BradleyTerryReport } from './analysis-report.js';
import { clusterBootstrap, FEW_CLUSTERS } from './bootstrap.js';
import { fitBradleyTerry } from './bradley-terry.js';
import type { JudgmentTable } from './judgment-table.js';

/**
 * Bradley-Terry over the batch's conditions. Conditions joined by no chain of comparisons (e.g. SCRIPT vs AGENTS run
 * separately for each model) share no scale, so each connected group is fitted on its own, anchored at its own
 * SCRIPT condition; a batch of one group gives the plain single fit.
 */
export function bradleyTerryByGroup(
  t: JudgmentTable,
  conditions: string[],
  compItems: number[][],
  itemCounts: Int32Array,
  o: { seed: number; replicates: number; anchor?: string },
): BradleyTerryReport {
  // Union-find over conditions, joined by each comparison.
  const parent = conditions.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number;
    return i;
  };
  for (const c of t.comparisons) parent[root(conditions.indexOf(c.a))] = root(conditions.indexOf(c.b));
  const byRoot = new Map<number, number[]>();
  conditions.forEach((_, i) => byRoot.set(root(i), [...(byRoot.get(root(i)) ?? []), i]));
  const groups = [...byRoot.values()];
  const allComparisons = t.comparisons.map((_, c) => c);
  if (groups.length === 1) return bradleyTerryReport(t, conditions, allComparisons, compItems, itemCounts, o);
  const fits = groups.map((members, g) => {
    const names = members.map((i) => conditions[i] as string);
    const comps = allComparisons.filter((c) => names.includes((t.comparisons[c] as { a: string }).a));
    return bradleyTerryReport(t, names, comps, compItems, itemCounts, { ...o, seed: o.seed + g });
  });
  const failed = fits.filter((f) => f.reason);
  return {
    anchor: (fits[0] as BradleyTerryReport).anchor,
    scale: '1000 + 400*log10(ability / anchor ability)',
    ties: 'half a win each',
    conditions: fits.flatMap((f) => f.conditions.map((c) => ({ ...c, anchor: f.anchor }))),
    bootstrap: (fits[0] as BradleyTerryReport).bootstrap,
    groups: fits.map((f) => ({ anchor: f.anchor, conditions: f.conditions.map((c) => c.condition), bootstrap: f.bootstrap, ...(f.reason ? { reason: f.reason } : {}) })),
    note: `The comparisons form ${fits.length} groups of conditions never compared with each other: each group is fitted on its own scale, anchored at 1000 on its own anchor, and scores from different groups cannot be compared.`,
    ...(failed.length > 0 ? { reason: failed.map((f) => `${f.anchor}'s group: ${f.reason as string}`).join(' ') } : {}),
  };
}

function bradleyTerryReport(
  t: JudgmentTable,
  conditions: string[],
  comps: number[],
  compItems: number[][],
  itemCounts: Int32Array,
  o: { seed: number; replicates: number; anchor?: string },
): BradleyTerryReport {
  const k = conditions.length;
  const anchorName =
    o.anchor && conditions.includes(o.anchor) ? o.anchor : (conditions.find((c) => c.toUpperCase().startsWith('SCRIPT:')) ?? (conditions[0] as string));
  const anchorIndex = conditions.indexOf(anchorName);
  // Comparisons are indexed by their position in `comps` from here on.
  const nComp = comps.length;
  const ca = comps.map((c) => conditions.indexOf((t.comparisons[c] as { a: string }).a));
  const cb = comps.map((c) => conditions.indexOf((t.comparisons[c] as { b: string }).b));
  const { nClusters, totals } = clusterTotals(t, comps, compItems, itemCounts);
  const winsMatrix = (multiplicity: Int32Array | null) => {
    const w = new Float64Array(k * k);
    for (let cl = 0; cl < nClusters; cl++) {
      const m = multiplicity ? (multiplicity[cl] as number) : 1;
      if (m === 0) continue;
      for (let c = 0; c < nComp; c++) {
        const base = cl * nComp * 3 + c * 3;
        const a = ca[c] as number;
        const b = cb[c] as number;
        const half = (totals[base + 2] as number) / 2;
        w[a * k + b]! += m * ((totals[base] as number) + half);
        w[b * k + a]! += m * ((totals[base + 1] as number) + half);
      }
    }
    return w;
  };
  const fit = fitBradleyTerry(conditions, winsMatrix(null), anchorIndex);
  // One bootstrap per condition would repeat the fits; instead keep every replicate's scores and take quantiles per condition.
  const replicateScores: number[][] = conditions.map(() => []);
  const boot = clusterBootstrap(
    nClusters,
    (m) => {
      const f = fitBradleyTerry(conditions, winsMatrix(m), anchorIndex);
      if (!f.ok) return null;
      f.score.forEach((s, i) => replicateScores[i]!.push(s));
      return 0;
    },
    { replicates: fit.ok ? o.replicates : 0, seed: o.seed + 7919 },
  );
  return {
    anchor: anchorName,
    scale: '1000 + 400*log10(ability / anchor ability)',
    ties: 'half a win each',
    conditions: conditions.map((condition, i) => ({
      condition,
      score: fit.ok ? (fit.score[i] as number) : null,
      ci95: fit.ok ? quantiles(replicateScores[i] as number[]) : null,
    })),
    bootstrap: {
      ...boot,
      ci95: null,
      n_clusters: nClusters,
      ...(fit.ok && boot.replicates > 0 && nClusters < FEW_CLUSTERS ? { warning: `the Bradley-Terry intervals rest on ${nClusters} clusters (fewer than ${FEW_CLUSTERS}) and are likely too narrow` } : {}),
      ...(boot.undefined_replicates > 0 ? { reason: `${boot.undefined_replicates} replicates had no finite fit and were left out` } : {}),
    },
    ...(fit.ok ? {} : { reason: fit.reason }),
  };
}

/**
 * Clusters for the bootstrap: scenarios when every pair has one, else pairs. `totals` holds, per cluster and
 * comparison (in `comps` order), the wins of a, the wins of b and the ties.
 */
function clusterTotals(t: JudgmentTable, comps: number[], compItems: number[][], itemCounts: Int32Array): { nClusters: number; totals: number[] } {
  const nComp = comps.length;
  let allScenarios = t.itemNames.length > 0;
  for (let i = 0; i < t.itemNames.length; i++) if ((t.itemScenario[i] as number) < 0) allScenarios = false;
  const clusterIndex = new Map<number, number>();
  const totals: number[] = [];
  for (let c = 0; c < nComp; c++)
    for (const i of compItems[comps[c] as number] as number[]) {
      const key = allScenarios ? (t.itemScenario[i] as number) : i;
      let cl = clusterIndex.get(key);
      if (cl === undefined) {
        cl = clusterIndex.size;
        clusterIndex.set(key, cl);
        for (let x = 0; x < nComp * 3; x++) totals.push(0);
      }
      for (let x = 0; x < 3; x++) totals[cl * nComp * 3 + c * 3 + x]! += itemCounts[i * 3 + x] as number;
    }
  return { nClusters: clusterIndex.size, totals };
}

/** The 2.5% and 97.5% quantiles of a condition's replicate scores (linear interpolation), null without replicates. */
function quantiles(values: number[]): [number, number] | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const q = (p: number) => {
    const h = (sorted.length - 1) * p;
    const lo = Math.floor(h);
    const hi = Math.min(sorted.length - 1, lo + 1);
    return (sorted[lo] as number) + (h - lo) * ((sorted[hi] as number) - (sorted[lo] as number));
  };
  return [q(0.025), q(0.975)];
}
