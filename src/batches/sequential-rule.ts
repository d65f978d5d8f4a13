import { binomialTestP } from '../numbers/binomial-test.js';
import { futilityBoundaries, futilityDrift, type TwoSidedBoundaries, twoSidedBoundaries } from '../numbers/group-sequential.js';
import { normalQuantile } from '../numbers/normal.js';
import type { StoppingRule } from './batch.schema.js';

// What a group-sequential stopping rule decides at one look (issue 44; docs/researcher/sequential-batches.md). Pure:
// the caller counts the comparison's completed pairs and their majorities; the decision and what it was held to are
// stored by the caller.

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

export type LookInput = {
  alpha: number;
  spending: StoppingRule['spending'];
  /** Futility stopping, or null; its drift follows from its effect and maxPairs. */
  futility?: StoppingRule['futility'];
  maxPairs: number;
  /** Information fractions of the looks taken before, in order. */
  earlier: readonly number[];
  completed: number;
  winsA: number;
  winsB: number;
  /** Every pair of the comparison is complete: the last look, which spends what alpha is left. */
  final: boolean;
};

export type LookDecision = {
  fraction: number;
  critical: number;
  nominal: number;
  /** |z| below this stops for futility; null without futility stopping, at the last look, or where the look has none. */
  futility: number | null;
  pValue: number;
  z: number;
  decision: 'continue' | 'efficacy' | 'futility' | 'final';
};

/**
 * One look: the information fraction is decisive pairs (ties left out: they carry no information on the win rate)
 * over the comparison's pairs, or 1 at the last look; the bound comes from the spending function at the fractions
 * actually reached, and the exact two-sided binomial test of the pair majorities against 1/2 rejects at the bound's
 * nominal level. Null when no look can be taken (no decisive pair yet, or none since the last look).
 */
export function decideLook(input: LookInput): LookDecision | null {
  const decisive = input.winsA + input.winsB;
  if (decisive === 0) return null;
  const last = input.earlier[input.earlier.length - 1] ?? 0;
  const reached = input.final ? 1 : Math.min(1, decisive / input.maxPairs);
  if (!(reached > last)) return null;
  const boundaries = boundariesAt([...input.earlier, reached], input, input.futility ?? null);
  const k = boundaries.critical.length - 1;
  const bound = input.final ? 0 : (boundaries.futility?.[k] ?? 0);
  return lookOutcome(input, reached, boundaries.critical[k] as number, boundaries.nominal[k] as number, bound > 0 ? bound : null);
}

/**
 * A look's decision once its bounds are known: the exact two-sided binomial test of the pair majorities against 1/2
 * rejects at the efficacy bound's nominal level; failing that, |z| below the futility bound stops for futility
 * (whichever way the bounds were found: decideLook, or decideReallocatedLook).
 */
export function lookOutcome(
  input: Pick<LookInput, 'winsA' | 'winsB' | 'final'>,
  reached: number,
  critical: number,
  nominal: number,
  futility: number | null,
): LookDecision {
  const pValue = binomialTestP(input.winsA, input.winsA + input.winsB) ?? 1;
  const rawZ = Math.min(40, -normalQuantile(pValue / 2));
  const z = Number.isFinite(rawZ) ? rawZ : 40;
  const rejects = critical !== Infinity && pValue <= nominal;
  const futile = !rejects && futility !== null && z < futility;
  return { fraction: reached, critical, nominal, futility, pValue, z, decision: rejects ? 'efficacy' : futile ? 'futility' : input.final ? 'final' : 'continue' };
}

// Bounds by design and fractions: a look recomputes every earlier look's bound (the recursion needs them), and the
// simulation and the plan ask for the same schedules thousands of times. Pure, so one bounded memo per process is safe.
const MAX_MEMO = 4096;
const memo = new Map<string, TwoSidedBoundaries & { futility?: number[] }>();

/** With futility, the efficacy bounds are the binding design's when it binds, and the futility bounds beside them. */
function boundariesAt(
  fractions: readonly number[],
  { alpha, spending, maxPairs }: Pick<LookInput, 'alpha' | 'spending' | 'maxPairs'>,
  futility: StoppingRule['futility'],
): TwoSidedBoundaries & { futility?: number[] } {
  const key = `${spending}|${alpha}|${futility ? `${futility.beta}|${futility.effect}|${futility.binding}|${maxPairs}` : ''}|${fractions.join(',')}`;
  const known = memo.get(key);
  if (known) return known;
  const computed = futility
    ? futilityBoundaries(fractions, { family: spending, alpha, beta: futility.beta, drift: futilityDrift(futility.effect, maxPairs), binding: futility.binding })
    : twoSidedBoundaries(fractions, alpha, spending);
  if (memo.size >= MAX_MEMO) memo.delete(memo.keys().next().value as string);
  memo.set(key, computed);
  return computed;
}

/** A pair's outcome from its K judgments: the condition most of them chose, or a tie. */
export function pairMajority(votesA: number, votesB: number): 'a' | 'b' | 'tie' {
  return votesA > votesB ? 'a' : votesB > votesA ? 'b' : 'tie';
}
