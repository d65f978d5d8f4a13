import { sandwich } from '../numbers/matrix.js';
import { Z95 } from './wilson.js';

// Cluster-robust covariance of regression estimates, one-way and two-way (Cameron, Gelbach and Miller 2011, "Robust
// inference with multiway clustering", J. Business & Economic Statistics 29(2)): in a realism batch one rater's
// answers share that rater's eye and one scenario's pairs share that scenario's giveaways, so neither the answers nor
// the raters' answers are independent, and the clusters cross (every rater sees many scenarios and the reverse).
//
// For estimates with scores s_i (one row per observation: x_i times its residual) and bread B (the inverse of X'X, or
// of the information for a logistic fit): V_G = c_G · B (Σ_g S_g S_g') B with S_g the sum of the scores in cluster g,
// and the two-way V = V_rater + V_scenario − V_(rater ∩ scenario). c_G = G/(G − 1) · (n − 1)/(n − p), the small-sample
// factor of each term as statsmodels' cov_cluster and cov_cluster_2groups apply it (and Stata's).

export type Scores = { scores: Float64Array; n: number; p: number };

/** One-way cluster-robust covariance (p × p), or null with fewer than two clusters. `cluster` codes are 0..G-1. */
export function clusterCovariance({ scores, n, p }: Scores, bread: Float64Array, cluster: Int32Array): Float64Array | null {
  let groups = 0;
  for (let i = 0; i < n; i++) groups = Math.max(groups, (cluster[i] as number) + 1);
  const sums = new Float64Array(groups * p);
  const members = new Int32Array(groups);
  for (let i = 0; i < n; i++) {
    const g = cluster[i] as number;
    members[g]! += 1;
    for (let a = 0; a < p; a++) sums[g * p + a]! += scores[i * p + a] as number;
  }
  let used = 0;
  const meat = new Float64Array(p * p);
  for (let g = 0; g < groups; g++) {
    // A code with no observation is no cluster (codes need not be dense).
    if (members[g] === 0) continue;
    used++;
    for (let a = 0; a < p; a++) {
      const sa = sums[g * p + a] as number;
      for (let b = 0; b < p; b++) meat[a * p + b]! += sa * (sums[g * p + b] as number);
    }
  }
  if (used < 2 || n <= p) return null;
  const factor = (used / (used - 1)) * ((n - 1) / (n - p));
  const v = sandwich(bread, meat, p);
  for (let k = 0; k < v.length; k++) v[k]! *= factor;
  return v;
}

/** The intersection of two clusterings: one code per (a, b) cell that has an observation. */
export function intersectClusters(a: Int32Array, b: Int32Array): Int32Array {
  const codes = new Map<number, number>();
  let width = 0;
  for (const v of b) width = Math.max(width, v + 1);
  const out = new Int32Array(a.length);
  for (let i = 0; i < a.length; i++) {
    const key = (a[i] as number) * width + (b[i] as number);
    let code = codes.get(key);
    if (code === undefined) {
      code = codes.size;
      codes.set(key, code);
    }
    out[i] = code;
  }
  return out;
}

export type TwoWayCovariance = {
  covariance: Float64Array;
  /**
   * True when V_a + V_b − V_ab had a variance of zero or below (possible in small samples, Cameron, Gelbach and Miller
   * 2011, section 2.3): the larger of the two one-way covariances is given instead, which is conservative.
   */
  one_way_fallback: boolean;
};

/** Two-way cluster-robust covariance (rater and scenario); null when either clustering has fewer than two clusters. */
export function twoWayClusterCovariance(s: Scores, bread: Float64Array, a: Int32Array, b: Int32Array): TwoWayCovariance | null {
  const va = clusterCovariance(s, bread, a);
  const vb = clusterCovariance(s, bread, b);
  const vab = clusterCovariance(s, bread, intersectClusters(a, b));
  if (!va || !vb || !vab) return null;
  const v = va.map((x, k) => x + (vb[k] as number) - (vab[k] as number));
  const p = s.p;
  for (let k = 0; k < p; k++) {
    if ((v[k * p + k] as number) > 0) continue;
    const trace = (m: Float64Array) => Array.from({ length: p }, (_, j) => m[j * p + j] as number).reduce((x, y) => x + y, 0);
    return { covariance: trace(va) >= trace(vb) ? va : vb, one_way_fallback: true };
  }
  return { covariance: v, one_way_fallback: false };
}

/**
 * Means of `y` within groups (codes 0..p-1) and their two-way cluster-robust covariance: the linear probability model
 * with one dummy per group and no intercept, whose estimates are the group means and whose scores are x_i times the
 * residual y_i − mean of its group (statsmodels: OLS(y, dummies).fit(cov_type="cluster", groups=[rater, scenario])).
 */
export function groupMeansTwoWay(y: Float64Array, group: Int32Array, p: number, a: Int32Array, b: Int32Array): { n: number[]; means: number[]; covariance: TwoWayCovariance | null } {
  const n = y.length;
  const counts = new Array<number>(p).fill(0);
  const sums = new Array<number>(p).fill(0);
  for (let i = 0; i < n; i++) {
    const g = group[i] as number;
    counts[g]! += 1;
    sums[g]! += y[i] as number;
  }
  const means = sums.map((s, g) => (counts[g] ? s / (counts[g] as number) : NaN));
  const scores = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    const g = group[i] as number;
    scores[i * p + g] = (y[i] as number) - (means[g] as number);
  }
  const bread = new Float64Array(p * p);
  for (let g = 0; g < p; g++) bread[g * p + g] = counts[g] ? 1 / (counts[g] as number) : 0;
  return { n: counts, means, covariance: counts.some((c) => c === 0) ? null : twoWayClusterCovariance({ scores, n, p }, bread, a, b) };
}

export type ClusteredMean = {
  n: number;
  mean: number | null;
  /** Two-way cluster-robust standard error; null with fewer than two raters or two scenarios. */
  se: number | null;
  /** mean ± z·se, clipped to [0, 1] (a share cannot leave it). */
  ci95: [number, number] | null;
  one_way_fallback: boolean;
};

/** A share (mean of 0/1 values) with its two-way cluster-robust 95% interval. */
export function twoWayClusteredMean(y: Float64Array, a: Int32Array, b: Int32Array): ClusteredMean {
  const n = y.length;
  if (n === 0) return { n, mean: null, se: null, ci95: null, one_way_fallback: false };
  const fit = groupMeansTwoWay(y, new Int32Array(n), 1, a, b);
  const mean = fit.means[0] as number;
  const variance = fit.covariance?.covariance[0];
  const se = variance === undefined ? null : Math.sqrt(variance);
  return {
    n,
    mean,
    se,
    ci95: se === null ? null : [Math.max(0, mean - Z95 * se), Math.min(1, mean + Z95 * se)],
    one_way_fallback: fit.covariance?.one_way_fallback ?? false,
  };
}
