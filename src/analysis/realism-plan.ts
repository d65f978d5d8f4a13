import { formatMoney } from '../batches/pay.js';
import { normalCdf, normalQuantile } from '../numbers/normal.js';

// Planning a realism batch (issue 53; `simarena plan --realism --margin M`): how many pairs and raters the equivalence
// test of a which-is-real question needs to show, at a given power, that raters cannot tell a synthetic condition
// from the real one better than 0.5 ± M.
//
// The test (realism-section.ts): two one-sided z tests at level alpha each, on the detection accuracy p̂ with its
// standard error; equivalent when p̂ − z·se > 0.5 − M and p̂ + z·se < 0.5 + M (z = Φ⁻¹(1 − alpha)). With the true
// accuracy p and se = sqrt(p(1 − p)·D / N) for N answers, its power is
//   Φ((0.5 + M − z·se − p) / se) − Φ((0.5 − M + z·se − p) / se),
// 0 where the two critical values cross (no sample of that size can show equivalence). With D = 1 this is
// statsmodels' power_ztost_prop(0.5 − M, 0.5 + M, N, p, alpha, dist="norm", variance_prop=p, discrete=False)
// (test/fixtures/realism/tost-power.json). D is the design effect of answers clustered in pairs (K raters each) and in
// raters (m answers of this condition each): for answers y = μ + a_pair + b_rater + e, the variance of their mean is
// σ²/N · (1 + (K − 1)·ρ_pair + (m − 1)·ρ_rater), with ρ the share of the variance each effect carries (the intraclass
// correlations; Kish 1965, section 5.4, for one level; the two add for crossed effects). A simulation of that model
// with the analysis's own clustered estimator checks the formula (test/analysis/realism-plan.test.ts).

export const REALISM_PLAN_CONVENTION =
  'two one-sided z tests at alpha each on the detection accuracy, equivalence within 0.5 ± margin; variance p(1 − p) times the design effect 1 + (K − 1)·ρ_pair + (m − 1)·ρ_rater over N answers; ' +
  'm = pairs per rater ÷ synthetic conditions; ρ from a pilot realism batch (one-way ANOVA intraclass correlations of right answers by pair and by rater, negative taken as 0), 0 without one';

/** The power of the equivalence test at the true accuracy `p` with N answers and design effect `deff`. */
export function equivalencePower(n: number, p: number, margin: number, alpha: number, deff = 1): number {
  if (!(n > 0)) return 0;
  const se = Math.sqrt((p * (1 - p) * deff) / n);
  const z = normalQuantile(1 - alpha);
  const upper = 0.5 + margin - z * se;
  const lower = 0.5 - margin + z * se;
  if (lower >= upper) return 0;
  return Math.max(0, normalCdf((upper - p) / se) - normalCdf((lower - p) / se));
}

/** The fewest answers whose power reaches `power` (power rises with N), or null when even 10 million do not. */
export function equivalenceSampleSize(p: number, margin: number, alpha: number, power: number, deff = 1): { n: number; power: number } | null {
  const max = 10_000_000;
  if (equivalencePower(max, p, margin, alpha, deff) < power) return null;
  let lo = 1;
  let hi = max;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (equivalencePower(mid, p, margin, alpha, deff) >= power) hi = mid;
    else lo = mid + 1;
  }
  return { n: lo, power: equivalencePower(lo, p, margin, alpha, deff) };
}

/**
 * The one-way ANOVA estimator of the intraclass correlation of `y` within groups (codes 0..G-1), with unequal group
 * sizes (n0 of Snedecor and Cochran; Donner 1986, International Statistical Review 54(1)): (MSB − MSW) / (MSB + (n0 −
 * 1)·MSW). Null with fewer than two groups or no replication within them.
 */
export function oneWayIcc(y: Float64Array, group: Int32Array): number | null {
  const n = y.length;
  const sums = new Map<number, { n: number; sum: number }>();
  let total = 0;
  for (let i = 0; i < n; i++) {
    const g = sums.get(group[i] as number) ?? { n: 0, sum: 0 };
    g.n += 1;
    g.sum += y[i] as number;
    sums.set(group[i] as number, g);
    total += y[i] as number;
  }
  const k = sums.size;
  if (k < 2 || n <= k) return null;
  const mean = total / n;
  let ssb = 0;
  let sizeSquares = 0;
  for (const g of sums.values()) {
    ssb += g.n * (g.sum / g.n - mean) ** 2;
    sizeSquares += g.n * g.n;
  }
  let ssw = 0;
  for (let i = 0; i < n; i++) {
    const g = sums.get(group[i] as number) as { n: number; sum: number };
    ssw += ((y[i] as number) - g.sum / g.n) ** 2;
  }
  const msb = ssb / (k - 1);
  const msw = ssw / (n - k);
  const n0 = (n - sizeSquares / n) / (k - 1);
  const denominator = msb + (n0 - 1) * msw;
  return denominator > 0 ? (msb - msw) / denominator : null;
}

export type RealismPilot = { batch: { id: number; name: string }; answers: number; icc_pair: number | null; icc_rater: number | null; accuracy: number | null };

export type RealismPlanInput = {
  margin: number;
  /** The detection accuracy assumed true (0.5: raters cannot tell at all). */
  accuracy: number;
  alpha: number;
  power: number;
  k: number;
  perRater: number;
  /** Synthetic conditions, each tested against the real one on its own pairs. */
  conditions: number;
  iccPair: number;
  iccRater: number;
  pilot: RealismPilot | null;
  pay: { currency: string; amount: number } | null;
};

export type RealismPlan = {
  margin: number;
  accuracy: number;
  alpha: number;
  power: number;
  k: number;
  per_rater: number;
  conditions: number;
  convention: string;
  design: { icc_pair: number; icc_rater: number; answers_per_rater_per_condition: number; design_effect: number; from: string; pilot: RealismPilot | null };
  /** Per synthetic condition; then the whole batch. */
  per_condition: { answers_independent: number; answers_needed: number; pairs_needed: number; achieved_power: number } | null;
  batch: { pairs: number; judgments: number; raters: number; cost: { total: number; currency: string } | null } | null;
  notes: string[];
};

export function planRealism(input: RealismPlanInput): RealismPlan {
  const { margin, accuracy, alpha, power, k, perRater, conditions } = input;
  const notes: string[] = [];
  const m = Math.max(1, perRater / conditions);
  const deff = 1 + (k - 1) * input.iccPair + (m - 1) * input.iccRater;
  const base = {
    margin, accuracy, alpha, power, k, per_rater: perRater, conditions, convention: REALISM_PLAN_CONVENTION,
    design: {
      icc_pair: input.iccPair,
      icc_rater: input.iccRater,
      answers_per_rater_per_condition: m,
      design_effect: deff,
      from: input.pilot ? `batch ${input.pilot.batch.id} (${input.pilot.batch.name}): ${input.pilot.answers} which-is-real answers` : 'no pilot: the intraclass correlations given (0 unless set)',
      pilot: input.pilot,
    },
  };
  if (input.pilot === null && input.iccPair === 0 && input.iccRater === 0)
    notes.push('no pilot and no intraclass correlations: answers are taken as independent, which raters who see the same pairs and raters with an eye of their own make optimistic; give --from-batch or --icc-pair/--icc-rater');
  if (Math.abs(accuracy - 0.5) >= margin) {
    notes.push(`an accuracy of ${accuracy} lies outside 0.5 ± ${margin}: equivalence cannot be shown, whatever the sample`);
    return { ...base, per_condition: null, batch: null, notes };
  }
  const independent = equivalenceSampleSize(accuracy, margin, alpha, power);
  const needed = equivalenceSampleSize(accuracy, margin, alpha, power, deff);
  if (!independent || !needed) {
    notes.push('the equivalence test cannot reach the power asked for within 10 million answers');
    return { ...base, per_condition: null, batch: null, notes };
  }
  const pairs = Math.ceil(needed.n / k);
  const judgments = pairs * k * conditions;
  const raters = Math.ceil(judgments / perRater);
  if (pairs > 0) notes.push(`each synthetic condition needs ${pairs} pairs, so ${pairs} scenario samples with a real conversation and one of that condition`);
  return {
    ...base,
    per_condition: { answers_independent: independent.n, answers_needed: pairs * k, pairs_needed: pairs, achieved_power: equivalencePower(pairs * k, accuracy, margin, alpha, deff) },
    batch: { pairs: pairs * conditions, judgments, raters, cost: input.pay ? { total: raters * input.pay.amount, currency: input.pay.currency } : null },
    notes,
  };
}

/** The plan as lines of text for the CLI. */
export function realismPlanLines(plan: RealismPlan): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `To show detection accuracy within ${pct(0.5 - plan.margin)}–${pct(0.5 + plan.margin)} (equivalence margin ${plan.margin}) by two one-sided tests at alpha ${plan.alpha} each, with power ${plan.power} when the true accuracy is ${pct(plan.accuracy)}, K = ${plan.k} raters per pair, ${plan.per_rater} pairs per rater, ${plan.conditions} synthetic condition(s):`,
    `Design: intraclass correlation ${plan.design.icc_pair.toFixed(3)} by pair and ${plan.design.icc_rater.toFixed(3)} by rater, ${plan.design.answers_per_rater_per_condition.toFixed(1)} answers per rater per condition, design effect ${plan.design.design_effect.toFixed(2)} (${plan.design.from}).`,
  ];
  const c = plan.per_condition;
  if (c) lines.push(`Per condition: ${c.pairs_needed} pairs, ${c.answers_needed} answers (${c.answers_independent} if independent), power ${c.achieved_power.toFixed(3)}.`);
  if (plan.batch)
    lines.push(`Batch: ${plan.batch.pairs} pairs, ${plan.batch.judgments} judgments, ${plan.batch.raters} raters${plan.batch.cost ? `, cost ${formatMoney(plan.batch.cost.total, plan.batch.cost.currency)}` : ''}.`);
  lines.push(`Convention: ${plan.convention}.`);
  for (const n of plan.notes) lines.push(`Note: ${n}.`);
  return lines;
}
