import type { StoppingRule } from '../batches/batch.schema.js';
import { formatMoney } from '../batches/pay.js';
import { perRaterForSequentialRaters, SEQUENTIAL_RATERS, tooFewRatersFor, tooFewRatersWords } from '../batches/launch-checklist.js';
import { MIN_CLUSTERS } from '../batches/look-statistic.js';
import { designedRaters } from '../batches/sequential-look.js';
import { simulateSequential } from './sequential-simulation.js';

// `simarena plan --sequential` (issues 44 and 51): a sequential design over the fixed design's pairs, simulated as it
// runs (src/analysis/sequential-simulation.ts: K raters a pair, each with a lean, perRater pairs a rater, ties,
// served as the server serves a sequential batch) through the rule's own code, seeded so the plan is the same each
// time: the judgments it is expected to pay for (every rater's promise, kept or finished short) under no preference and under the
// stated effect, its power and type I error with their Monte Carlo standard errors, and the money the unused
// judgments would have cost.

export type SequentialPlan = {
  looks: number;
  spending: StoppingRule['spending'];
  comparisons: number;
  alpha_per_comparison: number;
  max_pairs: number;
  judgments_per_pair: number;
  per_rater: number;
  /** SD of the raters' leans on the logit scale, simulated. */
  rater_lean: number;
  tie_share: number;
  /**
   * Judgments expected to be paid for, over K, per comparison: the raters' promises (a rater who finds nothing open
   * before theirs is done is paid all the same), answers after a stop included; what the batch pays for, in pairs.
   */
  expected_pairs_null: number;
  expected_pairs_effect: number;
  /** Completed pairs at the look that stopped the comparison (what the inference used), under each. */
  pairs_at_stop_null: number;
  pairs_at_stop_effect: number;
  /** Futility stopping planned with the design (beta, binding), its effect being the pair-majority win rate; or null. */
  futility: { beta: number; effect: number; binding: boolean } | null;
  /** Shares of simulated studies stopped for futility under no preference and under the stated effect. */
  futility_stops_null: number;
  futility_stops_effect: number;
  power: number;
  power_se: number;
  type_one_error: number;
  type_one_error_se: number;
  studies: number;
  cost_per_pair: number | null;
  expected_saving_null: number | null;
  expected_saving_effect: number | null;
  currency: string | null;
  /** Why `batches open` would refuse this design, or null (the launch checklist's rule, said with the plan). */
  refused: string | null;
  /** The raters the design is for: every comparison's pairs × K over the pairs a rater judges. */
  raters: number;
  /** Under MIN_CLUSTERS raters its looks test pair majorities, whose inference holds only for these raters. */
  conditional_on_raters: boolean;
};

export type SequentialPlanInput = {
  maxPairs: number;
  /** The judgment-level effect: the share of decisive judgments for the preferred condition, by a rater without a lean. */
  effect: number;
  judgmentsPerPair: number;
  perRater: number;
  raterLean: number;
  tieShare: number;
  /** Pair-majority chances under the effect (pairMajorityChances): futility's effect is their win rate. */
  chances: { a: number; b: number; split: number };
  rule: Pick<StoppingRule, 'looks' | 'alpha' | 'spending'>;
  /** Futility stopping's beta and binding; its effect is the pair-majority win rate of `chances`. */
  futility: { beta: number; binding: boolean } | null;
  comparisons: number;
  cost: { total: number; currency: string } | null;
  studies: number;
  random: () => number;
  /** Progress: which line ('no preference' or 'the stated effect') and how many of its studies are done. */
  onStudy?: (line: string, done: number) => void;
};

export function planSequential(input: SequentialPlanInput): SequentialPlan {
  const decisive = input.chances.a + input.chances.b;
  const majorityWinRate = decisive > 0 ? Math.max(input.chances.a, input.chances.b) / decisive : 0.5;
  const futility = input.futility && majorityWinRate > 0.5 ? { ...input.futility, effect: majorityWinRate } : null;
  const effect = Math.max(input.effect, 1 - input.effect);
  const common = {
    pairs: input.maxPairs,
    judgmentsPerPair: input.judgmentsPerPair,
    perRater: input.perRater,
    raterLean: input.raterLean,
    tieShare: input.tieShare,
    concurrency: 5,
    rule: { ...input.rule, futility },
    reserve: 0,
    studies: input.studies,
    random: input.random,
    fixedDesign: false,
  };
  // Every comparison of the batch is planned alike; alpha is split over them.
  const winRates = (rate: number) => Array.from({ length: input.comparisons }, () => rate);
  const batchNull = simulateSequential({ ...common, winRates: winRates(0.5), onStudy: (done) => input.onStudy?.('no preference', done) });
  const batchEffect = simulateSequential({ ...common, winRates: winRates(effect), onStudy: (done) => input.onStudy?.('the stated effect', done) });
  const [underNull] = batchNull.comparisons;
  const [underEffect] = batchEffect.comparisons;
  if (!underNull || !underEffect) throw new RangeError('a plan needs one comparison or more');
  const k = input.judgmentsPerPair;
  const perPair = input.cost ? input.cost.total / input.maxPairs : null;
  // The comparisons are planned alike, so each pays an equal share of the batch's promises.
  const pairsNull = batchNull.meanPaidJudgments / input.comparisons / k;
  const pairsEffect = batchEffect.meanPaidJudgments / input.comparisons / k;
  const raters = designRaters(input);
  return {
    looks: input.rule.looks ?? 1,
    spending: input.rule.spending,
    comparisons: input.comparisons,
    alpha_per_comparison: input.rule.alpha / input.comparisons,
    max_pairs: input.maxPairs,
    judgments_per_pair: k,
    per_rater: input.perRater,
    rater_lean: input.raterLean,
    tie_share: input.tieShare,
    expected_pairs_null: pairsNull,
    expected_pairs_effect: pairsEffect,
    pairs_at_stop_null: underNull.meanPairsUsed,
    pairs_at_stop_effect: underEffect.meanPairsUsed,
    futility,
    futility_stops_null: underNull.futilityRate,
    futility_stops_effect: underEffect.futilityRate,
    power: underEffect.rejectRate,
    power_se: underEffect.standardError,
    type_one_error: underNull.rejectRate,
    type_one_error_se: underNull.standardError,
    studies: input.studies,
    cost_per_pair: perPair,
    expected_saving_null: perPair === null ? null : perPair * (input.maxPairs - pairsNull),
    expected_saving_effect: perPair === null ? null : perPair * (input.maxPairs - pairsEffect),
    currency: input.cost?.currency ?? null,
    refused: refusalOf(input, raters),
    raters,
    conditional_on_raters: raters < MIN_CLUSTERS,
  };
}

/** The raters the design is for, as a batch counts them (designedRaters): every comparison's pairs × K over perRater. */
const designRaters = (input: Pick<SequentialPlanInput, 'maxPairs' | 'comparisons' | 'judgmentsPerPair' | 'perRater'>) =>
  designedRaters({ plannedRaters: null, judgmentsPerPair: input.judgmentsPerPair, perRaterCap: input.perRater }, input.maxPairs * input.comparisons);

/**
 * A design for fewer than MIN_CLUSTERS raters looks as planned on pair majorities (src/batches/sequential-look.ts):
 * the simulation draws raters and their leans afresh for every study, which such a test counts as preferences, so its
 * type I error over raters is not what the test controls. Said beside the figure.
 */
function conditionalWords(raters: number): string {
  return `  conditional on these raters: with ${raters} raters, fewer than ${MIN_CLUSTERS}, each look tests pair majorities, which says what these raters prefer; the type I error above is over raters drawn afresh, whose leans such a test counts as preferences, so it can run above alpha (docs/researcher/sequential-batches.md, "Too few raters")`;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * Why the launch checklist would refuse to open this design (src/batches/launch-checklist.ts), with what to plan
 * instead; null when it opens.
 */
function refusalOf(input: Pick<SequentialPlanInput, 'maxPairs' | 'comparisons' | 'judgmentsPerPair' | 'rule'>, raters: number): string | null {
  if (!tooFewRatersFor(input.rule.spending, raters)) return null;
  const perRater = perRaterForSequentialRaters(input.maxPairs * input.comparisons * input.judgmentsPerPair);
  return `${tooFewRatersWords(raters)}; plan it with --per-rater ${perRater} or less (${SEQUENTIAL_RATERS} raters), or --spending pocock`;
}

export function sequentialPlanLines(plan: SequentialPlan): string[] {
  // A small design can pay for more than its maximum (raters promised what is open, paid in full when they find nothing
  // left): that is a cost, said as one, not a "saving" of a negative amount.
  const money = (x: number | null) =>
    x === null ? '' : x >= 0 ? `, saving about ${formatMoney(x, plan.currency ?? '')} per comparison` : `, costing about ${formatMoney(-x, plan.currency ?? '')} more per comparison than the fixed design`;
  return [
    `Sequential design: ${plan.looks} looks, ${plan.spending} alpha spending, alpha ${+plan.alpha_per_comparison.toPrecision(4)} per comparison${plan.comparisons > 1 ? ` (Bonferroni over ${plan.comparisons})` : ''}`,
    `  maximum pairs per comparison: ${plan.max_pairs} (the fixed design's)`,
    `  simulated as it runs: ${plan.judgments_per_pair} raters a pair, ${plan.per_rater} pairs a rater, raters leaning with SD ${plan.rater_lean} on the logit scale, ${pct(plan.tie_share)} tie answers, answers in flight served after a stop`,
    ...(plan.futility
      ? [`  futility stopping: beta ${plan.futility.beta}, ${plan.futility.binding ? 'binding' : 'non-binding'}, at a pair-majority win rate of ${plan.futility.effect.toFixed(3)}`]
      : []),
    `  expected pairs paid for under no preference: ${plan.expected_pairs_null.toFixed(1)}${money(plan.expected_saving_null)}${plan.futility ? ` (${pct(plan.futility_stops_null)} stop for futility)` : ''}`,
    `  expected pairs paid for under the stated effect: ${plan.expected_pairs_effect.toFixed(1)}${money(plan.expected_saving_effect)}${plan.futility ? ` (${pct(plan.futility_stops_effect)} stop for futility)` : ''}`,
    `  pairs the stopping look used: ${plan.pairs_at_stop_null.toFixed(1)} under no preference, ${plan.pairs_at_stop_effect.toFixed(1)} under the effect (the rest of what is paid for was promised before the stop and answered after it)`,
    `  power at the stated effect: ${pct(plan.power)} (Monte Carlo s.e. ${pct(plan.power_se)}; spending alpha at looks and clustering by rater cost power at the same maximum)`,
    `  simulated type I error: ${(100 * plan.type_one_error).toFixed(2)}% (s.e. ${(100 * plan.type_one_error_se).toFixed(2)}%; ${plan.studies} simulated studies per line, seeded)`,
    ...(plan.refused ? [`  not offered: ${plan.refused}`] : []),
    ...(plan.conditional_on_raters ? [conditionalWords(plan.raters)] : []),
  ];
}
