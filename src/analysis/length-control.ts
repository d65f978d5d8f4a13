import { fitLogisticRegression } from './logistic-regression.js';
import { Z95 } from './wilson.js';

export type LogisticFit = { coef: number[]; se: number[]; iterations: number } | { coef: null; reason: string };

/** The fit's reasons in the words of judgments. */
const GROUPED_REASONS: Record<string, string> = {
  'no observations': 'no decisive judgments',
  'separation: some covariate pattern predicts the outcome perfectly': 'separation: one side wins every judgment at some covariate value',
};

/**
 * Binomial logistic regression on grouped rows: successes[i] of trials[i] with covariates x[i * k .. i * k + k) (an
 * intercept is added). Grouped rows keep a 1M-judgment batch to one row per pair.
 */
export function fitLogisticGrouped(successes: Float64Array, trials: Float64Array, x: Float64Array, k: number, maxIterations = 100): LogisticFit {
  const n = successes.length;
  const p = k + 1;
  const design = new Float64Array(n * p);
  for (let i = 0; i < n; i++) {
    design[i * p] = 1;
    for (let a = 0; a < k; a++) design[i * p + a + 1] = x[i * k + a] as number;
  }
  const fit = fitLogisticRegression({ y: successes, trials, x: design, p }, maxIterations);
  if (fit.coef === null) return { coef: null, reason: GROUPED_REASONS[fit.reason] ?? fit.reason };
  const inv = fit.informationInverse;
  return { coef: Array.from(fit.coef), se: Array.from({ length: p }, (_, a) => Math.sqrt(inv[a * p + a] as number)), iterations: fit.iterations };
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
