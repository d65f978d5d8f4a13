import { Z95 } from './wilson.js';

export type LogisticFit = { coef: number[]; se: number[]; iterations: number } | { coef: null; reason: string };

/**
 * Binomial logistic regression by iteratively reweighted least squares on grouped rows: successes[i] of trials[i]
 * with covariates x[i * k .. i * k + k) (an intercept is added). Grouped rows keep a 1M-judgment batch to one row
 * per pair; flat typed arrays keep the loop free of allocations.
 */
export function fitLogisticGrouped(successes: Float64Array, trials: Float64Array, x: Float64Array, k: number, maxIterations = 100): LogisticFit {
  const n = successes.length;
  const p = k + 1;
  let any = false;
  for (let i = 0; i < n; i++) if ((trials[i] as number) > 0) any = true;
  if (!any) return { coef: null, reason: 'no decisive judgments' };
  const beta = new Float64Array(p);
  const xi = new Float64Array(p);
  xi[0] = 1;
  for (let it = 1; it <= maxIterations; it++) {
    const grad = new Float64Array(p);
    const info = new Float64Array(p * p);
    for (let i = 0; i < n; i++) {
      const ti = trials[i] as number;
      if (ti <= 0) continue;
      for (let a = 0; a < k; a++) xi[a + 1] = x[i * k + a] as number;
      let eta = 0;
      for (let a = 0; a < p; a++) eta += (beta[a] as number) * (xi[a] as number);
      const mu = 1 / (1 + Math.exp(-eta));
      const w = ti * mu * (1 - mu);
      const r = (successes[i] as number) - ti * mu;
      for (let a = 0; a < p; a++) {
        grad[a]! += r * (xi[a] as number);
        for (let b = 0; b < p; b++) info[a * p + b]! += w * (xi[a] as number) * (xi[b] as number);
      }
    }
    const inv = invertSmall(info, p);
    if (!inv) return { coef: null, reason: 'the design is singular (e.g. no variation in the covariate)' };
    let max = 0;
    for (let a = 0; a < p; a++) {
      let step = 0;
      for (let b = 0; b < p; b++) step += (inv[a * p + b] as number) * (grad[b] as number);
      beta[a]! += step;
      max = Math.max(max, Math.abs(step));
    }
    if (Array.from(beta).some((b) => Math.abs(b) > 50)) return { coef: null, reason: 'separation: one side wins every judgment at some covariate value' };
    if (max < 1e-12) return { coef: Array.from(beta), se: Array.from({ length: p }, (_, a) => Math.sqrt(inv[a * p + a] as number)), iterations: it };
  }
  return { coef: null, reason: 'did not converge' };
}

/** Convenience form of fitLogisticGrouped for a handful of rows. */
export function fitLogistic(rows: { successes: number; trials: number; x: number[] }[], maxIterations = 100): LogisticFit {
  const k = rows[0]?.x.length ?? 0;
  return fitLogisticGrouped(
    Float64Array.from(rows, (r) => r.successes),
    Float64Array.from(rows, (r) => r.trials),
    Float64Array.from(rows.flatMap((r) => r.x)),
    k,
    maxIterations,
  );
}

export type LengthControl = {
  raw_win_rate_a: number | null;
  /** Win rate of a predicted when both dialogues have the same words per turn (the intercept), with a Wald interval. */
  adjusted_win_rate_a: number | null;
  ci95: [number, number] | null;
  /** Change in log-odds of a winning per unit of (a - b) / (a + b) words per turn, Chatbot Arena's style feature. */
  length_coef: number | null;
  length_coef_se: number | null;
  mean_words_per_turn_a: number | null;
  mean_words_per_turn_b: number | null;
  n: number;
  reason?: string;
};

/**
 * Win rate controlled for verbosity (after Chatbot Arena's style control, Li et al. 2024): logistic regression of
 * "a won" on the normalised difference in words per turn, over decisive judgments grouped by pair.
 */
export function lengthControlledWinRate(items: { winsA: Float64Array; winsB: Float64Array; aWords: Float64Array; bWords: Float64Array }): LengthControl {
  const m = items.winsA.length;
  const successes = new Float64Array(m);
  const trials = new Float64Array(m);
  const x = new Float64Array(m);
  let wa = 0;
  let n = 0;
  let sumA = 0;
  let sumB = 0;
  let used = 0;
  for (let i = 0; i < m; i++) {
    const a = items.winsA[i] as number;
    const b = items.winsB[i] as number;
    const aw = items.aWords[i] as number;
    const bw = items.bWords[i] as number;
    if (a + b === 0 || !Number.isFinite(aw) || !Number.isFinite(bw) || aw + bw <= 0) continue;
    successes[used] = a;
    trials[used] = a + b;
    x[used] = (aw - bw) / (aw + bw);
    used++;
    wa += a;
    n += a + b;
    sumA += aw;
    sumB += bw;
  }
  const base = {
    raw_win_rate_a: n > 0 ? wa / n : null,
    mean_words_per_turn_a: used > 0 ? sumA / used : null,
    mean_words_per_turn_b: used > 0 ? sumB / used : null,
    n,
  };
  const empty = { adjusted_win_rate_a: null, ci95: null, length_coef: null, length_coef_se: null };
  if (used === 0) return { ...base, ...empty, reason: 'no decisive judgment with words per turn for both dialogues' };
  const fit = fitLogisticGrouped(successes.subarray(0, used), trials.subarray(0, used), x.subarray(0, used), 1);
  if (fit.coef === null) return { ...base, ...empty, reason: fit.reason };
  const [b0, b1] = fit.coef as [number, number];
  const [s0, s1] = fit.se as [number, number];
  const sig = (t: number) => 1 / (1 + Math.exp(-t));
  return { ...base, adjusted_win_rate_a: sig(b0), ci95: [sig(b0 - Z95 * s0), sig(b0 + Z95 * s0)], length_coef: b1, length_coef_se: s1 };
}

/** Gauss-Jordan inverse of a small matrix; null when (nearly) singular. */
function invertSmall(a: Float64Array, m: number): Float64Array | null {
  const A = Float64Array.from(a);
  const I = new Float64Array(m * m);
  for (let i = 0; i < m; i++) I[i * m + i] = 1;
  let scale = 0;
  for (const v of A) scale = Math.max(scale, Math.abs(v));
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(A[r * m + col] as number) > Math.abs(A[pivot * m + col] as number)) pivot = r;
    const pv = A[pivot * m + col] as number;
    if (Math.abs(pv) <= 1e-12 * Math.max(1, scale)) return null;
    for (let c = 0; c < m; c++) {
      [A[col * m + c], A[pivot * m + c]] = [A[pivot * m + c] as number, A[col * m + c] as number];
      [I[col * m + c], I[pivot * m + c]] = [I[pivot * m + c] as number, I[col * m + c] as number];
    }
    const d = A[col * m + col] as number;
    for (let c = 0; c < m; c++) {
      A[col * m + c]! /= d;
      I[col * m + c]! /= d;
    }
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = A[r * m + col] as number;
      if (f === 0) continue;
      for (let c = 0; c < m; c++) {
        A[r * m + c]! -= f * (A[col * m + c] as number);
        I[r * m + c]! -= f * (I[col * m + c] as number);
      }
    }
  }
  return I;
}
