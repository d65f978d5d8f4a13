import { normalCdf, normalQuantile } from '../numbers/normal.js';

// The two one-sided tests of equivalence (Schuirmann 1987, J. Pharmacokinetics and Biopharmaceutics 15(6); Lakens
// 2017, "Equivalence tests", Social Psychological and Personality Science 8(4)): an estimate is shown to lie within
// (low, high) when both H0: θ ≤ low and H0: θ ≥ high are rejected at level alpha, i.e. when the 1 − 2·alpha interval
// lies inside the bounds. A non-significant difference from a value is not this: it says only that the data cannot
// tell, which little data always does.

export type EquivalenceTest = {
  low: number;
  high: number;
  alpha: number;
  /** One-sided p of H0: θ ≤ low (z = (estimate − low) / se). */
  p_lower: number;
  /** One-sided p of H0: θ ≥ high. */
  p_upper: number;
  /** The larger of the two: the equivalence test's p. */
  p: number;
  /** The 1 − 2·alpha interval (90% at alpha 0.05) whose inclusion in the bounds is the same test. */
  ci: [number, number];
  equivalent: boolean;
};

/** TOST on a normally distributed estimate with standard error `se` (a z test each side). */
export function equivalenceTest(estimate: number, se: number, low: number, high: number, alpha = 0.05): EquivalenceTest {
  const pLower = normalCdf((low - estimate) / se);
  const pUpper = normalCdf((estimate - high) / se);
  const z = normalQuantile(1 - alpha);
  const p = Math.max(pLower, pUpper);
  return { low, high, alpha, p_lower: pLower, p_upper: pUpper, p, ci: [estimate - z * se, estimate + z * se], equivalent: p < alpha };
}
