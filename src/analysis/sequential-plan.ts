import type { StoppingRule } from '../batches/batch.schema.js';
import { formatMoney } from '../batches/pay.js';
import { simulateSequential } from './sequential-simulation.js';

// `simarena plan --sequential` (issue 44): a sequential design over the fixed design's pairs, its expected pairs under
// the null and under the stated effect, its power, and the money those pairs would cost. By simulation of the rule's
// own code (seeded, so the plan is the same each time it is asked for).

export type SequentialPlan = {
  looks: number;
  spending: StoppingRule['spending'];
  comparisons: number;
  alpha_per_comparison: number;
  max_pairs: number;
  expected_pairs_null: number;
  expected_pairs_effect: number;
  /** Futility stopping planned with the design (beta, binding), its effect being the pair-majority win rate; or null. */
  futility: { beta: number; effect: number; binding: boolean } | null;
  /** Shares of simulated studies stopped for futility under no preference and under the stated effect. */
  futility_stops_null: number;
  futility_stops_effect: number;
  power: number;
  type_one_error: number;
  studies: number;
  cost_per_pair: number | null;
  expected_saving_null: number | null;
  expected_saving_effect: number | null;
  currency: string | null;
};

export type SequentialPlanInput = {
  maxPairs: number;
  /** Pair-majority chances under the effect (pairMajorityChances). */
  chances: { a: number; b: number; split: number };
  rule: Pick<StoppingRule, 'looks' | 'alpha' | 'spending'>;
  /** Futility stopping's beta and binding; its effect is the pair-majority win rate of `chances`. */
  futility: { beta: number; binding: boolean } | null;
  comparisons: number;
  cost: { total: number; currency: string } | null;
  studies: number;
  random: () => number;
};

export function planSequential(input: SequentialPlanInput): SequentialPlan {
  const decisive = input.chances.a + input.chances.b;
  const winRate = decisive > 0 ? Math.max(input.chances.a, input.chances.b) / decisive : 0.5;
  const futility = input.futility && winRate > 0.5 ? { ...input.futility, effect: winRate } : null;
  const common = { pairs: input.maxPairs, rule: { ...input.rule, futility }, comparisons: input.comparisons, tieShare: input.chances.split, lateBy: 0, studies: input.studies, random: input.random };
  const underNull = simulateSequential({ ...common, winRate: 0.5 });
  const underEffect = simulateSequential({ ...common, winRate });
  const perPair = input.cost ? input.cost.total / input.maxPairs : null;
  return {
    looks: input.rule.looks ?? 1,
    spending: input.rule.spending,
    comparisons: input.comparisons,
    alpha_per_comparison: input.rule.alpha / input.comparisons,
    max_pairs: input.maxPairs,
    expected_pairs_null: underNull.meanPairs,
    expected_pairs_effect: underEffect.meanPairs,
    futility,
    futility_stops_null: underNull.futilityRate,
    futility_stops_effect: underEffect.futilityRate,
    power: underEffect.rejectRate,
    type_one_error: underNull.rejectRate,
    studies: input.studies,
    cost_per_pair: perPair,
    expected_saving_null: perPair === null ? null : perPair * (input.maxPairs - underNull.meanPairs),
    expected_saving_effect: perPair === null ? null : perPair * (input.maxPairs - underEffect.meanPairs),
    currency: input.cost?.currency ?? null,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function sequentialPlanLines(plan: SequentialPlan): string[] {
  const money = (x: number | null) => (x === null ? '' : `, saving about ${formatMoney(x, plan.currency ?? '')} per comparison`);
  return [
    `Sequential design: ${plan.looks} looks, ${plan.spending} alpha spending, alpha ${+plan.alpha_per_comparison.toPrecision(4)} per comparison${plan.comparisons > 1 ? ` (Bonferroni over ${plan.comparisons})` : ''}`,
    `  maximum pairs per comparison: ${plan.max_pairs} (the fixed design's)`,
    ...(plan.futility
      ? [`  futility stopping: beta ${plan.futility.beta}, ${plan.futility.binding ? 'binding' : 'non-binding'}, at a pair-majority win rate of ${plan.futility.effect.toFixed(3)}`]
      : []),
    `  expected pairs under no preference: ${plan.expected_pairs_null.toFixed(1)}${money(plan.expected_saving_null)}${plan.futility ? ` (${pct(plan.futility_stops_null)} stop for futility)` : ''}`,
    `  expected pairs under the stated effect: ${plan.expected_pairs_effect.toFixed(1)}${money(plan.expected_saving_effect)}${plan.futility ? ` (${pct(plan.futility_stops_effect)} stop for futility)` : ''}`,
    `  power at the stated effect: ${(100 * plan.power).toFixed(1)}% (the fixed design's is above; spending alpha at looks costs a little power at the same maximum)`,
    `  simulated type I error: ${(100 * plan.type_one_error).toFixed(2)}% (${plan.studies} simulated studies per line, seeded)`,
  ];
}
