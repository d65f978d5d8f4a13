import { normalCdf } from '../numbers/normal.js';
import { type AnswersAgainst, answersAgainst, answersFor } from './answers-against.js';
import { groupMeansTwoWay, twoWayClusterCovariance, twoWayClusteredMean } from './cluster-covariance.js';
import { type EquivalenceTest, equivalenceTest } from './equivalence-test.js';
import { type FixedEffectsLogit, fixedEffectsLogit } from './fixed-effects-logit.js';
import { holmAdjust } from './holm.js';
import type { JudgmentTable } from './judgment-table.js';
import { fitLogisticRegression, logisticScores } from './logistic-regression.js';
import { type TwoByTwo, twoByTwoTables } from './two-by-two.js';
import { wilsonInterval, Z95 } from './wilson.js';

// The analysis of a which-is-real question (issue 53; docs/researcher/realism.md). Raters saw a real conversation
// (the question's `real` condition, HUMANS:human) and a synthetic one of the same scenario and chose the real one.
// Social Simulacra (Park et al., UIST 2022) reports the error rate, the share of answers that took the synthetic one
// for real: 50% is "cannot tell them apart". Per synthetic condition: detection accuracy (1 − error rate) with an
// interval clustered two ways, by rater and by scenario (Cameron, Gelbach and Miller 2011), and the two one-sided tests
// of equivalence to chance against the margin the batch stated before it opened (Schuirmann 1987; Lakens 2017). Then
// the conditions' error rates compared pairwise (Holm), the logistic model with rater and scenario effects when there
// are enough answers, confidence calibration when confidence was asked, and the 2×2 (two-by-two.ts).

export const REALISM_ALPHA = 0.05;

export type DetectionVerdict = 'equivalent' | 'detected' | 'taken for real' | 'inconclusive';

export type DetectionRow = {
  condition: string;
  n: number;
  raters: number;
  scenarios: number;
  /** Answers that chose the real conversation. */
  correct: number;
  accuracy: number | null;
  se: number | null;
  ci95: [number, number] | null;
  /** 1 − accuracy: Social Simulacra's error rate, with the same interval turned round. */
  error_rate: number | null;
  error_ci95: [number, number] | null;
  one_way_fallback: boolean;
  /** TOST of accuracy within 0.5 ± margin; null without a margin stated in advance or without a standard error. */
  equivalence: EquivalenceTest | null;
  verdict: DetectionVerdict;
  sentence: string;
};

export type PairwiseErrorRate = { a: string; b: string; error_difference: number; se: number; ci95: [number, number]; p: number; p_holm: number };

export type Calibration = {
  n: number;
  levels: { confidence: number; n: number; correct: number; accuracy: number | null; ci95: [number, number] | null }[];
  mean_confidence_correct: number | null;
  mean_confidence_wrong: number | null;
  /** Logit of "chose the real one" on confidence (per point), two-way clustered: above 0 when confidence tracks accuracy. */
  slope: { estimate: number; se: number; ci95: [number, number]; p: number } | null;
  reason?: string;
};

export type RealismSection = {
  question_id: string;
  real: string;
  /** The equivalence margin the batch stated before it opened; null when it stated none. */
  margin: number | null;
  alpha: number;
  ties_left_out: number;
  /** Every answer pooled: the share that chose the real one. */
  overall: { n: number; accuracy: number | null; ci95: [number, number] | null };
  conditions: DetectionRow[];
  pairwise: PairwiseErrorRate[];
  fixed_effects: FixedEffectsLogit;
  calibration: Calibration | null;
  two_by_two: TwoByTwo[];
  notes: string[];
};

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const range = (c: [number, number]) => `[${pct(c[0])}, ${pct(c[1])}]`;

function verdictOf(condition: string, real: string, acc: number, ci95: [number, number] | null, eq: EquivalenceTest | null, margin: number | null): { verdict: DetectionVerdict; sentence: string } {
  const base = `${condition}: raters chose ${real} in ${pct(acc)} of answers (error rate ${pct(1 - acc)}${ci95 ? `, accuracy 95% CI ${range(ci95)}` : ''})`;
  if (eq?.equivalent)
    return { verdict: 'equivalent', sentence: `${base}; indistinguishable from ${real} within ±${pct(margin ?? 0)}: the 90% interval ${range(eq.ci)} lies inside ${range([eq.low, eq.high])} (TOST p = ${eq.p.toPrecision(3)}).` };
  if (ci95 && ci95[0] > 0.5) return { verdict: 'detected', sentence: `${base}; raters tell it from ${real} better than chance${eq ? ', and equivalence is not shown' : ''}.` };
  if (ci95 && ci95[1] < 0.5) return { verdict: 'taken for real', sentence: `${base}; raters take it for the real one more often than ${real} itself.` };
  const why = eq
    ? `equivalence within ±${pct(margin ?? 0)} is not shown either (TOST p = ${eq.p.toPrecision(3)}, 90% interval ${range(eq.ci)}): a difference that is not significant is not evidence that people cannot tell them apart`
    : 'no equivalence margin was stated before the batch opened, so no claim that people cannot tell them apart can be made';
  return { verdict: 'inconclusive', sentence: `${base}; not told apart better than chance, but ${why}.` };
}

function detectionRow(a: AnswersAgainst, index: number, margin: number | null): DetectionRow {
  const own = answersFor(a, index);
  const correct = own.chosen.map((x) => 1 - x);
  const m = twoWayClusteredMean(correct, own.rater, own.scenario);
  const condition = a.conditions[index] as string;
  const eq = margin !== null && m.mean !== null && m.se !== null && m.se > 0 ? equivalenceTest(m.mean, m.se, 0.5 - margin, 0.5 + margin, REALISM_ALPHA) : null;
  const acc = m.mean ?? 0;
  const { verdict, sentence } = verdictOf(condition, a.reference, acc, m.ci95, eq, margin);
  return {
    condition,
    n: m.n,
    raters: new Set(own.rater).size,
    scenarios: new Set(own.scenario).size,
    correct: correct.reduce((s, x) => s + x, 0),
    accuracy: m.mean,
    se: m.se,
    ci95: m.ci95,
    error_rate: m.mean === null ? null : 1 - m.mean,
    error_ci95: m.ci95 ? [1 - m.ci95[1], 1 - m.ci95[0]] : null,
    one_way_fallback: m.one_way_fallback,
    equivalence: eq,
    verdict,
    sentence,
  };
}

/** Error rates compared pairwise from one linear probability model with a dummy per condition, clustered two ways. */
function pairwiseErrorRates(a: AnswersAgainst): PairwiseErrorRate[] {
  const c = a.conditions.length;
  if (c < 2) return [];
  const fit = groupMeansTwoWay(a.chosen, a.condition, c, a.rater, a.scenario);
  if (!fit.covariance) return [];
  const v = fit.covariance.covariance;
  const rows: Omit<PairwiseErrorRate, 'p_holm'>[] = [];
  for (let i = 0; i < c; i++)
    for (let j = i + 1; j < c; j++) {
      const d = (fit.means[i] as number) - (fit.means[j] as number);
      const se = Math.sqrt((v[i * c + i] as number) + (v[j * c + j] as number) - 2 * (v[i * c + j] as number));
      rows.push({ a: a.conditions[i] as string, b: a.conditions[j] as string, error_difference: d, se, ci95: [d - Z95 * se, d + Z95 * se], p: 2 * normalCdf(-Math.abs(d / se)) });
    }
  const holm = holmAdjust(rows.map((r) => r.p));
  return rows.map((r, k) => ({ ...r, p_holm: holm[k] as number }));
}

function calibrationOf(a: AnswersAgainst): Calibration | null {
  const rows: number[] = [];
  for (let k = 0; k < a.confidence.length; k++) if ((a.confidence[k] as number) > 0) rows.push(k);
  if (rows.length === 0) return null;
  const right = (k: number) => 1 - (a.chosen[k] as number);
  const levels = [1, 2, 3, 4, 5].map((confidence) => {
    const at = rows.filter((k) => a.confidence[k] === confidence);
    const correct = at.reduce((s, k) => s + right(k), 0);
    return { confidence, n: at.length, correct, accuracy: at.length ? correct / at.length : null, ci95: wilsonInterval(correct, at.length) };
  });
  const meanOf = (ks: number[]) => (ks.length ? ks.reduce((s, k) => s + (a.confidence[k] as number), 0) / ks.length : null);
  const base = {
    n: rows.length,
    levels,
    mean_confidence_correct: meanOf(rows.filter((k) => right(k) === 1)),
    mean_confidence_wrong: meanOf(rows.filter((k) => right(k) === 0)),
  };
  const x = new Float64Array(rows.length * 2);
  rows.forEach((k, i) => {
    x[i * 2] = 1;
    x[i * 2 + 1] = a.confidence[k] as number;
  });
  const input = { y: Float64Array.from(rows, right), x, p: 2 };
  const fit = fitLogisticRegression(input);
  if (fit.coef === null) return { ...base, slope: null, reason: fit.reason };
  const robust = twoWayClusterCovariance(logisticScores(input, fit.coef), fit.informationInverse, Int32Array.from(rows, (k) => a.rater[k] as number), Int32Array.from(rows, (k) => a.scenario[k] as number));
  if (!robust) return { ...base, slope: null, reason: 'needs at least two raters and two scenarios for a clustered interval' };
  const estimate = fit.coef[1] as number;
  const se = Math.sqrt(robust.covariance[3] as number);
  return { ...base, slope: { estimate, se, ci95: [estimate - Z95 * se, estimate + Z95 * se], p: 2 * normalCdf(-Math.abs(estimate / se)) } };
}

export type RealismInput = {
  questionId: string;
  real: string;
  margin: number | null;
  /** The which-is-real question's judgments (exclusions applied). */
  table: JudgmentTable;
  /** A preference question's judgments, for the 2×2's naturalness (the batch's first preference question); null without one. */
  natural: JudgmentTable | null;
};

export function realismSection({ questionId, real, margin, table, natural }: RealismInput): RealismSection {
  const a = answersAgainst(table, real);
  const overall = twoWayClusteredMean(a.chosen.map((x) => 1 - x), a.rater, a.scenario);
  const notes = [
    'Detection accuracy: share of answers that chose the real conversation; error rate = 1 − accuracy (Social Simulacra, Park et al. 2022). 95% intervals are Wald intervals with a two-way cluster-robust standard error, by rater and by scenario (Cameron, Gelbach and Miller 2011).',
    margin === null
      ? 'No equivalence margin was stated before the batch opened (equivalenceMargin): no condition can be called indistinguishable from the real one.'
      : `Equivalence: two one-sided tests (Schuirmann 1987; Lakens 2017) of accuracy within 50% ± ${pct(margin)}, the margin the batch stated before it opened, each at alpha ${REALISM_ALPHA}; equivalent when the 90% interval lies inside the margin. A difference from 50% that is not significant is not evidence of equivalence.`,
  ];
  if (a.ties > 0) notes.push(`${a.ties} tie answer(s) to the which-is-real question were left out.`);
  const rows = a.conditions.map((_, i) => detectionRow(a, i, margin));
  if (rows.some((r) => r.one_way_fallback)) notes.push('Where the two-way variance was not positive, the larger one-way (rater or scenario) variance was used.');
  return {
    question_id: questionId,
    real,
    margin,
    alpha: REALISM_ALPHA,
    ties_left_out: a.ties,
    overall: { n: overall.n, accuracy: overall.mean, ci95: overall.ci95 },
    conditions: rows,
    pairwise: pairwiseErrorRates(a),
    fixed_effects: fixedEffectsLogit({ error: a.chosen, condition: a.condition, conditions: a.conditions, rater: a.rater, scenario: a.scenario }),
    calibration: calibrationOf(a),
    two_by_two: twoByTwoTables(natural ? answersAgainst(natural, real) : null, a),
    notes,
  };
}
