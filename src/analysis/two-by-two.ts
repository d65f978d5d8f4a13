import { HUMAN_MODEL } from '../generation/mode.js';
import { normalCdf } from '../numbers/normal.js';
import { quadraticForm } from '../numbers/matrix.js';
import { type AnswersAgainst, answersFor } from './answers-against.js';
import { twoWayClusterCovariance, twoWayClusteredMean } from './cluster-covariance.js';
import { fitLogisticRegression, logisticScores } from './logistic-regression.js';
import { Z95 } from './wilson.js';

// The design the paper could not run (issue 53; Zhou et al. 2024, PUBLISHED-SETUP.md): who writes (a person or a
// model) × what the writer knows (both sides, or only their own). SCRIPT:M (model, omniscient), AGENTS:M (model,
// own side), HUMAN_SCRIPT:human (person, omniscient) and HUMANS:human (person, own side), each of the first three
// set against HUMANS:human on the same scenario. Two outcomes per cell: its naturalness win rate against HUMANS:human
// and its detection error rate (taken for the real one), both "the synthetic one chosen".
//
// The HUMANS cell is that outcome against itself, 0.5 by construction (logit 0), so the model is a logistic regression
// of "chosen" on writer (model = 1), knowledge (omniscient = 1) and their product with no intercept: writer's
// coefficient is AGENTS against HUMANS, knowledge's HUMAN_SCRIPT against HUMANS, and the product the difference of
// differences. The main effects are averaged over the other factor (as effect coding gives them): writer = βw + βwk/2,
// knowledge = βk + βwk/2; the interaction is βwk. Intervals are Wald intervals from the two-way (rater, scenario)
// cluster-robust covariance (cluster-covariance.ts).

export const REAL_REFERENCE = `HUMANS:${HUMAN_MODEL}`;

export type Writer = 'person' | 'model';
export type Knowledge = 'omniscient' | 'own-side';

export type Effect = { estimate: number; se: number; ci95: [number, number]; p: number; odds_ratio: number; odds_ratio_ci95: [number, number] };
export type TwoByTwoModel = { n: number; effects: { writer: Effect; knowledge: Effect; interaction: Effect }; one_way_fallback: boolean } | { n: number; reason: string };
export type CellRate = { n: number; rate: number | null; ci95: [number, number] | null; by_construction?: true };
export type TwoByTwoCell = { condition: string; writer: Writer; knowledge: Knowledge; natural: CellRate; detection_error: CellRate };
export type TwoByTwo = { model: string; reference: string; cells: TwoByTwoCell[]; natural: TwoByTwoModel; detection_error: TwoByTwoModel };

/** Contrasts of (βw, βk, βwk): the effects the table reports. */
const CONTRASTS = { writer: [1, 0, 0.5], knowledge: [0, 1, 0.5], interaction: [0, 0, 1] } as const;

/** The logistic model of one outcome over the three synthetic cells' answers (y = the synthetic one chosen). */
export function twoByTwoModel(rows: { y: Float64Array; writerModel: Float64Array; omniscient: Float64Array; rater: Int32Array; scenario: Int32Array }): TwoByTwoModel {
  const n = rows.y.length;
  const x = new Float64Array(n * 3);
  for (let i = 0; i < n; i++) {
    const w = rows.writerModel[i] as number;
    const k = rows.omniscient[i] as number;
    x[i * 3] = w;
    x[i * 3 + 1] = k;
    x[i * 3 + 2] = w * k;
  }
  const input = { y: rows.y, x, p: 3 };
  const fit = fitLogisticRegression(input);
  if (fit.coef === null) return { n, reason: fit.reason };
  const robust = twoWayClusterCovariance(logisticScores(input, fit.coef), fit.informationInverse, rows.rater, rows.scenario);
  if (!robust) return { n, reason: 'needs at least two raters and two scenarios for a clustered interval' };
  const effect = (c: readonly number[]): Effect => {
    const estimate = c.reduce((s, ci, a) => s + ci * (fit.coef[a] as number), 0);
    const se = Math.sqrt(quadraticForm(robust.covariance, c, 3));
    const ci95: [number, number] = [estimate - Z95 * se, estimate + Z95 * se];
    return { estimate, se, ci95, p: 2 * normalCdf(-Math.abs(estimate / se)), odds_ratio: Math.exp(estimate), odds_ratio_ci95: [Math.exp(ci95[0]), Math.exp(ci95[1])] };
  };
  return { n, effects: { writer: effect(CONTRASTS.writer), knowledge: effect(CONTRASTS.knowledge), interaction: effect(CONTRASTS.interaction) }, one_way_fallback: robust.one_way_fallback };
}

type CellSpec = { condition: string; writer: Writer; knowledge: Knowledge };

function cellsFor(model: string): CellSpec[] {
  return [
    { condition: REAL_REFERENCE, writer: 'person', knowledge: 'own-side' },
    { condition: `HUMAN_SCRIPT:${HUMAN_MODEL}`, writer: 'person', knowledge: 'omniscient' },
    { condition: `AGENTS:${model}`, writer: 'model', knowledge: 'own-side' },
    { condition: `SCRIPT:${model}`, writer: 'model', knowledge: 'omniscient' },
  ];
}

function cellRate(answers: AnswersAgainst | null, condition: string): CellRate {
  if (condition === REAL_REFERENCE) return { n: 0, rate: 0.5, ci95: null, by_construction: true };
  const index = answers ? answers.conditions.indexOf(condition) : -1;
  if (!answers || index < 0) return { n: 0, rate: null, ci95: null };
  const own = answersFor(answers, index);
  const m = twoWayClusteredMean(own.chosen, own.rater, own.scenario);
  return { n: m.n, rate: m.mean, ci95: m.ci95 };
}

function modelOf(answers: AnswersAgainst | null, cells: CellSpec[]): TwoByTwoModel {
  if (!answers) return { n: 0, reason: 'no answers of this kind in the report (naturalness needs a preference question of the same batch)' };
  const synthetic = cells.filter((c) => c.condition !== REAL_REFERENCE);
  const missing = synthetic.filter((c) => !answers.conditions.includes(c.condition)).map((c) => c.condition);
  if (missing.length > 0) return { n: 0, reason: `needs all four cells; no answers for ${missing.join(', ')}` };
  const rows: number[] = [];
  const specOf = new Map(synthetic.map((c) => [answers.conditions.indexOf(c.condition), c]));
  for (let k = 0; k < answers.condition.length; k++) if (specOf.has(answers.condition[k] as number)) rows.push(k);
  const spec = (k: number) => specOf.get(answers.condition[k] as number) as CellSpec;
  return twoByTwoModel({
    y: Float64Array.from(rows, (k) => answers.chosen[k] as number),
    writerModel: Float64Array.from(rows, (k) => (spec(k).writer === 'model' ? 1 : 0)),
    omniscient: Float64Array.from(rows, (k) => (spec(k).knowledge === 'omniscient' ? 1 : 0)),
    rater: Int32Array.from(rows, (k) => answers.rater[k] as number),
    scenario: Int32Array.from(rows, (k) => answers.scenario[k] as number),
  });
}

/**
 * One 2×2 per model M whose SCRIPT:M or AGENTS:M is set against HUMANS:human. `natural`: a preference question's
 * answers against HUMANS:human (chosen = judged more natural); `realism`: the which-is-real question's (chosen = taken
 * for the real one, the detection error).
 */
export function twoByTwoTables(natural: AnswersAgainst | null, realism: AnswersAgainst | null): TwoByTwo[] {
  const models = new Set<string>();
  for (const a of [natural, realism])
    for (const c of a?.reference === REAL_REFERENCE ? a.conditions : []) {
      const match = /^(SCRIPT|AGENTS):(.+)$/.exec(c);
      if (match?.[2]) models.add(match[2]);
    }
  const usable = (a: AnswersAgainst | null) => (a?.reference === REAL_REFERENCE ? a : null);
  return [...models].sort().map((model) => {
    const cells = cellsFor(model);
    return {
      model,
      reference: REAL_REFERENCE,
      cells: cells.map((c) => ({ ...c, natural: cellRate(usable(natural), c.condition), detection_error: cellRate(usable(realism), c.condition) })),
      natural: modelOf(usable(natural), cells),
      detection_error: modelOf(usable(realism), cells),
    };
  });
}
