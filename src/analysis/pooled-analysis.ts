import { seededRandom } from '../scenarios/seeded-random.js';
import type { WinRate } from './analysis-report.js';
import { winRate } from './analyze.js';
import { quantileType7 } from './bootstrap.js';
import { type BtResult, fitBradleyTerry } from './bradley-terry.js';
import { chiSquareUpperTail } from './chi-square.js';
import type { JudgmentTable } from './judgment-table.js';

// Results across rounds (issue 16, point 3): a study run as several batches (pilot, main, a new model) analysed as
// one. Comparisons are matched across batches by their two conditions (in either order); win rates are given per
// batch and pooled; Bradley-Terry is fitted on every judgment of every batch, so conditions never compared directly
// are placed on one scale through the conditions they share; its interval comes from a bootstrap that resamples
// pairs within each batch (stratified by batch, so every replicate keeps each round's size and design).

export const HETEROGENEITY_TEST =
  'chi-square test of homogeneity of the win proportion of a (decisive judgments) across the batches that share the comparison, df = batches - 1; judgments are treated as independent, which makes the test somewhat liberal when raters agree within pairs';

export type PooledBatchInput = { id: number; name: string; table: JudgmentTable };

export type PooledComparison = {
  a: string;
  b: string;
  batches: ({ batch_id: number } & WinRate)[];
  pooled: WinRate & { bootstrap_ci95: [number, number] | null };
  heterogeneity: { chi_square: number; df: number; p_value: number; min_expected: number; flagged: boolean; note?: string } | null;
};

export type PooledReport = {
  kind: 'pooled';
  generated_at: string;
  batches: { id: number; name: string; n_judgments: number; n_pairs: number; conditions: string[] }[];
  settings: { seed: number; bootstrap: number; alpha: number };
  heterogeneity_test: string;
  comparisons: PooledComparison[];
  bradley_terry: {
    anchor: string;
    scale: '1000 + 400*log10(ability / anchor ability)';
    ties: 'half a win each';
    bootstrap: 'pairs resampled within each batch';
    replicates: number;
    undefined_replicates: number;
    conditions: { condition: string; score: number | null; ci95: [number, number] | null; batches: number[] }[];
    reason?: string;
  } | null;
  notes: string[];
};

type Item = { batch: number; comparison: number; a: number; b: number; tie: number };

export function analyzePooled(
  input: PooledBatchInput[],
  options: { seed: number; bootstrap: number; alpha?: number; anchor?: string; now?: Date },
): PooledReport {
  const alpha = options.alpha ?? 0.05;
  const notes: string[] = [];
  const { comparisons, items, conditionBatches } = poolItems(input);
  // Per batch and pooled counts per comparison.
  const perBatch = comparisons.map(() => input.map(() => [0, 0, 0] as [number, number, number]));
  for (const it of items) {
    const row = perBatch[it.comparison]![it.batch] as [number, number, number];
    row[0] += it.a;
    row[1] += it.b;
    row[2] += it.tie;
  }
  const conditions = [...conditionBatches.keys()].sort();
  const anchor = options.anchor && conditions.includes(options.anchor) ? options.anchor : (conditions.find((c) => c.toUpperCase().startsWith('SCRIPT:')) ?? (conditions[0] as string));
  const fit = conditions.length >= 2 ? fitBradleyTerry(conditions, winsMatrix(conditions, comparisons, items, null), conditions.indexOf(anchor)) : null;
  const pooledBoot = pooledBootstrap(input, items, comparisons, fit?.ok ? { conditions, anchorIndex: conditions.indexOf(anchor) } : null, options);
  const out: PooledComparison[] = comparisons.map((c, g) => {
    const rows = perBatch[g] as [number, number, number][];
    const present = rows.map((r, bi) => ({ bi, r })).filter(({ r }) => r[0] + r[1] + r[2] > 0);
    const total = rows.reduce((s, r) => [s[0] + r[0], s[1] + r[1], s[2] + r[2]], [0, 0, 0]);
    return {
      a: c.a,
      b: c.b,
      batches: present.map(({ bi, r }) => ({ batch_id: (input[bi] as PooledBatchInput).id, ...winRate(r[0], r[1], r[2]) })),
      pooled: { ...winRate(total[0] as number, total[1] as number, total[2] as number), bootstrap_ci95: pooledBoot.winRates[g] ?? null },
      heterogeneity: heterogeneity(present.map(({ r }) => [r[0], r[1]]), alpha),
    };
  });
  notes.push(...pooledNotes(out, conditions, conditionBatches, input.length));
  const bradleyTerry = fit ? pooledBradleyTerry(fit, anchor, conditions, conditionBatches, pooledBoot) : null;
  return {
    kind: 'pooled',
    generated_at: (options.now ?? new Date()).toISOString(),
    batches: input.map((b) => ({
      id: b.id,
      name: b.name,
      n_judgments: b.table.n,
      n_pairs: b.table.itemNames.length,
      conditions: [...new Set(b.table.comparisons.flatMap((c) => [c.a, c.b]))].sort(),
    })),
    settings: { seed: options.seed, bootstrap: options.bootstrap, alpha },
    heterogeneity_test: HETEROGENEITY_TEST,
    comparisons: out,
    bradley_terry: bradleyTerry,
    notes,
  };
}

/** Bradley–Terry on the pooled scale, with each condition's bootstrap interval and the batches that hold it. */
function pooledBradleyTerry(
  fit: BtResult,
  anchor: string,
  conditions: string[],
  conditionBatches: Map<string, Set<number>>,
  pooledBoot: ReturnType<typeof pooledBootstrap>,
): NonNullable<PooledReport['bradley_terry']> {
  return {
    anchor,
    scale: '1000 + 400*log10(ability / anchor ability)',
    ties: 'half a win each',
    bootstrap: 'pairs resampled within each batch',
    replicates: fit.ok ? pooledBoot.replicates : 0,
    undefined_replicates: fit.ok ? pooledBoot.undefinedFits : 0,
    conditions: conditions.map((condition, i) => ({
      condition,
      score: fit.ok ? (fit.score[i] as number) : null,
      ci95: fit.ok ? (pooledBoot.btCi[i] ?? null) : null,
      batches: [...(conditionBatches.get(condition) as Set<number>)].sort((x, y) => x - y),
    })),
    ...(fit.ok ? {} : { reason: fit.reason }),
  };
}

/** Every batch's pairs as items of the pooled comparisons (keyed by their unordered pair of conditions), and which batches hold each condition. */
function poolItems(input: PooledBatchInput[]): { comparisons: { a: string; b: string }[]; items: Item[]; conditionBatches: Map<string, Set<number>> } {
  // The first batch to hold a comparison sets its a and b.
  const comparisons: { a: string; b: string }[] = [];
  const comparisonIndex = new Map<string, number>();
  const keyOf = (x: string, y: string) => (x < y ? `${x}\u0000${y}` : `${y}\u0000${x}`);
  const items: Item[] = [];
  const conditionBatches = new Map<string, Set<number>>();
  input.forEach((batch, bi) => {
    const t = batch.table;
    const local = t.comparisons.map((c) => {
      const key = keyOf(c.a, c.b);
      let g = comparisonIndex.get(key);
      if (g === undefined) {
        g = comparisons.length;
        comparisonIndex.set(key, g);
        comparisons.push({ a: c.a, b: c.b });
      }
      for (const cond of [c.a, c.b]) conditionBatches.set(cond, (conditionBatches.get(cond) ?? new Set()).add(batch.id));
      return { g, flipped: (comparisons[g] as { a: string }).a !== c.a };
    });
    const counts = new Int32Array(t.itemNames.length * 3);
    for (let j = 0; j < t.n; j++) counts[(t.item[j] as number) * 3 + (t.outcome[j] as number)]! += 1;
    for (let i = 0; i < t.itemNames.length; i++) {
      const { g, flipped } = local[t.itemComparison[i] as number] as { g: number; flipped: boolean };
      const wa = counts[i * 3] as number;
      const wb = counts[i * 3 + 1] as number;
      items.push({ batch: bi, comparison: g, a: flipped ? wb : wa, b: flipped ? wa : wb, tie: counts[i * 3 + 2] as number });
    }
  });
  return { comparisons, items, conditionBatches };
}

/** What a reader must know: batches that disagree, conditions placed on the scale through one batch alone. */
function pooledNotes(out: PooledComparison[], conditions: string[], conditionBatches: Map<string, Set<number>>, nBatches: number): string[] {
  const notes: string[] = [];
  for (const c of out)
    if (c.heterogeneity?.flagged)
      notes.push(
        `${c.a} vs ${c.b}: the batches disagree (chi-square ${c.heterogeneity.chi_square.toFixed(2)}, df ${c.heterogeneity.df}, p = ${c.heterogeneity.p_value.toPrecision(2)}): the pooled win rate averages different answers; read the per-batch rates.`,
      );
  for (const cond of conditions) {
    const inBatches = conditionBatches.get(cond) as Set<number>;
    if (inBatches.size === 1 && nBatches > 1) notes.push(`${cond} appears only in batch ${[...inBatches][0] as number}: it is placed on the pooled scale through the conditions it was compared with there.`);
  }
  return notes;
}

/** Chi-square test of homogeneity on a batches x (wins a, wins b) table; null with fewer than two batches. */
export function heterogeneity(rows: [number, number][], alpha = 0.05): PooledComparison['heterogeneity'] {
  const used = rows.filter(([a, b]) => a + b > 0);
  if (used.length < 2) return null;
  const totalA = used.reduce((s, r) => s + r[0], 0);
  const totalB = used.reduce((s, r) => s + r[1], 0);
  const n = totalA + totalB;
  let chi = 0;
  let minExpected = Infinity;
  for (const [a, b] of used) {
    const size = a + b;
    const ea = (size * totalA) / n;
    const eb = (size * totalB) / n;
    minExpected = Math.min(minExpected, ea, eb);
    if (ea > 0) chi += (a - ea) ** 2 / ea;
    if (eb > 0) chi += (b - eb) ** 2 / eb;
  }
  const df = used.length - 1;
  const p = chiSquareUpperTail(chi, df);
  return {
    chi_square: chi,
    df,
    p_value: p,
    min_expected: minExpected,
    flagged: p < alpha,
    ...(minExpected < 5 ? { note: 'some expected counts are below 5: the chi-square approximation is rough' } : {}),
  };
}

function winsMatrix(conditions: string[], comparisons: { a: string; b: string }[], items: Item[], weight: Int32Array | null): Float64Array {
  const k = conditions.length;
  const w = new Float64Array(k * k);
  const ia = comparisons.map((c) => conditions.indexOf(c.a));
  const ib = comparisons.map((c) => conditions.indexOf(c.b));
  items.forEach((it, x) => {
    const m = weight ? (weight[x] as number) : 1;
    if (m === 0) return;
    const a = ia[it.comparison] as number;
    const b = ib[it.comparison] as number;
    w[a * k + b]! += m * (it.a + it.tie / 2);
    w[b * k + a]! += m * (it.b + it.tie / 2);
  });
  return w;
}

/**
 * The stratified bootstrap: each replicate draws, within every batch, as many of its pairs as it has, with
 * replacement, and computes every comparison's pooled win rate and the Bradley-Terry fit on the same draw. One
 * replicate's weights live at a time, so memory stays at one weight per pair however many replicates.
 */
function pooledBootstrap(
  input: PooledBatchInput[],
  items: Item[],
  comparisons: { a: string; b: string }[],
  bt: { conditions: string[]; anchorIndex: number } | null,
  options: { seed: number; bootstrap: number },
) {
  const byBatch: number[][] = input.map(() => []);
  items.forEach((it, x) => byBatch[it.batch]!.push(x));
  const byComparison: number[][] = comparisons.map(() => []);
  items.forEach((it, x) => byComparison[it.comparison]!.push(x));
  const random = seededRandom(options.seed);
  const rates: number[][] = comparisons.map(() => []);
  const scores: number[][] = (bt?.conditions ?? []).map(() => []);
  let undefinedFits = 0;
  const replicates = items.length > 0 ? options.bootstrap : 0;
  const w = new Int32Array(items.length);
  for (let r = 0; r < replicates; r++) {
    w.fill(0);
    for (const list of byBatch) for (let d = 0; d < list.length; d++) w[list[Math.floor(random() * list.length)] as number]! += 1;
    byComparison.forEach((list, g) => {
      let a = 0;
      let b = 0;
      for (const x of list) {
        const it = items[x] as Item;
        a += (w[x] as number) * it.a;
        b += (w[x] as number) * it.b;
      }
      if (a + b > 0) rates[g]!.push(a / (a + b));
    });
    if (bt) {
      const f = fitBradleyTerry(bt.conditions, winsMatrix(bt.conditions, comparisons, items, w), bt.anchorIndex);
      if (f.ok) f.score.forEach((sc, i) => scores[i]!.push(sc));
      else undefinedFits++;
    }
  }
  const interval = (values: number[]): [number, number] | null => {
    if (values.length === 0) return null;
    const sorted = Float64Array.from(values).sort();
    return [quantileType7(sorted, 0.025), quantileType7(sorted, 0.975)];
  };
  return {
    // A comparison with a single pair in the whole study has nothing to resample (the interval rule, src/analysis/bootstrap.ts).
    winRates: rates.map((values, g) => ((byComparison[g] as number[]).length < 2 ? null : interval(values))),
    btCi: scores.map(interval),
    replicates,
    undefinedFits,
  };
}
