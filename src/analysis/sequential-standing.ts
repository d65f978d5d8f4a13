import type { BatchSettings, StoppingRule } from '../batches/batch.schema.js';
import { comparisonAlpha, lookSchedule } from '../batches/sequential-rule.js';
import { firstLookRaters } from '../batches/sequential-look.js';
import type { Db } from '../db/connection.js';
import { type ComparisonStopRow, countComparisonPairs, judgmentsAfterStop, listLooks } from '../rating/sequential.queries.js';
import { sequentialLines, summariseComparison } from './sequential-report.js';

// Where each comparison of a sequential batch stands, for `batches show` and the console's batch page (issue 49).
// Before its first look a comparison has no look to summarise ("0 of 0 looks taken … 0 of 0 pairs" said nothing), so
// it says its plan instead: when the looks fall, how many pairs at most, at what alpha, and how far it has come.

/** A comparison's plan: the completed-pair counts its looks are due at (the last: every pair), its pairs now. */
export type ComparisonPlan = {
  comparison: string;
  looksAt: number[];
  maxPairs: number;
  completedPairs: number;
  alpha: number;
  /** About where the first look is taken when it waits for its tenth rater (src/batches/sequential-look.ts); else absent. */
  firstLookWaitsUntil?: number;
};

export function comparisonPlan(comparison: string, rule: StoppingRule, comparisons: number, pairs: { pairs: number; completed: number }): ComparisonPlan {
  return { comparison, looksAt: lookSchedule(rule, pairs.pairs), maxPairs: pairs.pairs, completedPairs: pairs.completed, alpha: +comparisonAlpha(rule, comparisons).toPrecision(4) };
}

/** A list of counts as prose: "10, 20, 30 and 40". */
function counts(points: readonly number[]): string {
  return points.length <= 1 ? String(points[0] ?? 0) : `${points.slice(0, -1).join(', ')} and ${points[points.length - 1] as number}`;
}

/** The plan of a comparison that has had no look yet, in one line. */
export function plannedLookLine(plan: ComparisonPlan, rule: StoppingRule): string {
  const n = plan.looksAt.length;
  const futility = rule.futility ? `, futility beta ${rule.futility.beta} ${rule.futility.binding ? 'binding' : 'non-binding'}` : '';
  const waits =
    plan.firstLookWaitsUntil === undefined ? '' : `; the first waits for its tenth rater, at about ${plan.firstLookWaitsUntil} completed pairs instead of ${plan.looksAt[0] ?? 0}`;
  return (
    `${plan.comparison}: running, no look yet; ${n} look${n === 1 ? '' : 's'} planned at ${counts(plan.looksAt)} completed pairs ` +
    `(${rule.spending} spending, alpha ${plan.alpha} for this comparison${futility})${waits}; at most ${plan.maxPairs} pairs, ${plan.completedPairs} completed so far`
  );
}

/** Every comparison's plan, with its pairs as they are now (a maximum raised by reallocation included). */
export function readComparisonPlans(db: Db, settings: BatchSettings, stops: readonly ComparisonStopRow[]): ComparisonPlan[] {
  const rule = settings.stopping;
  if (!rule) return [];
  const pairs = stops.map((c) => countComparisonPairs(db, c.id, settings.judgmentsPerPair));
  const regularPairs = pairs.reduce((sum, p) => sum + p.pairs, 0);
  const comparisons = Math.max(1, settings.comparisons.length);
  return stops.map((c, i) => {
    const plan = comparisonPlan(`${c.condition_a} vs ${c.condition_b}`, rule, settings.comparisons.length, pairs[i] as { pairs: number; completed: number });
    const { waitsUntil } = firstLookRaters(settings, regularPairs, comparisons, plan.looksAt[0] ?? 0);
    return waitsUntil === null ? plan : { ...plan, firstLookWaitsUntil: waitsUntil };
  });
}

/** The lines of each comparison of a sequential batch: its looks' summary, or its plan before the first look. */
export function comparisonStandingLines(db: Db, settings: BatchSettings, stops: readonly ComparisonStopRow[]): string[] {
  const rule = settings.stopping;
  if (!rule) return [];
  const plans = readComparisonPlans(db, settings, stops);
  return stops.flatMap((c, i) => {
    const looks = listLooks(db, c.id);
    if (looks.length > 0 || c.stopped_at !== null) return sequentialLines(summariseComparison(c, looks, rule, c.stopped_at === null ? null : judgmentsAfterStop(db, c.id)));
    return [plannedLookLine(plans[i] as ComparisonPlan, rule)];
  });
}
