import { holmAdjust } from './holm.js';
import { fitLogisticRegression } from './logistic-regression.js';
import { normalCdf } from '../numbers/normal.js';

// The logistic model of a realism batch's answers with rater and scenario effects (issue 53): "the synthetic one was
// taken for the real one" on one dummy per synthetic condition plus a fixed effect per rater and per scenario (the
// first of each left out), so conditions are compared within raters and within scenarios. Its condition contrasts are
// log odds ratios of the error rate.
//
// A rater (or scenario) all of whose answers are the same has an infinite fixed effect and tells nothing about the
// conditions: such groups are left out, again until none is (the rule of R's fixest and Stata's clogit; the estimates
// of the rest are the limit of the full model's). "When there are enough": the fit is made only when at least
// MIN_ROWS_PER_PARAMETER answers remain per parameter. With few answers per rater, fixed effects bias the contrasts
// away from zero (the incidental-parameter problem, Neyman and Scott 1948): the docs say to read it beside the
// clustered comparison, not instead of it.

export const MIN_ROWS_PER_PARAMETER = 5;

/**
 * Newton's method inverts the p × p information at each step (p³ work): 400 parameters take about a tenth of a second
 * a step; a study with more raters and scenarios than that is left to the clustered comparison, which needs no fit.
 */
export const MAX_PARAMETERS = 400;

export type FixedEffectsInput = { error: Float64Array; condition: Int32Array; conditions: string[]; rater: Int32Array; scenario: Int32Array };

export type FixedEffectsLogit = {
  rows: number;
  dropped_rows: number;
  raters: number;
  scenarios: number;
  parameters: number;
  /** Error-rate log odds ratio of a over b within raters and scenarios, model-based standard error, Holm over the pairs. */
  pairwise: { a: string; b: string; log_odds_ratio: number; se: number; p: number; p_holm: number }[];
} | { reason: string };

/** The answers kept: those of raters and scenarios whose answers are not all the same, again until none is. */
export function keptForFixedEffects(error: Float64Array, rater: Int32Array, scenario: Int32Array): number[] {
  let kept = Array.from(error.keys());
  for (;;) {
    const before = kept.length;
    for (const group of [rater, scenario]) {
      const seen = new Map<number, number>();
      for (const i of kept) seen.set(group[i] as number, (seen.get(group[i] as number) ?? 0) | ((error[i] as number) === 1 ? 2 : 1));
      kept = kept.filter((i) => seen.get(group[i] as number) === 3);
    }
    if (kept.length === before) return kept;
  }
}

export function fixedEffectsLogit(input: FixedEffectsInput): FixedEffectsLogit {
  const { error, condition, conditions, rater, scenario } = input;
  const c = conditions.length;
  if (c < 2) return { reason: 'needs at least two synthetic conditions to compare' };
  const kept = keptForFixedEffects(error, rater, scenario);
  const present = new Set(kept.map((i) => condition[i] as number));
  if (present.size < c) return { reason: 'a condition has no answer left once raters and scenarios whose answers are all the same are left out' };
  const code = (group: Int32Array) => {
    const names = [...new Set(kept.map((i) => group[i] as number))].sort((x, y) => x - y);
    return { count: names.length, index: new Map(names.map((g, k) => [g, k])) };
  };
  const raters = code(rater);
  const scenarios = code(scenario);
  const p = c + raters.count - 1 + scenarios.count - 1;
  if (p > MAX_PARAMETERS) return { reason: `too many raters and scenarios for a fixed effect each: ${p} parameters (at most ${MAX_PARAMETERS}); the clustered comparison above needs none` };
  if (kept.length < MIN_ROWS_PER_PARAMETER * p)
    return { reason: `too few answers for rater and scenario effects: ${kept.length} answers for ${p} parameters (needs ${MIN_ROWS_PER_PARAMETER} per parameter)` };
  const x = new Float64Array(kept.length * p);
  const y = new Float64Array(kept.length);
  kept.forEach((i, row) => {
    y[row] = error[i] as number;
    x[row * p + (condition[i] as number)] = 1;
    const r = raters.index.get(rater[i] as number) as number;
    const s = scenarios.index.get(scenario[i] as number) as number;
    if (r > 0) x[row * p + c + r - 1] = 1;
    if (s > 0) x[row * p + c + raters.count - 1 + s - 1] = 1;
  });
  const fit = fitLogisticRegression({ y, x, p });
  if (fit.coef === null) return { reason: fit.reason };
  const { coef, informationInverse: v } = fit;
  const pairs: { a: string; b: string; log_odds_ratio: number; se: number; p: number }[] = [];
  for (let i = 0; i < c; i++)
    for (let j = i + 1; j < c; j++) {
      const d = (coef[i] as number) - (coef[j] as number);
      const se = Math.sqrt((v[i * p + i] as number) + (v[j * p + j] as number) - 2 * (v[i * p + j] as number));
      pairs.push({ a: conditions[i] as string, b: conditions[j] as string, log_odds_ratio: d, se, p: 2 * normalCdf(-Math.abs(d / se)) });
    }
  const holm = holmAdjust(pairs.map((q) => q.p));
  return {
    rows: kept.length,
    dropped_rows: error.length - kept.length,
    raters: raters.count,
    scenarios: scenarios.count,
    parameters: p,
    pairwise: pairs.map((q, k) => ({ ...q, p_holm: holm[k] as number })),
  };
}
