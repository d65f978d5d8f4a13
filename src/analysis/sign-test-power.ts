import { logBinomialPmf } from '../numbers/binomial-test.js';

// Exact power of the two-sided sign test (the exact binomial test of p = 0.5 that the analysis reports as `p_value`).
// Under p = 0.5 the binomial is symmetric, so the exact two-sided test at level alpha rejects when X <= c or
// X >= n - c, with c the largest count whose two tails together hold at most alpha. Power is the probability of that
// region when the true share is p1: a direct sum of binomial probabilities, no normal approximation.

/** The largest c with 2 * P(X <= c | n, 1/2) <= alpha, or -1 when no outcome of n trials can reach the level. */
export function signTestCriticalValue(n: number, alpha: number): number {
  let tail = 0;
  let c = -1;
  for (let k = 0; 2 * k < n; k++) {
    tail += Math.exp(logBinomialPmf(k, n, 0.5));
    // The 1e-12 slack keeps a tail equal to alpha in exact arithmetic on the rejecting side.
    if (2 * tail <= alpha * (1 + 1e-12)) c = k;
    else break;
  }
  return c;
}

/** Exact power of the two-sided sign test with n decisive outcomes when the true share preferring a is p1. */
export function signTestPower(n: number, p1: number, alpha: number): number {
  const c = signTestCriticalValue(n, alpha);
  if (c < 0) return 0;
  let power = 0;
  for (let k = 0; k <= c; k++) power += Math.exp(logBinomialPmf(k, n, p1)) + Math.exp(logBinomialPmf(n - k, n, p1));
  return Math.min(1, power);
}

export type SampleSizeResult = { n: number; power: number } | null;

/**
 * The smallest number of decisive outcomes whose exact power reaches `power`. Exact power is saw-toothed in n (the
 * critical value moves in whole steps), so a few larger n can fall back below the target; the first n that reaches
 * it is reported, as exact power tables do. Null when even `maxN` does not reach it.
 */
export function signTestSampleSize(p1: number, alpha: number, power: number, maxN = 200_000): SampleSizeResult {
  if (!(p1 > 0 && p1 < 1) || p1 === 0.5) return null;
  // The normal approximation is a lower bound to start from, minus a margin, so the scan stays short for small effects.
  const z = (q: number) => inverseNormal(q);
  const approx = ((z(1 - alpha / 2) * 0.5 + z(power) * Math.sqrt(p1 * (1 - p1))) / Math.abs(p1 - 0.5)) ** 2;
  for (let n = Math.max(1, Math.floor(approx * 0.8) - 10); n <= maxN; n++) {
    const achieved = signTestPower(n, p1, alpha);
    if (achieved >= power) return { n, power: achieved };
  }
  return null;
}

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function inverseNormal(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  const poly = (co: number[], x: number) => co.reduce((acc, v) => acc * x + v, 0);
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}
