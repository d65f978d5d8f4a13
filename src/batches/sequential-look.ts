import type { ScoredPair } from '../numbers/clustered-pair-score.js';
import type { BatchSettings, StoppingRule } from './batch.schema.js';
import { type LookStatistic, lookStatistic, MIN_CLUSTERS } from './look-statistic.js';
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
  /** Whether a look before the last waits for MIN_CLUSTERS raters behind its pairs (waitsForRaters); asked only when one is due. */
  waitForRaters: () => boolean;
};

/**
 * Whether a batch's looks before the last wait for the rater-clustered statistic: when it is designed for MIN_CLUSTERS
 * raters or more (plannedRaters, or else its regular pairs' judgments over perRaterCap). Serving hands a comparison
 * out only as far as its next look (src/rating/look-room.ts), so a look's pairs go to the first raters to arrive: at
 * 200 pairs, 5 looks, K = 3 and 20 pairs a rater the first look had 6 raters, and its fallback (pair majorities)
 * rejected a true null 0.085 of the time with raters who lean (Pocock, alpha 0.05; 0.245 at 40 pairs a rater). A look
 * that waits is taken at the first completed pair after which its completed pairs number 10 or more and 10 raters or
 * more have judged them: later than planned, at a count that does not depend on the answers, which the spending
 * function allows (it spends by the information reached, Lan & DeMets 1983). Meanwhile the look room opens to the next
 * planned look (src/rating/look-room.ts). A batch designed for fewer raters looks as planned: its looks test pair
 * majorities, conditional on its raters, and waiting would only put them off to the end.
 */
export function waitsForRaters(settings: DesignSettings, regularPairs: number): boolean {
  return designedRaters(settings, regularPairs) >= MIN_CLUSTERS;
}

type DesignSettings = Pick<BatchSettings, 'plannedRaters' | 'judgmentsPerPair' | 'perRaterCap'>;

/** The raters a batch is designed for: plannedRaters, or else its regular pairs' judgments over perRaterCap. */
export function designedRaters(settings: DesignSettings, regularPairs: number): number {
  return settings.plannedRaters ?? Math.ceil((regularPairs * settings.judgmentsPerPair) / Math.max(1, settings.perRaterCap));
}

/**
 * The raters behind a comparison's first look (`first` completed pairs), each holding up to their share of
 * perRaterCap, and, when the batch's looks wait for MIN_CLUSTERS raters and this one would have fewer, about where it
 * is taken instead: the completed pairs that MIN_CLUSTERS raters' shares fill, or every pair of the comparison.
 */
export function firstLookRaters(settings: DesignSettings, regularPairs: number, comparisons: number, first: number): { raters: number; waitsUntil: number | null } {
  const raters = Math.ceil((first * settings.judgmentsPerPair) / Math.max(1, settings.perRaterCap / comparisons));
  if (raters >= MIN_CLUSTERS || !waitsForRaters(settings, regularPairs)) return { raters, waitsUntil: null };
  const perComparison = Math.ceil(regularPairs / comparisons);
  return { raters, waitsUntil: Math.min(perComparison, Math.ceil((MIN_CLUSTERS * settings.perRaterCap) / comparisons / settings.judgmentsPerPair)) };
}

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
  if (!final && unweighted.statistic !== 'rater-clustered' && request.waitForRaters()) return null;
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
