import { binomialTestP } from '../numbers/binomial-test.js';
import { clusteredPairScore, type ScoredPair } from '../numbers/clustered-pair-score.js';
import { normalCdf, normalQuantile } from '../numbers/normal.js';
import { pairMajority } from '../numbers/pair-majority.js';
import { studentTTwoSided } from '../numbers/student-t.js';

// The statistic of one look of a sequential comparison (issue 51; docs/researcher/sequential-batches.md, "The
// statistic"). Pure. Raters are shared between pairs (each judges up to perRaterCap of them), and a rater who leans
// toward one condition moves every pair they judge: treating pair majorities as independent then rejects far more
// often than alpha (0.12 at 20 pairs a rater, 0.21 at 40, with leans of SD 0.5 on the logit scale and K = 3). So the
// look tests the mean pair score with a variance clustered by rater and by pair (src/numbers/clustered-pair-score.ts)
// against Student's t with G* - 1 degrees of freedom, G* the effective number of raters (Cameron, Gelbach & Miller 2008
// and 2011: the t reference with G - 1 degrees of freedom for few clusters; Carter, Schnepel & Steigerwald 2017: G*
// for clusters of uneven size, src/numbers/clustered-pair-score.ts). With fewer than MIN_CLUSTERS raters (or pairs) a clustered
// variance cannot be estimated: the look falls back on the exact test of pair majorities, whose inference is then
// conditional on the raters who took part (it says what these raters prefer, not what raters like them would).

/** Below this many distinct raters (or completed pairs) the clustered variance is not used (CGM 2008: under 10 clusters it runs too small). */
export const MIN_CLUSTERS = 10;

export type StatisticKind = 'rater-clustered' | 'pair-majorities';

export type LookStatistic = {
  statistic: StatisticKind;
  /** Why this statistic, in words for the report. */
  reason: string;
  pValue: number;
  /** |z| of the p-value, -Phi^-1(p / 2): what the z-scale bounds are compared with. */
  z: number;
  /** Completed pairs with at least one valid judgment, and their majorities. */
  completed: number;
  winsA: number;
  winsB: number;
  ties: number;
  raters: number;
  /** Degrees of freedom of the t reference (rater-clustered only). */
  df: number | null;
  /** The weighted mean pair score, in [-1, 1] (positive: a preferred), and its standard error (rater-clustered only). */
  estimate: number;
  standardError: number | null;
  /** Clustered variance over the variance with pairs independent (1: raters add nothing). */
  designEffect: number | null;
  /**
   * The observed information of the mean pair score, 1 / its variance (Jennison & Turnbull 2000, 7.2): with the
   * rater-clustered variance when raters are enough, else with the pairs' variance. The looks' correlations are read
   * from it: with raters who lean, each look's statistic shares the raters of the looks before it, and its
   * correlation with them is above what the pairs' counts say (0.77 against 0.71 from look 1 to 2 of 5, with 20
   * pairs a rater and leans of SD 0.5), as 1 / variance gives it (0.76).
   */
  observedInformation: number;
};

const zOf = (p: number) => {
  const z = Math.min(40, -normalQuantile(p / 2));
  return Number.isFinite(z) ? z : 40;
};

/** The look's statistic from the completed pairs' valid judgments, each pair with its weight. */
export function lookStatistic(pairs: readonly ScoredPair[]): LookStatistic {
  let winsA = 0;
  let winsB = 0;
  let ties = 0;
  for (const p of pairs) {
    if (p.votes.length === 0) continue;
    const outcome = pairMajority(p.votes.filter((v) => v.vote === 1).length, p.votes.filter((v) => v.vote === -1).length);
    if (outcome === 'a') winsA++;
    else if (outcome === 'b') winsB++;
    else ties++;
  }
  const counts = { completed: winsA + winsB + ties, winsA, winsB, ties };
  const score = clusteredPairScore(pairs);
  const clusters = Math.min(score.raters, score.pairs);
  const weights = pairs.reduce((total, p) => total + (p.votes.length > 0 ? p.weight : 0), 0);
  const observedInformation = informationOf(pairs, clusters >= MIN_CLUSTERS ? score.variance : score.pairVariance, weights);
  if (clusters >= MIN_CLUSTERS) {
    // The effective number of raters, whole (studentTTwoSided takes whole degrees of freedom), at least 2.
    const df = Math.max(1, Math.floor(Math.min(clusters, score.effectiveRaters + 1e-9)) - 1);
    const t = score.variance > 0 ? score.sum / Math.sqrt(score.variance) : score.sum === 0 ? 0 : Infinity;
    const pValue = studentTTwoSided(t, df);
    return {
      statistic: 'rater-clustered',
      reason: `${score.raters} raters over ${score.pairs} pairs: the mean pair score with a variance clustered by rater and pair, against t with ${df} degrees of freedom (${df + 1 < score.raters ? `the effective number of raters, ${score.effectiveRaters.toFixed(1)} of ${score.raters}, as their judgments are unevenly spread, less one` : 'raters less one'})`,
      pValue,
      z: zOf(pValue),
      ...counts,
      raters: score.raters,
      df,
      estimate: score.mean,
      standardError: Math.sqrt(score.variance) / weights,
      designEffect: score.pairVariance > 0 ? score.variance / score.pairVariance : null,
      observedInformation,
    };
  }
  return { ...majorityTest(pairs, counts), raters: score.raters, estimate: score.mean, observedInformation };
}

/** (sum of weights)^2 / variance; where the variance vanishes (every judgment alike), the scores' null variance. */
function informationOf(pairs: readonly ScoredPair[], variance: number, weights: number): number {
  if (variance > 0) return (weights * weights) / variance;
  let nullVariance = 0;
  for (const p of pairs) {
    if (p.votes.length === 0) continue;
    const score = p.votes.reduce((total, v) => total + v.vote, 0) / p.votes.length;
    nullVariance += p.weight * p.weight * score * score;
  }
  return nullVariance > 0 ? (weights * weights) / nullVariance : 0;
}

/**
 * Too few raters: the pairs are taken as independent, so the inference holds for these raters only. With equal
 * weights, the exact two-sided binomial test of the majorities; with the fixed unequal weights of a raised maximum,
 * the normal test of the weighted majorities (their null variance, each majority +1 or -1 with chance 1/2).
 */
function majorityTest(pairs: readonly ScoredPair[], counts: Pick<LookStatistic, 'completed' | 'winsA' | 'winsB' | 'ties'>): Omit<LookStatistic, 'raters' | 'estimate' | 'observedInformation'> {
  const raters = new Set(pairs.flatMap((p) => p.votes.map((v) => v.rater))).size;
  const reason = `only ${raters} rater${raters === 1 ? '' : 's'} over ${counts.completed} pairs, too few for a clustered variance (${MIN_CLUSTERS} needed): the test of pair majorities, conditional on these raters`;
  const weights = new Set(pairs.map((p) => p.weight));
  let pValue: number;
  if (weights.size <= 1) pValue = binomialTestP(counts.winsA, counts.winsA + counts.winsB) ?? 1;
  else {
    let sum = 0;
    let variance = 0;
    for (const p of pairs) {
      const y = Math.sign(p.votes.reduce((total, v) => total + v.vote, 0));
      sum += p.weight * y;
      variance += p.weight * p.weight * y * y;
    }
    pValue = variance > 0 ? 2 * normalCdf(-Math.abs(sum) / Math.sqrt(variance)) : 1;
  }
  return { statistic: 'pair-majorities', reason, pValue, z: zOf(pValue), ...counts, df: null, standardError: null, designEffect: null };
}
