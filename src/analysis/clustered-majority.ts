// A comparison's win rate on its primary unit, the pair majority, with a 95% interval whose variance accounts for the
// raters the pairs share (issue 51). A pair counts for a when more of its raters chose a than b, for b the other way,
// and is left out when they split evenly: pairMajority, the sequential rule's own definition, so the sensitivity
// analysis tests what the batch's design tests. Pairs are not independent: one rater judges many of them, and a rater
// who leans towards one condition moves all of theirs. The variance is the cluster-robust one for observations that
// belong to several clusters at once (each pair to each of its raters): the sum of e_i e_j over every two pairs that
// share a rater, and each pair with itself, divided by the square of the decisive pairs (Aronow, Samii & Assenova 2015,
// "Cluster-robust variance estimation for dyadic data", Political Analysis 23(4), eq. 5, with raters as the units),
// times G / (G - 1) over the G raters (the usual small-sample factor, CR1). With one rater per pair it is the one-way
// cluster-robust variance by rater (what statsmodels computes with cov_type="cluster"); with each rater judging one
// pair, the binomial variance. The interval is Wilson's at the effective number of pairs D / deff (deff the variance
// over the binomial one, at least 1), as Korn & Graubard (1998) do for survey proportions.
import { pairMajority } from '../numbers/pair-majority.js';
import { wilsonInterval } from './wilson.js';

/** One judgment of the comparison: its pair, its rater, and whether it chose a (0), b (1) or a tie (2). */
export type MajorityJudgment = { item: number; rater: number; outcome: number };

export type ClusteredMajority = {
  /** Pairs with a judgment, those with a majority, and the raters who judged them. */
  pairs: number;
  decisive: number;
  raters: number;
  win_rate_a: number | null;
  /** Standard error of win_rate_a (rater-clustered); null without two raters or a decisive pair. */
  se: number | null;
  design_effect: number | null;
  ci95: [number, number] | null;
};

type Pair = { a: number; b: number; raters: Set<number> };

function pairsOf(rows: readonly MajorityJudgment[]): Map<number, Pair> {
  const pairs = new Map<number, Pair>();
  for (const row of rows) {
    let pair = pairs.get(row.item);
    if (!pair) pairs.set(row.item, (pair = { a: 0, b: 0, raters: new Set() }));
    if (row.outcome === 0) pair.a += 1;
    else if (row.outcome === 1) pair.b += 1;
    pair.raters.add(row.rater);
  }
  return pairs;
}

/** The pair-majority win rate of a and its rater-clustered 95% interval. */
export function clusteredMajorityWinRate(rows: readonly MajorityJudgment[]): ClusteredMajority {
  const pairs = pairsOf(rows);
  const decisive: { y: number; raters: Set<number> }[] = [];
  for (const pair of pairs.values()) {
    const outcome = pairMajority(pair.a, pair.b);
    if (outcome !== 'tie') decisive.push({ y: outcome === 'a' ? 1 : 0, raters: pair.raters });
  }
  const raters = new Set(rows.map((r) => r.rater)).size;
  const d = decisive.length;
  const none = { pairs: pairs.size, decisive: d, raters, se: null, design_effect: null };
  if (d === 0) return { ...none, win_rate_a: null, ci95: null };
  const p = decisive.reduce((s, x) => s + x.y, 0) / d;
  const variance = sharedRaterVariance(decisive, p);
  if (variance === null) return { ...none, win_rate_a: p, ci95: null };
  const binomial = (p * (1 - p)) / d;
  const deff = binomial > 0 ? Math.max(1, variance / binomial) : 1;
  const effective = d / deff;
  return { ...none, win_rate_a: p, se: Math.sqrt(variance), design_effect: deff, ci95: wilsonInterval(p * effective, effective) };
}

/**
 * (G / (G - 1)) (1 / D^2) sum over pairs i, j that are the same pair or share a rater of e_i e_j, e = y - p; null with
 * fewer than two raters (no cluster-robust variance exists).
 */
function sharedRaterVariance(decisive: readonly { y: number; raters: Set<number> }[], p: number): number | null {
  const byRater = new Map<number, number[]>();
  decisive.forEach((x, i) => x.raters.forEach((r) => byRater.set(r, [...(byRater.get(r) ?? []), i])));
  const g = byRater.size;
  if (g < 2) return null;
  const residual = decisive.map((x) => x.y - p);
  // For each pair, the pairs linked to it (itself and every pair of each of its raters), each counted once.
  const seen = new Int32Array(decisive.length).fill(-1);
  let sum = 0;
  decisive.forEach((x, i) => {
    let linked = 0;
    for (const r of x.raters) {
      for (const j of byRater.get(r) as number[]) {
        if (seen[j] === i) continue;
        seen[j] = i;
        linked += residual[j] as number;
      }
    }
    sum += (residual[i] as number) * linked;
  });
  const d = decisive.length;
  return Math.max(0, (g / (g - 1)) * (sum / (d * d)));
}
