import { invertMatrix } from '../numbers/matrix.js';
import type { Scores } from './cluster-covariance.js';

// Binomial logistic regression by iteratively reweighted least squares (Newton-Raphson on the log-likelihood), on
// rows of successes out of trials with an explicit design matrix (no intercept is added: a caller that wants one
// gives a column of ones). Flat typed arrays keep the loop free of allocations at a million rows (length control
// groups a batch's judgments by pair).

export type LogisticInput = {
  /** Successes per row (0/1 for one observation per row). */
  y: Float64Array;
  /** Trials per row; one each when absent. */
  trials?: Float64Array;
  /** The design, n × p, row-major. */
  x: Float64Array;
  p: number;
};

export type LogisticRegressionFit =
  | {
      coef: Float64Array;
      /** The inverse of the Fisher information at the estimate: the model-based covariance, and the bread of a sandwich. */
      informationInverse: Float64Array;
      iterations: number;
    }
  | { coef: null; reason: string };

/** Coefficients this large mean the likelihood rises without bound: some covariate pattern predicts the outcome perfectly. */
const SEPARATION = 50;

export function fitLogisticRegression(input: LogisticInput, maxIterations = 100): LogisticRegressionFit {
  const { y, trials, p } = input;
  let any = false;
  for (let i = 0; i < y.length; i++) if ((trials ? (trials[i] as number) : 1) > 0) any = true;
  if (!any) return { coef: null, reason: 'no observations' };
  const beta = new Float64Array(p);
  const grad = new Float64Array(p);
  const info = new Float64Array(p * p);
  for (let it = 1; it <= maxIterations; it++) {
    accumulate(input, beta, grad, info);
    const inv = invertMatrix(info, p);
    if (!inv) return { coef: null, reason: 'the design is singular (e.g. no variation in a covariate)' };
    let max = 0;
    for (let a = 0; a < p; a++) {
      let step = 0;
      for (let b = 0; b < p; b++) step += (inv[a * p + b] as number) * (grad[b] as number);
      beta[a]! += step;
      max = Math.max(max, Math.abs(step));
    }
    if (beta.some((b) => Math.abs(b) > SEPARATION)) return { coef: null, reason: 'separation: some covariate pattern predicts the outcome perfectly' };
    if (max < 1e-10) {
      // The information (and so its inverse) at the final estimate, not at the step before it.
      accumulate(input, beta, grad, info);
      return { coef: beta, informationInverse: invertMatrix(info, p) ?? inv, iterations: it };
    }
  }
  return { coef: null, reason: 'did not converge' };
}

/** The score (gradient of the log-likelihood) and the Fisher information at `beta`, written into `grad` and `info`. */
function accumulate({ y, trials, x, p }: LogisticInput, beta: Float64Array, grad: Float64Array, info: Float64Array): void {
  grad.fill(0);
  info.fill(0);
  for (let i = 0; i < y.length; i++) {
    const ti = trials ? (trials[i] as number) : 1;
    if (ti <= 0) continue;
    const mu = fitted(x, p, i, beta);
    const w = ti * mu * (1 - mu);
    const r = (y[i] as number) - ti * mu;
    for (let a = 0; a < p; a++) {
      const xa = x[i * p + a] as number;
      if (xa === 0) continue;
      grad[a]! += r * xa;
      for (let b = 0; b < p; b++) info[a * p + b]! += w * xa * (x[i * p + b] as number);
    }
  }
}

function fitted(x: Float64Array, p: number, i: number, beta: Float64Array): number {
  let eta = 0;
  for (let a = 0; a < p; a++) eta += (beta[a] as number) * (x[i * p + a] as number);
  return 1 / (1 + Math.exp(-eta));
}

/** Each row's score (y_i − t_i μ_i) x_i at `beta`: the meat of a cluster-robust sandwich (cluster-covariance.ts). */
export function logisticScores({ y, trials, x, p }: LogisticInput, beta: Float64Array): Scores {
  const n = y.length;
  const scores = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    const ti = trials ? (trials[i] as number) : 1;
    const r = (y[i] as number) - ti * fitted(x, p, i, beta);
    for (let a = 0; a < p; a++) scores[i * p + a] = r * (x[i * p + a] as number);
  }
  return { scores, n, p };
}
