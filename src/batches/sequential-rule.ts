import { futilityBoundaries, futilityDrift, type FutilityBoundaries, type TwoSidedBoundaries, twoSidedBoundaries } from '../numbers/group-sequential.js';
import type { StoppingRule } from './batch.schema.js';
import type { LookStatistic } from './look-statistic.js';

// What a group-sequential stopping rule decides at one look (issues 44 and 51; docs/researcher/sequential-batches.md).
// Pure: the caller reads the comparison's completed pairs, computes the look's statistic (look-statistic.ts) and where
// the look stands (lookPoint, or src/batches/reallocated-look.ts after a raised maximum); the decision and what it was
// held to are stored by the caller.

/** The comparison's share of the batch's alpha: Bonferroni over its comparisons, so the family-wise error holds. */
export function comparisonAlpha(rule: Pick<StoppingRule, 'alpha'>, comparisons: number): number {
  return rule.alpha / Math.max(1, comparisons);
}

/**
 * Completed-pair counts at which looks are due, the last being every pair of the comparison. `looks: N` puts them at
 * ceil(j maxPairs / N); `lookEvery: M` every M completed pairs. Counts that coincide (few pairs) are taken once.
 */
export function lookSchedule(rule: Pick<StoppingRule, 'looks' | 'lookEvery'>, maxPairs: number): number[] {
  const points: number[] = [];
  if (rule.looks !== undefined) {
    for (let j = 1; j <= rule.looks; j++) points.push(Math.ceil((j * maxPairs) / rule.looks));
  } else {
    const every = rule.lookEvery ?? maxPairs;
    for (let n = every; n < maxPairs; n += every) points.push(n);
    points.push(maxPairs);
  }
  return [...new Set(points.filter((n) => n >= 1))];
}

/** The look due now, if any: the next scheduled count at or below what is complete, beyond the last look taken. */
export function lookDue(schedule: readonly number[], completed: number, lastLookAt: number): boolean {
  return schedule.some((n) => n > lastLookAt && n <= completed);
}

/**
 * Where a look stands. `fraction` is where the spending function is read; `information` sets the looks' correlations
 * (and futility's drift), on the scale where the planned maximum is 1 (group-sequential.ts).
 */
export type LookPoint = { fraction: number; information: number };

/**
 * A look of a comparison whose maximum never changed. The spending function is read at the completed pairs over the
 * maximum, i.e. at the decisive pairs over the maximum information the tie share seen so far predicts
 * (information-based monitoring, Mehta & Tsiatis 2001), so a comparison with many ties spends alpha in the planned
 * shape; the last look (every pair complete) is fraction 1 and spends all that is left, at the information it
 * observed (Jennison & Turnbull 2000, 7.2). The information here is the decisive pairs (majority not tied) over the
 * maximum: the first look's, and every look's of a comparison whose looks predate issue 51; later looks grow it as the
 * statistic's observed information grows (src/batches/reallocated-look.ts, observedPoint).
 */
export function lookPoint(now: { completed: number; decisive: number; maxPairs: number; final: boolean }, designPairs = now.maxPairs): LookPoint {
  // Information stays on the scale of the design's maximum, should a removed pair lower the maximum later.
  return { fraction: now.final ? 1 : Math.min(1, now.completed / now.maxPairs), information: now.decisive / designPairs };
}

export type LookInput = {
  alpha: number;
  spending: StoppingRule['spending'];
  /** Futility stopping, or null; its drift follows from its effect and designPairs. */
  futility?: StoppingRule['futility'];
  /** The maximum the design was planned over: the comparison's pairs at its first look (a raise keeps the design). */
  designPairs: number;
  /** Where the looks taken before stood, in order. */
  earlier: readonly LookPoint[];
  now: LookPoint;
  statistic: Pick<LookStatistic, 'pValue' | 'z'>;
  /** Every pair of the comparison is complete: the last look, which spends what alpha is left. */
  final: boolean;
};

export type LookDecision = {
  fraction: number;
  information: number;
  critical: number;
  nominal: number;
  /** The alpha spent by this look, cumulated. */
  cumulativeAlpha: number;
  /** |z| below this stops for futility; null without futility stopping, at the last look, or where the look has none. */
  futility: number | null;
  /** The futility bound met the efficacy bound at this interim look: it was the last, and spent all the alpha left. */
  endsDesign: boolean;
  pValue: number;
  z: number;
  decision: 'continue' | 'efficacy' | 'futility' | 'final';
};

/**
 * One look: bounds from the spending function at the looks' fractions and the information they reached; the look's
 * p-value (look-statistic.ts) rejects at the efficacy bound's nominal level; failing that, |z| below the futility
 * bound stops for futility. Null when no look can be taken (no decisive pair yet, or no information gained).
 */
export function decideLook(input: LookInput): LookDecision | null {
  const last = input.earlier[input.earlier.length - 1];
  if (!(input.now.information > 0)) return null;
  if (last && !(input.now.fraction > last.fraction && input.now.information > last.information)) return null;
  const fractions = [...input.earlier.map((l) => l.fraction), input.now.fraction];
  const information = [...input.earlier.map((l) => l.information), input.now.information];
  const boundaries = boundariesAt(fractions, information, input, input.futility ?? null);
  const k = fractions.length - 1;
  const bound = input.final ? 0 : (boundaries.futility?.[k] ?? 0);
  const critical = boundaries.critical[k] as number;
  const pValue = input.statistic.pValue;
  const rejects = critical !== Infinity && pValue <= (boundaries.nominal[k] as number);
  const futile = !rejects && bound > 0 && input.statistic.z < bound;
  return {
    fraction: input.now.fraction,
    information: input.now.information,
    critical,
    nominal: boundaries.nominal[k] as number,
    cumulativeAlpha: boundaries.cumulativeAlpha[k] as number,
    futility: bound > 0 ? bound : null,
    endsDesign: boundaries.endsAt === k,
    pValue,
    z: input.statistic.z,
    decision: rejects ? 'efficacy' : futile ? 'futility' : input.final || boundaries.endsAt === k ? 'final' : 'continue',
  };
}

// Bounds by design and looks: a look recomputes every earlier look's bound (the recursion needs them), and the
// simulation and the plan ask for the same schedules thousands of times. Pure, so one bounded memo per process is safe.
const MAX_MEMO = 4096;
type Bounds = TwoSidedBoundaries & Partial<Pick<FutilityBoundaries, 'futility' | 'endsAt'>>;
const memo = new Map<string, Bounds>();

/** With futility, the efficacy bounds are the binding design's when it binds, and the futility bounds beside them. */
export function boundariesAt(
  fractions: readonly number[],
  information: readonly number[],
  { alpha, spending, designPairs }: Pick<LookInput, 'alpha' | 'spending' | 'designPairs'>,
  futility: StoppingRule['futility'],
): Bounds {
  const key = `${spending}|${alpha}|${futility ? `${futility.beta}|${futility.effect}|${futility.binding}|${designPairs}` : ''}|${fractions.join(',')}|${information.join(',')}`;
  const known = memo.get(key);
  if (known) return known;
  const computed: Bounds = futility
    ? futilityBoundaries(fractions, { family: spending, alpha, beta: futility.beta, drift: futilityDrift(futility.effect, designPairs), binding: futility.binding }, information)
    : twoSidedBoundaries(fractions, alpha, spending, information);
  if (memo.size >= MAX_MEMO) memo.delete(memo.keys().next().value as string);
  memo.set(key, computed);
  return computed;
}
