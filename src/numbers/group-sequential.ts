import { normalCdf, normalDensity, normalQuantile } from './normal.js';

// Two-sided group-sequential boundaries from a Lan-DeMets alpha-spending function (Lan & DeMets, Biometrika 1983),
// computed by the recursive numerical integration of Armitage, McPherson & Rowe (1969) as set out by Jennison &
// Turnbull (2000, ch. 19): the sub-density of Z_k on the continuation region is carried from look to look on a grid
// and integrated by Simpson's rule. The spending functions are rpact's `asOF` and `asP` (rpact 3.3, sided = 2),
// and the results agree with rpact to 1e-6 (test/numbers/group-sequential.test.ts).

export const SPENDING_FAMILIES = ['obrien-fleming', 'pocock'] as const;
export type SpendingFamily = (typeof SPENDING_FAMILIES)[number];

/** Bounds above this are no bound at all, as rpact prints them (Inf): the chance of crossing is below 1e-13. */
export const NO_BOUND_ABOVE = 7.5;
/** Where the grid ends: the standard normal mass beyond is below 1e-16. */
const GRID_END = 8.3;
/** The widest grid step; narrower when two looks are close (the transition kernel is then narrow). */
const MAX_STEP = 0.025;

/**
 * Alpha spent by information fraction t (0 < t <= 1), two-sided: O'Brien-Fleming type 4(1 - Phi(z_{1-alpha/4}/sqrt t))
 * and Pocock type alpha ln(1 + (e - 1) t), as rpact's getSpendingValueCpp with sided = 2.
 */
export function alphaSpent(family: SpendingFamily, alpha: number, t: number): number {
  if (t >= 1) return alpha;
  if (family === 'pocock') return alpha * Math.log(1 + (Math.E - 1) * t);
  return 4 * (1 - normalCdf(normalQuantile(1 - alpha / 4) / Math.sqrt(t)));
}

/** The sub-density of Z_k on its continuation region, on a Simpson grid: points and weight x density. */
type Grid = { z: Float64Array; mass: Float64Array };

function simpsonGrid(half: number, step: number): { z: Float64Array; weight: Float64Array } {
  const intervals = Math.max(2, 2 * Math.ceil(half / step));
  const h = (2 * half) / intervals;
  const z = new Float64Array(intervals + 1);
  const weight = new Float64Array(intervals + 1);
  for (let i = 0; i <= intervals; i++) {
    z[i] = -half + i * h;
    weight[i] = (h / 3) * (i === 0 || i === intervals ? 1 : i % 2 === 1 ? 4 : 2);
  }
  return { z, weight };
}

/** The step for look k's grid: fine enough for the kernel of the transition to look k + 1. */
function stepFor(fractions: readonly number[], k: number): number {
  const next = fractions[k + 1];
  const here = fractions[k] as number;
  if (next === undefined) return MAX_STEP;
  const kernelWidth = Math.sqrt((next - here) / here);
  return Math.min(MAX_STEP, kernelWidth / 8);
}

/** Z_k | Z_{k-1} = z is normal with mean z r and sd s (independent increments of the score, J&T 3.1). */
function transition(fractions: readonly number[], k: number): { r: number; s: number } {
  const before = fractions[k - 1] as number;
  const here = fractions[k] as number;
  return { r: Math.sqrt(before / here), s: Math.sqrt((here - before) / here) };
}

function firstGrid(bound: number, step: number): Grid {
  const { z, weight } = simpsonGrid(Math.min(bound, GRID_END), step);
  const mass = new Float64Array(z.length);
  for (let i = 0; i < z.length; i++) mass[i] = (weight[i] as number) * normalDensity(z[i] as number);
  return { z, mass };
}

/** P(continue up to look k - 1, then |Z_k| >= bound). */
function crossing(grid: Grid, r: number, s: number, bound: number): number {
  if (bound === Infinity) return 0;
  let total = 0;
  for (let i = 0; i < grid.z.length; i++) {
    const mean = (grid.z[i] as number) * r;
    total += (grid.mass[i] as number) * (normalCdf((-bound - mean) / s) + normalCdf((mean - bound) / s));
  }
  return total;
}

function nextGrid(grid: Grid, r: number, s: number, bound: number, step: number): Grid {
  const { z, weight } = simpsonGrid(Math.min(bound, GRID_END), step);
  const mass = new Float64Array(z.length);
  for (let j = 0; j < z.length; j++) {
    const y = z[j] as number;
    let density = 0;
    for (let i = 0; i < grid.z.length; i++) density += (grid.mass[i] as number) * normalDensity((y - (grid.z[i] as number) * r) / s);
    mass[j] = ((weight[j] as number) * density) / s;
  }
  return { z, mass };
}

/** d/dc of crossing(c): minus the density of |Z_k| at c on the paths that reach look k. */
function crossingSlope(grid: Grid, r: number, s: number, bound: number): number {
  let total = 0;
  for (let i = 0; i < grid.z.length; i++) {
    const mean = (grid.z[i] as number) * r;
    total += (grid.mass[i] as number) * (normalDensity((-bound - mean) / s) + normalDensity((bound - mean) / s));
  }
  return -total / s;
}

/**
 * The bound whose crossing probability is `target`: Newton's method kept inside a bisection bracket on [0, 7.5]
 * (the crossing probability falls as the bound rises); above NO_BOUND_ABOVE, no bound.
 */
function solveBound(grid: Grid, r: number, s: number, target: number, start: number): number {
  if (!(target > 0) || crossing(grid, r, s, NO_BOUND_ABOVE) > target) return Infinity;
  let lo = 0;
  let hi = NO_BOUND_ABOVE;
  let c = Math.min(Math.max(start, lo), hi);
  for (let i = 0; i < 100; i++) {
    const f = crossing(grid, r, s, c) - target;
    if (f > 0) lo = c;
    else hi = c;
    const slope = crossingSlope(grid, r, s, c);
    let next = slope < 0 ? c - f / slope : (lo + hi) / 2;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    if (Math.abs(next - c) < 1e-12 || hi - lo < 1e-12) return next;
    c = next;
  }
  return c;
}

export type TwoSidedBoundaries = {
  fractions: number[];
  /** Critical values on the z scale, |Z_k| >= c_k rejects; Infinity where no rejection is possible at that look. */
  critical: number[];
  /** Cumulative alpha spent at each look. */
  cumulativeAlpha: number[];
  /** Nominal two-sided significance levels 2(1 - Phi(c_k)), at which a look's own test rejects. */
  nominal: number[];
};

function checkFractions(fractions: readonly number[]): void {
  if (fractions.length === 0) throw new RangeError('at least one look is needed');
  let before = 0;
  for (const t of fractions) {
    if (!(t > before && t <= 1)) throw new RangeError('information fractions must increase within (0, 1]');
    before = t;
  }
}

/**
 * Critical values at the looks' information fractions for a two-sided level-alpha test spending alpha by `family`.
 * Look k's bound depends on the fractions up to k only, so a look taken later than planned changes no earlier bound.
 */
export function twoSidedBoundaries(fractions: readonly number[], alpha: number, family: SpendingFamily): TwoSidedBoundaries {
  checkFractions(fractions);
  const critical: number[] = [];
  const cumulativeAlpha: number[] = [];
  let grid: Grid | null = null;
  for (let k = 0; k < fractions.length; k++) {
    const spent = alphaSpent(family, alpha, fractions[k] as number);
    let bound: number;
    if (k === 0) {
      const z = normalQuantile(1 - spent / 2);
      bound = z > NO_BOUND_ABOVE ? Infinity : z;
    } else {
      grid = gridBefore(fractions, critical, k, grid);
      const { r, s } = transition(fractions, k);
      bound = solveBound(grid, r, s, spent - (cumulativeAlpha[k - 1] as number), Math.min(critical[k - 1] as number, NO_BOUND_ABOVE));
    }
    critical.push(bound);
    cumulativeAlpha.push(spent);
  }
  return { fractions: [...fractions], critical, cumulativeAlpha, nominal: critical.map((c) => 2 * normalCdf(-c)) };
}

/**
 * The bound of the last of `fractions` when the earlier looks' bounds are fixed (they were used) and the alpha this
 * look may spend is given: for a maximum information that changed between looks (Lan & DeMets 1983; Jennison &
 * Turnbull 2000, 7.2), where the spending function is read at fractions of the new maximum while the joint law of the
 * statistics depends only on the ratios of the information levels, which `fractions` carries (any common scale).
 * Infinity when nothing may be spent.
 */
export function boundAfter(fractions: readonly number[], earlierCritical: readonly number[], spend: number): number {
  checkFractions(fractions);
  const k = fractions.length - 1;
  if (earlierCritical.length !== k) throw new RangeError('one fixed bound is needed for each earlier look');
  if (!(spend > 0)) return Infinity;
  if (k === 0) {
    const z = normalQuantile(1 - spend / 2);
    return z > NO_BOUND_ABOVE ? Infinity : z;
  }
  let grid: Grid | null = null;
  for (let j = 1; j <= k; j++) grid = gridBefore(fractions, earlierCritical, j, grid);
  const { r, s } = transition(fractions, k);
  return solveBound(grid as Grid, r, s, spend, Math.min(earlierCritical[k - 1] as number, NO_BOUND_ABOVE));
}

/** The grid of look k - 1 (its step fitted to the transition to look k), from the grid of look k - 2. */
function gridBefore(fractions: readonly number[], critical: readonly number[], k: number, older: Grid | null): Grid {
  const step = stepFor(fractions, k - 1);
  const bound = critical[k - 1] as number;
  if (k === 1 || older === null) return firstGrid(bound, step);
  const { r, s } = transition(fractions, k - 1);
  return nextGrid(older, r, s, bound, step);
}

/**
 * The stage-wise ordering p-value (Armitage 1957; Fairbanks & Madsen 1982; J&T 8.4) of a two-sided design stopped at
 * look `stopLook` (0-based) with |Z| = `z`: the chance under the null of crossing at an earlier look, plus of reaching
 * this look and exceeding |z| at it.
 */
export function stagewisePValue(fractions: readonly number[], critical: readonly number[], stopLook: number, z: number): number {
  checkFractions(fractions.slice(0, stopLook + 1));
  const observed = Math.abs(z);
  let total = 0;
  let grid: Grid | null = null;
  for (let k = 0; k <= stopLook; k++) {
    const bound = k === stopLook ? observed : (critical[k] as number);
    if (k === 0) total += 2 * normalCdf(-bound);
    else {
      grid = gridBefore(fractions, critical, k, grid);
      const { r, s } = transition(fractions, k);
      total += crossing(grid, r, s, bound);
    }
  }
  return Math.min(1, total);
}
