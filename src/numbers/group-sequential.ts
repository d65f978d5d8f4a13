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
  return 4 * normalCdf(normalQuantile(alpha / 4) / Math.sqrt(t));
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
      const z = -normalQuantile(spent / 2);
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
    const z = -normalQuantile(spend / 2);
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

// Futility (issue 44): two-sided beta spending as rpact 3.3 does it (getDesignGroupSequential with sided = 2 and
// typeBetaSpending bsOF / bsP, which rpact marks experimental). Under the alternative Z_k is normal with mean
// drift sqrt(t_k); at look k a statistic with |Z_k| < f_k stops for futility, and f_k is set so that the chance under
// the alternative of having stopped for futility by look k is the beta spent by t_k. As in rpact: a look where the
// one-sided design's futility bound would be negative gets none (f_k = 0), and the beta spending is then rescaled
// over the looks that remain (rpact's betaAdjustment); f_k is at most c_k; and binding futility lowers the efficacy
// bounds, because a path that stopped for futility can no longer reject, while non-binding keeps them as without it.

/** Beta spent by information fraction t, rpact's bsOF 2(1 - Phi(z_{1-beta/2}/sqrt t)) and bsP beta ln(1 + (e - 1) t). */
export function betaSpent(family: SpendingFamily, beta: number, t: number): number {
  if (t >= 1) return beta;
  if (family === 'pocock') return beta * Math.log(1 + (Math.E - 1) * t);
  return 2 * normalCdf(normalQuantile(beta / 2) / Math.sqrt(t));
}

/** A look's continuation region, as intervals of z: the paths that neither crossed a bound nor stopped. */
type Region = [number, number][];

function regionOf(critical: number, futility: number): Region {
  const c = Math.min(critical, GRID_END);
  return futility > 0 ? [[-c, -Math.min(futility, c)], [Math.min(futility, c), c]] : [[-c, c]];
}

/** The sub-density of Z_k on a look's region (Simpson on each interval), Z_k having mean `mean` given no earlier look. */
function regionGrid(region: Region, step: number, density: (z: number) => number): Grid {
  const zs: number[] = [];
  const mass: number[] = [];
  for (const [lo, hi] of region) {
    if (!(hi > lo)) continue;
    const { z, weight } = simpsonGrid((hi - lo) / 2, step);
    for (let i = 0; i < z.length; i++) {
      const at = (z[i] as number) + (lo + hi) / 2;
      zs.push(at);
      mass.push((weight[i] as number) * density(at));
    }
  }
  return { z: Float64Array.from(zs), mass: Float64Array.from(mass) };
}

/** Z_k | Z_{k-1} = z is normal with mean z r + m and sd s under drift theta (J&T 3.1, with the drift's increment). */
function driftTransition(fractions: readonly number[], k: number, drift: number): { r: number; s: number; m: number } {
  const { r, s } = transition(fractions, k);
  const before = fractions[k - 1] as number;
  const here = fractions[k] as number;
  return { r, s, m: (drift * (here - before)) / Math.sqrt(here) };
}

/** Look k's grid on its region from look k - 1's grid (or from the normal at look 0). */
function advance(fractions: readonly number[], k: number, drift: number, region: Region, older: Grid | null): Grid {
  const step = stepFor(fractions, k);
  if (k === 0 || older === null) {
    const mean = drift * Math.sqrt(fractions[0] as number);
    return regionGrid(region, step, (z) => normalDensity(z - mean));
  }
  const { r, s, m } = driftTransition(fractions, k, drift);
  return regionGrid(region, step, (y) => {
    let density = 0;
    for (let i = 0; i < older.z.length; i++) density += (older.mass[i] as number) * normalDensity((y - (older.z[i] as number) * r - m) / s);
    return density / s;
  });
}

/** P(reach look k, then Z_k in [lo, hi]), from look k - 1's grid (null at the first look). */
function chanceIn(fractions: readonly number[], k: number, drift: number, grid: Grid | null, lo: number, hi: number): number {
  if (!(hi > lo)) return 0;
  if (k === 0 || grid === null) {
    const mean = drift * Math.sqrt(fractions[0] as number);
    return normalCdf(hi - mean) - normalCdf(lo - mean);
  }
  const { r, s, m } = driftTransition(fractions, k, drift);
  let total = 0;
  for (let i = 0; i < grid.z.length; i++) {
    const mean = (grid.z[i] as number) * r + m;
    total += (grid.mass[i] as number) * (normalCdf((hi - mean) / s) - normalCdf((lo - mean) / s));
  }
  return total;
}

/** The root of an increasing function on [lo, hi] by bisection with a secant step (f(lo) < 0 < f(hi) assumed). */
function increasingRoot(f: (x: number) => number, lo: number, hi: number, tolerance = 1e-12): number {
  let a = lo;
  let b = hi;
  let fa = f(a);
  let fb = f(b);
  for (let i = 0; i < 200 && b - a > tolerance; i++) {
    let x = a - (fa * (b - a)) / (fb - fa);
    if (!(x > a + (b - a) * 0.01 && x < b - (b - a) * 0.01)) x = (a + b) / 2;
    const fx = f(x);
    if (fx === 0) return x;
    if (fx < 0) [a, fa] = [x, fx];
    else [b, fb] = [x, fx];
  }
  return (a + b) / 2;
}

export type FutilityDesign = {
  family: SpendingFamily;
  alpha: number;
  beta: number;
  /** The z-scale mean at full information under the alternative (see futilityDrift). */
  drift: number;
  binding: boolean;
};

export type FutilityBoundaries = TwoSidedBoundaries & {
  /** |Z_k| < f_k stops for futility; 0 where a look has no futility bound (and always at the last look). */
  futility: number[];
  /** Cumulative beta spent at each look (after rpact's rescaling), the target of the futility bounds. */
  cumulativeBeta: number[];
};

/**
 * The z-scale drift of a comparison whose decisive pairs' majorities prefer one condition with chance `effect`, at
 * `maxPairs` pairs: the exact test's z is about (2 wins - n)/sqrt n, whose mean is (2 effect - 1) sqrt n.
 */
export function futilityDrift(effect: number, maxPairs: number): number {
  return (2 * effect - 1) * Math.sqrt(maxPairs);
}

const EVERYWHERE = 40;

/**
 * A null-drift efficacy bound at look k whose crossing chance (after the earlier looks' regions) is `target`. When the
 * null's paths that reach look k hold less than the target (futility bounds that met the efficacy bounds earlier, as
 * when the maximum is far above what the effect needs), no bound spends it: the look then keeps `fallback`, the bound
 * without futility, which spends less, rather than rejecting every path that reaches it.
 */
function bindingCritical(fractions: readonly number[], k: number, grid: Grid | null, target: number, fallback: number): number {
  if (k === 0) {
    const z = -normalQuantile(target / 2);
    return z > NO_BOUND_ABOVE ? Infinity : z;
  }
  const reach = chanceIn(fractions, k, 0, grid, -EVERYWHERE, EVERYWHERE);
  const crossingAt = (c: number) => reach - chanceIn(fractions, k, 0, grid, -c, c);
  if (!(target > 0) || crossingAt(NO_BOUND_ABOVE) > target) return Infinity;
  if (reach <= target) return fallback;
  return increasingRoot((c) => target - crossingAt(c), 0, NO_BOUND_ABOVE);
}

/** The one-sided futility bound (Z_k < f stops) whose cumulative chance under the drift is `target`: only its sign is used. */
function oneSidedFutility(fractions: readonly number[], k: number, drift: number, grid: Grid | null, spentBefore: number, target: number): number {
  return increasingRoot((f) => spentBefore + chanceIn(fractions, k, drift, grid, -EVERYWHERE, f) - target, -6, 5);
}

/** The two-sided futility bound in [0, c]: |Z_k| < f holds `target` of the alternative's paths that reach look k. */
function twoSidedFutility(fractions: readonly number[], k: number, drift: number, grid: Grid | null, critical: number, target: number): number {
  const c = Math.min(critical, GRID_END);
  if (!(target > 0)) return 0;
  if (chanceIn(fractions, k, drift, grid, -c, c) <= target) return c;
  return increasingRoot((f) => chanceIn(fractions, k, drift, grid, -f, f) - target, 0, c);
}

/** rpact's betaAdjustment: nothing spent before the first look with a futility bound, the rest rescaled to reach beta. */
function adjustedBeta(design: FutilityDesign, fractions: readonly number[], first: number, k: number): number {
  const raw = (t: number) => betaSpent(design.family, design.beta, t);
  if (first <= 0) return raw(fractions[k] as number);
  if (k < first) return 0;
  const base = raw(fractions[first - 1] as number);
  return ((raw(fractions[k] as number) - base) / (design.beta - base)) * design.beta;
}

/**
 * Efficacy and futility bounds at the looks' information fractions for a two-sided level-alpha test with beta spent
 * at the design's drift. Look k's bounds depend on the fractions up to k only (a look short of fraction 1 is an interim
 * look). The futility bound at fraction 1 is returned too (the standardized design needs it; the last look decides on
 * the efficacy bound alone).
 */
export function futilityBoundaries(fractions: readonly number[], design: FutilityDesign): FutilityBoundaries {
  const { shortfall: _shortfall, ...boundaries } = futilityCore(fractions, design);
  return boundaries;
}

/** The bounds, and at the last look the alternative's chance of |Z| < c_K beyond the beta left (the drift's fit). */
function futilityCore(fractions: readonly number[], design: FutilityDesign): FutilityBoundaries & { shortfall: number } {
  checkFractions(fractions);
  let shortfall = 0;
  const plain = twoSidedBoundaries(fractions, design.alpha, design.family);
  const critical: number[] = [];
  const futility: number[] = [];
  const cumulativeAlpha: number[] = [];
  const cumulativeBeta: number[] = [];
  let nullGrid: Grid | null = null;
  let altGrid: Grid | null = null;
  let oneGrid: Grid | null = null;
  let firstWithFutility = -1;
  let spentBeta = 0;
  let spentOne = 0;
  for (let k = 0; k < fractions.length; k++) {
    const t = fractions[k] as number;
    const alphaNow = alphaSpent(design.family, design.alpha, t);
    const withoutFutility = plain.critical[k] as number;
    const c = design.binding ? bindingCritical(fractions, k, nullGrid, alphaNow - (cumulativeAlpha[k - 1] ?? 0), withoutFutility) : withoutFutility;
    const rawBeta = betaSpent(design.family, design.beta, t);
    const one = oneSidedFutility(fractions, k, design.drift, oneGrid, spentOne, rawBeta);
    // The last look is the one at full information; a look before it is interim even when it is the last one so far.
    const last = t >= 1;
    if (!last && firstWithFutility < 0 && one > 0) firstWithFutility = k;
    const target = adjustedBeta(design, fractions, firstWithFutility < 0 && !last ? fractions.length : firstWithFutility, k);
    const f = !last && one < 0 ? 0 : twoSidedFutility(fractions, k, design.drift, altGrid, c, target - spentBeta);
    spentOne += chanceIn(fractions, k, design.drift, oneGrid, -EVERYWHERE, one);
    spentBeta += f > 0 ? chanceIn(fractions, k, design.drift, altGrid, -f, f) : 0;
    critical.push(c);
    futility.push(f);
    cumulativeAlpha.push(alphaNow);
    cumulativeBeta.push(spentBeta);
    if (last || k === fractions.length - 1) {
      const c0 = Math.min(c, GRID_END);
      shortfall = chanceIn(fractions, k, design.drift, altGrid, -c0, c0) - (target - (cumulativeBeta[k - 1] ?? 0));
      break;
    }
    const region = regionOf(c, f);
    altGrid = advance(fractions, k, design.drift, region, altGrid);
    oneGrid = advance(fractions, k, design.drift, [[Math.max(one, -GRID_END), Math.min(c, GRID_END)]], oneGrid);
    if (design.binding) nullGrid = advance(fractions, k, 0, region, nullGrid);
  }
  return { fractions: [...fractions], critical, cumulativeAlpha, nominal: critical.map((c) => 2 * normalCdf(-c)), futility, cumulativeBeta, shortfall };
}

/**
 * rpact's standardized design: the drift at which the last look's futility bound meets its efficacy bound, so that
 * the chance of rejecting under the drift is 1 - beta (getDesignGroupSequential's `shift`).
 */
export function standardizedDrift(fractions: readonly number[], design: Omit<FutilityDesign, 'drift'>): number {
  return increasingRoot((drift) => -futilityCore(fractions, { ...design, drift }).shortfall, 0.5, 8, 1e-9);
}
