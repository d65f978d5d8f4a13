// The mean pair score with a variance clustered by rater and by pair (issue 51): a pair's score is
// (votes for a - votes for b) / its judgments, in [-1, 1]; the statistic is a weighted sum of the scores,
// S = sum_i u_i s_i, and its variance is the two-way cluster-robust (sandwich) variance of Cameron, Gelbach & Miller
// (2011, "Robust inference with multiway clustering", J. Bus. Econ. Stat. 29: 238-249). Each judgment contributes
// e_j = u_i (x_j - mean) / k_i to its pair's and to its rater's total (x_j = +1 for a, -1 for b, 0 for a tie); then
//   V = G/(G - 1) sum_r (rater r's total)^2 + sum_i (pair i's total)^2 - sum_j e_j^2,
// the rater-clustered and the pair-clustered sums less the judgments counted in both (a rater judges a pair once).
// Rater clustering carries what independent pair majorities ignore: a rater who leans toward one condition moves
// every pair they judge the same way. The two-way form is not sure to be positive (CGM 2011 say so); when raters'
// totals cancel it can come out below the pair-clustered form, and is then kept at that one, so clustering by rater
// never makes a look bolder than treating the pairs as independent.
//
// Raters are few and unevenly loaded (the first raters of a sequential batch judge up to their cap, later ones fewer),
// and then the t reference with G - 1 degrees of freedom is too generous: its rater part is ruled by the few large
// raters. So the score also carries the effective number of raters of Carter, Schnepel & Steigerwald (2017,
// "Asymptotic behavior of a t-test robust to cluster heterogeneity", Rev. Econ. Stat. 99: 698-709), G* = G / (1 + Γ),
// taken with the within-rater correlation at 1 (their conservative choice), where a rater's part of the variance goes
// as the square of their judgments' weight n_r: G* = (sum_r n_r^2)^2 / sum_r n_r^4. It is G when every rater judged
// alike and near 1 when one rater judged nearly all. Measured (src/analysis/sequential-simulation.ts, looks waiting for
// ten raters): with 40 pairs a rater and leans of SD 0.5, Pocock's type I error was 0.062 against t(G - 1) (4,000
// studies) and 0.052 against t(G* - 1) (20,000; the limit 0.0546).

export type ScoredPair = {
  /** The pair's weight in the statistic (1 for a plain look; fixed inverse-normal weights after a raised maximum). */
  weight: number;
  /** Its valid judgments: the rater (any id) and the vote, +1 for a, -1 for b, 0 for a tie. */
  votes: readonly { rater: number; vote: -1 | 0 | 1 }[];
};

export type ClusteredPairScore = {
  /** sum_i u_i s_i. */
  sum: number;
  /** The weighted mean pair score, sum / sum_i u_i. */
  mean: number;
  /** The two-way clustered variance of `sum`. */
  variance: number;
  /** Its pair-clustered part alone (pairs independent, raters ignored), for the design effect variance / this. */
  pairVariance: number;
  raters: number;
  /** The effective number of raters G* (at most `raters`). */
  effectiveRaters: number;
  pairs: number;
};

export function clusteredPairScore(pairs: readonly ScoredPair[]): ClusteredPairScore {
  let sum = 0;
  let weights = 0;
  for (const p of pairs) {
    if (p.votes.length === 0) continue;
    sum += p.weight * score(p);
    weights += p.weight;
  }
  const mean = weights > 0 ? sum / weights : 0;
  const raterTotals = new Map<number, number>();
  const raterWeights = new Map<number, number>();
  let pairPart = 0;
  let both = 0;
  let used = 0;
  for (const p of pairs) {
    const k = p.votes.length;
    if (k === 0) continue;
    used++;
    pairPart += (p.weight * (score(p) - mean)) ** 2;
    for (const v of p.votes) {
      const e = (p.weight * (v.vote - mean)) / k;
      raterTotals.set(v.rater, (raterTotals.get(v.rater) ?? 0) + e);
      raterWeights.set(v.rater, (raterWeights.get(v.rater) ?? 0) + p.weight / k);
      both += e * e;
    }
  }
  const g = raterTotals.size;
  let raterPart = 0;
  for (const total of raterTotals.values()) raterPart += total * total;
  const twoWay = (g > 1 ? g / (g - 1) : 1) * raterPart + pairPart - both;
  return { sum, mean, variance: Math.max(twoWay, pairPart), pairVariance: pairPart, raters: g, effectiveRaters: effectiveClusters([...raterWeights.values()]), pairs: used };
}

function score(p: ScoredPair): number {
  let total = 0;
  for (const v of p.votes) total += v.vote;
  return total / p.votes.length;
}

/** G* = (sum n^2)^2 / sum n^4 of the clusters' sizes n (0 without clusters). */
export function effectiveClusters(sizes: readonly number[]): number {
  let squares = 0;
  let fourths = 0;
  for (const n of sizes) {
    squares += n * n;
    fourths += n ** 4;
  }
  return fourths > 0 ? Math.min(sizes.length, (squares * squares) / fourths) : 0;
}
