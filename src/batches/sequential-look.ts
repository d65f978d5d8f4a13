import type { ScoredPair } from '../numbers/clustered-pair-score.js';
import type { StoppingRule } from './batch.schema.js';
import { type LookStatistic, lookStatistic } from './look-statistic.js';
import { type PastLook, planLook, stageOf, stageWeights } from './reallocated-look.js';
import { comparisonAlpha, decideLook, type LookDecision, lookDue, lookSchedule } from './sequential-rule.js';

// One look of a sequential comparison from what the database (or a simulation) holds: the looks taken and the
// completed pairs' valid judgments (issue 51). Pure: the answer path (src/rating/sequential-stopping.ts) and the
// simulation (src/analysis/sequential-simulation.ts) both decide through it, so the figures in the docs are those of
// the code that runs.

/** A completed pair: the look it first entered (null: none yet) and its valid judgments. */
export type LookPair = { entered: number | null; votes: ScoredPair['votes'] };

export type LookEvaluation = { statistic: LookStatistic; decision: LookDecision; plannedLooks: number; alpha: number };

export type LookRequest = {
  rule: StoppingRule;
  /** The batch's comparisons (the Bonferroni split). */
  comparisons: number;
  earlier: readonly PastLook[];
  /** The comparison's regular pairs now (its maximum) and how many have their K judgments. */
  maxPairs: number;
  completed: number;
  /** The completed pairs, read only when a look is due (`due`). */
  pairs: () => readonly LookPair[];
};

/** Whether a look is due: a scheduled count of completed pairs reached beyond the last look's. */
export function lookIsDue(rule: Pick<StoppingRule, 'looks' | 'lookEvery'>, earlier: readonly PastLook[], maxPairs: number, completed: number): boolean {
  return maxPairs > 0 && lookDue(lookSchedule(rule, maxPairs), completed, earlier[earlier.length - 1]?.completed ?? 0);
}

/** The look due now, decided; null when none is due or none can be taken (no information gained). */
export function evaluateLook(request: LookRequest): LookEvaluation | null {
  const { rule, earlier, maxPairs, completed } = request;
  if (!lookIsDue(rule, earlier, maxPairs, completed)) return null;
  const pairs = request.pairs();
  const plain = pairs.map((p) => ({ weight: 1, votes: p.votes }));
  const unweighted = lookStatistic(plain);
  const final = completed >= maxPairs;
  const plan = planLook(earlier, { completed: unweighted.completed, decisive: unweighted.winsA + unweighted.winsB, maxPairs, final, observedInformation: unweighted.observedInformation });
  // After a raised maximum, each stage's pairs share its fixed weight (reallocated-look.ts).
  let statistic = unweighted;
  if (plan.stages.length > 1) {
    const weights = stageWeights(plan.stages, pairs.map((p) => stageOf(plan.stages, p.entered)));
    statistic = lookStatistic(plain.map((p, i) => ({ ...p, weight: weights[i] as number })));
  }
  const alpha = comparisonAlpha(rule, request.comparisons);
  const decision = decideLook({ alpha, spending: rule.spending, futility: rule.futility, designPairs: plan.designPairs, earlier, now: plan.point, statistic, final });
  if (!decision) return null;
  const look = earlier.length + 1;
  return { statistic, decision, plannedLooks: Math.max(look, lookSchedule(rule, maxPairs).length), alpha };
}
