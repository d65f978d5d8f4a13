import { normalCdf, normalDensity, normalQuantile } from './normal.js';

// Two-sided group-sequential boundaries from a Lan-DeMets alpha-spending function (Lan & DeMets, Biometrika 1983),
// computed by the recursive numerical integration of Armitage, McPherson & Rowe (1969) as set out by Jennison &
// Turnbull (2000, ch. 19): the sub-density of Z_k on the continuation region is carried from look to look on a grid
// and integrated by Simpson's rule. The spending functions are rpact's `asOF` and `asP` (rpact 3.3, sided = 2),
// and the results agree with rpact to 1e-6 (test/numbers/group-sequential.test.ts).
//
// Two scales (issue 51; Jennison & Turnbull 2000, 7.2): `fractions` are where the spending function is read (the
// share of the planned maximum a look stands at; 1 at the last look, which spends what is left), and `information`
// sets the looks' correlations, Corr(Z_j, Z_k) = sqrt(I_j / I_k), and the drift's mean theta sqrt(I_k) (on the scale
// where the maximum planned information is 1). They are the same unless given apart: a comparison whose pairs tie
// reaches less information than planned, and its last look spends the rest at the information observed.

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

/**
 * The sub-density of Z_k on its continuation region, on a Simpson grid: points and weight x density. The points are
 * runs of equal steps (one run, or one per interval of a futility region), which kernelSum walks without exp.
 */
type Run = { start: number; end: number; z0: number; h: number };
type Grid = { z: Float64Array; mass: Float64Array; runs: Run[] };

function simpsonGrid(half: number, step: number): { z: Float64Array; weight: Float64Array; h: number } {
  const intervals = Math.max(2, 2 * Math.ceil(half / step));
  const h = (2 * half) / intervals;
  const z = new Float64Array(intervals + 1);
  const weight = new Float64Array(intervals + 1);
  for (let i = 0; i <= intervals; i++) {
    z[i] = -half + i * h;
    weight[i] = (h / 3) * (i === 0 || i === intervals ? 1 : i % 2 === 1 ? 4 : 2);
  }
  return { z, weight, h };
}

const LOG_SQRT_2PI = 0.9189385332046728;
/** Where a kernel term is negligible, once the terms are falling: phi(x) below 1e-22 (|x| above 10), far under 1e-12 of any sum. */
const NEGLIGIBLE = 1e-22;

/**
 * sum_i mass_i phi((y - r z_i - m) / s): the density of the next look's statistic at y, times s. The transition (J&T
 * 19.2) costs one Gaussian per pair of grid points; on a run of equal steps the argument falls by d = r h / s from
 * point to point, and phi(x - d) / phi(x) = exp(x d - d^2 / 2), a ratio that itself changes by exp(-d^2) a step. So
 * each run is walked out from the point nearest the kernel's centre, multiplying, and stopped where the terms vanish:
 * two exp a run instead of one a point (issue 51: the answer path and the simulations compute these for every look).
 */
function kernelSum(grid: Grid, y: number, r: number, s: number, m: number): number {
  const mass = grid.mass;
  let total = 0;
  for (const run of grid.runs) {
    const n = run.end - run.start;
    const d = (r * run.h) / s;
    const decay = Math.exp(-d * d);
    const centre = Math.min(n - 1, Math.max(0, Math.round(((y - m) / r - run.z0) / run.h)));
    const x0 = (y - m - r * (run.z0 + centre * run.h)) / s;
    const g0 = Math.exp(-0.5 * x0 * x0 - LOG_SQRT_2PI);
    const at = run.start + centre;
    let sum = (mass[at] as number) * g0;
    let g = g0;
    let ratio = Math.exp(x0 * d - 0.5 * d * d);
    for (let i = at + 1, end = run.start + n; i < end; i++) {
      g *= ratio;
      ratio *= decay;
      sum += (mass[i] as number) * g;
      if (g < NEGLIGIBLE && ratio < 1) break;
    }
    g = g0;
    ratio = Math.exp(-x0 * d - 0.5 * d * d);
    for (let i = at - 1; i >= run.start; i--) {
      g *= ratio;
      ratio *= decay;
      sum += (mass[i] as number) * g;
      if (g < NEGLIGIBLE && ratio < 1) break;
    }
    total += sum;
  }
  return total;
}

/** The step for look k's grid: fine enough for the kernel of the transition to look k + 1. */
function stepFor(information: readonly number[], k: number): number {
  const next = information[k + 1];
  const here = information[k] as number;
  if (next === undefined) return MAX_STEP;
  const kernelWidth = Math.sqrt((next - here) / here);
  return Math.min(MAX_STEP, kernelWidth / 8);
}

/** Z_k | Z_{k-1} = z is normal with mean z r and sd s (independent increments of the score, J&T 3.1). */
function transition(information: readonly number[], k: number): { r: number; s: number } {
  const before = information[k - 1] as number;
  const here = information[k] as number;
  return { r: Math.sqrt(before / here), s: Math.sqrt((here - before) / here) };
}

function firstGrid(bound: number, step: number): Grid {
  const { z, weight, h } = simpsonGrid(Math.min(bound, GRID_END), step);
  const mass = new Float64Array(z.length);
  for (let i = 0; i < z.length; i++) mass[i] = (weight[i] as number) * normalDensity(z[i] as number);
  return { z, mass, runs: [{ start: 0, end: z.length, z0: z[0] as number, h }] };
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
  const { z, weight, h } = simpsonGrid(Math.min(bound, GRID_END), step);
  const mass = new Float64Array(z.length);
  for (let j = 0; j < z.length; j++) mass[j] = ((weight[j] as number) * kernelSum(grid, z[j] as number, r, s, 0)) / s;
  return { z, mass, runs: [{ start: 0, end: z.length, z0: z[0] as number, h }] };
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

/** Information levels on any common scale: positive and increasing, one per look. */
function checkInformation(information: readonly number[], looks: number): void {
  if (information.length !== looks) throw new RangeError('one information level is needed for each look');
  let before = 0;
  for (const i of information) {
    if (!(i > before && Number.isFinite(i))) throw new RangeError('information levels must increase and be positive');
    before = i;
  }
}

/** The first look's bound for a two-sided spend; no bound above NO_BOUND_ABOVE. */
function firstBound(spend: number): number {
  if (!(spend > 0)) return Infinity;
  const z = -normalQuantile(spend / 2);
  return z > NO_BOUND_ABOVE ? Infinity : z;
}

/**
 * Critical values at the looks' information fractions for a two-sided level-alpha test spending alpha by `family`.
 * Look k's bound depends on the looks up to k only, so a look taken later than planned changes no earlier bound.
 * `information` (default: the fractions) sets the looks' correlations; the last look at fraction 1 spends all alpha.
 */
export function twoSidedBoundaries(fractions: readonly number[], alpha: number, family: SpendingFamily, information: readonly number[] = fractions): TwoSidedBoundaries {
  checkFractions(fractions);
  const cumulativeAlpha = fractions.map((t) => alphaSpent(family, alpha, t));
  return { fractions: [...fractions], ...spendingBoundaries(information, cumulativeAlpha) };
}

/**
 * The bounds of a design without futility that spends exactly `cumulativeAlpha` by each look, at the given
 * information levels: twoSidedBoundaries when the spending is a family's, and the bounds a repeated confidence interval
 * is built from whatever was spent (J&T 9.1).
 */
export function spendingBoundaries(information: readonly number[], cumulativeAlpha: readonly number[]): Omit<TwoSidedBoundaries, 'fractions'> {
  checkInformation(information, cumulativeAlpha.length);
  const keys = prefixKeys([information, cumulativeAlpha]);
  const known = longestPrefix(plainPrefixes, keys);
  const critical: number[] = known ? [...known.value.critical] : [];
  let grid: Grid | null = known?.value.grid ?? null;
  for (let k = critical.length; k < information.length; k++) {
    const spend = (cumulativeAlpha[k] as number) - (k === 0 ? 0 : (cumulativeAlpha[k - 1] as number));
    if (k === 0) critical.push(firstBound(spend));
    else {
      grid = gridBefore(information, critical, k, grid);
      const { r, s } = transition(information, k);
      critical.push(spend > 0 ? solveBound(grid, r, s, spend, Math.min(critical[k - 1] as number, NO_BOUND_ABOVE)) : Infinity);
    }
    remember(plainPrefixes, keys[k] as string, { critical: [...critical], grid });
  }
  return { critical, cumulativeAlpha: [...cumulativeAlpha], nominal: critical.map((c) => 2 * normalCdf(-c)) };
}

// A look recomputes the recursion of every earlier look, with the same inputs as the look before it (the answer path's
// looks, and the simulations' studies, share their first looks): the state after each look is kept by its inputs, so
// a new look costs one step of the recursion. Pure inputs to pure outputs: one bounded memo per process is safe.
const PREFIX_MEMO = 2048;
type Prefixes<T> = Map<string, T>;
const plainPrefixes: Prefixes<{ critical: number[]; grid: Grid | null }> = new Map();

/** The key of each prefix of the looks' inputs: keys[k] covers looks 0..k of every array given. */
function prefixKeys(arrays: readonly (readonly number[])[], head = ''): string[] {
  const keys: string[] = [];
  let key = head;
  const n = Math.max(...arrays.map((a) => a.length));
  for (let k = 0; k < n; k++) {
    key += `;${arrays.map((a) => a[k] ?? '').join(',')}`;
    keys.push(key);
  }
  return keys;
}

/** The longest remembered prefix but the whole (what is left to compute is at least the last look). */
function longestPrefix<T>(memo: Prefixes<T>, keys: readonly string[]): { length: number; value: T } | null {
  for (let k = keys.length - 2; k >= 0; k--) {
    const value = memo.get(keys[k] as string);
    if (value !== undefined) return { length: k + 1, value };
  }
  return null;
}

function remember<T>(memo: Prefixes<T>, key: string, value: T): void {
  if (memo.size >= PREFIX_MEMO) memo.delete(memo.keys().next().value as string);
  memo.set(key, value);
}

/**
 * The bound of the last look when the earlier looks' bounds are fixed (they were used) and the alpha this look may
 * spend is given: for a look whose spending was set apart from the family's (a maximum that changed between looks,
 * Lan & DeMets 1983; Jennison & Turnbull 2000, 7.2), at information levels on any common scale (the joint law of the
 * statistics depends only on their ratios). Infinity when nothing may be spent.
 */
export function boundAfter(information: readonly number[], earlierCritical: readonly number[], spend: number): number {
  checkInformation(information, information.length);
  const k = information.length - 1;
  if (k < 0) throw new RangeError('at least one look is needed');
  if (earlierCritical.length !== k) throw new RangeError('one fixed bound is needed for each earlier look');
  if (!(spend > 0)) return Infinity;
  if (k === 0) return firstBound(spend);
  let grid: Grid | null = null;
  for (let j = 1; j <= k; j++) grid = gridBefore(information, earlierCritical, j, grid);
  const { r, s } = transition(information, k);
  return solveBound(grid as Grid, r, s, spend, Math.min(earlierCritical[k - 1] as number, NO_BOUND_ABOVE));
}

/** The grid of look k - 1 (its step fitted to the transition to look k), from the grid of look k - 2. */
function gridBefore(information: readonly number[], critical: readonly number[], k: number, older: Grid | null): Grid {
  const step = stepFor(information, k - 1);
  const bound = critical[k - 1] as number;
  if (k === 1 || older === null) return firstGrid(bound, step);
  const { r, s } = transition(information, k - 1);
  return nextGrid(older, r, s, bound, step);
}

/**
 * The stage-wise ordering p-value (Armitage 1957; Fairbanks & Madsen 1982; J&T 8.4) of a two-sided design stopped at
 * look `stopLook` (0-based) with |Z| = `z`: the chance under the null of crossing at an earlier look, plus of reaching
 * this look and exceeding |z| at it, at the looks' information levels (any common scale). With `futility` (binding
 * futility bounds, 0 where a look had none), a path reaches the next look only through its continuation region
 * f_k <= |Z_k| < c_k: the paths a binding design stops for futility cannot cross later (issue 51). Non-binding futility
 * is left out, as rpact and J&T do: the p-value is then the one of the design without it, which is conservative.
 */
export function stagewisePValue(information: readonly number[], critical: readonly number[], stopLook: number, z: number, futility?: readonly number[]): number {
  checkInformation(information.slice(0, stopLook + 1), stopLook + 1);
  const observed = Math.abs(z);
  if (futility?.some((f) => f > 0)) return Math.min(1, binding(information, critical, futility, stopLook, observed));
  let total = 0;
  let grid: Grid | null = null;
  for (let k = 0; k <= stopLook; k++) {
    const bound = k === stopLook ? observed : (critical[k] as number);
    if (k === 0) total += 2 * normalCdf(-bound);
    else {
      grid = gridBefore(information, critical, k, grid);
      const { r, s } = transition(information, k);
      total += crossing(grid, r, s, bound);
    }
  }
  return Math.min(1, total);
}

/** The stage-wise p-value over binding continuation regions (see stagewisePValue). */
function binding(information: readonly number[], critical: readonly number[], futility: readonly number[], stopLook: number, observed: number): number {
  let total = 0;
  let grid: Grid | null = null;
  for (let k = 0; k <= stopLook; k++) {
    const bound = k === stopLook ? observed : (critical[k] as number);
    total += chanceIn(information, k, 0, grid, -EVERYWHERE, -bound) + chanceIn(information, k, 0, grid, bound, EVERYWHERE);
    if (k < stopLook) grid = advance(information, k, 0, regionOf(critical[k] as number, futility[k] ?? 0), grid);
  }
  return total;
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

/** The sub-density of Z_k on a look's region (Simpson on each interval), from the density of Z_k at each point. */
function regionGrid(region: Region, step: number, density: (z: number) => number): Grid {
  const zs: number[] = [];
  const mass: number[] = [];
  const runs: Run[] = [];
  for (const [lo, hi] of region) {
    if (!(hi > lo)) continue;
    const { z, weight, h } = simpsonGrid((hi - lo) / 2, step);
    const start = zs.length;
    for (let i = 0; i < z.length; i++) {
      const at = (z[i] as number) + (lo + hi) / 2;
      zs.push(at);
      mass.push((weight[i] as number) * density(at));
    }
    runs.push({ start, end: zs.length, z0: zs[start] as number, h });
  }
  return { z: Float64Array.from(zs), mass: Float64Array.from(mass), runs };
}

/** Z_k | Z_{k-1} = z is normal with mean z r + m and sd s under drift theta (J&T 3.1, with the drift's increment). */
function driftTransition(information: readonly number[], k: number, drift: number): { r: number; s: number; m: number } {
  const { r, s } = transition(information, k);
  const before = information[k - 1] as number;
  const here = information[k] as number;
  return { r, s, m: (drift * (here - before)) / Math.sqrt(here) };
}

/** Look k's grid on its region from look k - 1's grid (or from the normal at look 0). */
function advance(information: readonly number[], k: number, drift: number, region: Region, older: Grid | null): Grid {
  const step = stepFor(information, k);
  if (k === 0 || older === null) {
    const mean = drift * Math.sqrt(information[0] as number);
    return regionGrid(region, step, (z) => normalDensity(z - mean));
  }
  const { r, s, m } = driftTransition(information, k, drift);
  return regionGrid(region, step, (y) => kernelSum(older, y, r, s, m) / s);
}

/** P(reach look k, then Z_k in [lo, hi]), from look k - 1's grid (null at the first look). */
function chanceIn(information: readonly number[], k: number, drift: number, grid: Grid | null, lo: number, hi: number): number {
  if (!(hi > lo)) return 0;
  if (k === 0 || grid === null) {
    const mean = drift * Math.sqrt(information[0] as number);
    return normalCdf(hi - mean) - normalCdf(lo - mean);
  }
  const { r, s, m } = driftTransition(information, k, drift);
  let total = 0;
  for (let i = 0; i < grid.z.length; i++) {
    const mean = (grid.z[i] as number) * r + m;
    total += (grid.mass[i] as number) * (normalCdf((hi - mean) / s) - normalCdf((lo - mean) / s));
  }
  return total;
}

/**
 * The root of an increasing function on [lo, hi] (f(lo) < 0 < f(hi) assumed) by the Illinois variant of regula falsi
 * (Dowell & Jarratt 1971): an end kept twice running has its value halved, so both ends close in on the root
 * superlinearly instead of one staying put; a step that falls outside the bracket is a bisection.
 */
function increasingRoot(f: (x: number) => number, lo: number, hi: number, tolerance = 1e-12): number {
  let a = lo;
  let b = hi;
  let fa = f(a);
  let fb = f(b);
  let kept = 0;
  for (let i = 0; i < 200 && b - a > tolerance; i++) {
    let x = a - (fa * (b - a)) / (fb - fa);
    if (!(x > a && x < b)) x = (a + b) / 2;
    const fx = f(x);
    if (fx === 0) return x;
    if (fx < 0) {
      [a, fa] = [x, fx];
      if (kept < 0) fb /= 2;
      kept = kept < 0 ? kept - 1 : -1;
    } else {
      [b, fb] = [x, fx];
      if (kept > 0) fa /= 2;
      kept = kept > 0 ? kept + 1 : 1;
    }
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
  /** The interim look (0-based) where the futility bound met the efficacy bound, which then spent all alpha; or null. */
  endsAt: number | null;
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
function bindingCritical(information: readonly number[], k: number, grid: Grid | null, target: number, fallback: () => number): number {
  if (k === 0) {
    const z = -normalQuantile(target / 2);
    return z > NO_BOUND_ABOVE ? Infinity : z;
  }
  const reach = chanceIn(information, k, 0, grid, -EVERYWHERE, EVERYWHERE);
  const crossingAt = (c: number) => reach - chanceIn(information, k, 0, grid, -c, c);
  if (!(target > 0) || crossingAt(NO_BOUND_ABOVE) > target) return Infinity;
  if (reach <= target) return fallback();
  return increasingRoot((c) => target - crossingAt(c), 0, NO_BOUND_ABOVE);
}

/** The one-sided futility bound (Z_k < f stops) whose cumulative chance under the drift is `target`: only its sign is used. */
function oneSidedFutility(information: readonly number[], k: number, drift: number, grid: Grid | null, spentBefore: number, target: number): number {
  return increasingRoot((f) => spentBefore + chanceIn(information, k, drift, grid, -EVERYWHERE, f) - target, -6, 5);
}

/** The two-sided futility bound in [0, c]: |Z_k| < f holds `target` of the alternative's paths that reach look k. */
function twoSidedFutility(information: readonly number[], k: number, drift: number, grid: Grid | null, critical: number, target: number): number {
  const c = Math.min(critical, GRID_END);
  if (!(target > 0)) return 0;
  if (chanceIn(information, k, drift, grid, -c, c) <= target) return c;
  return increasingRoot((f) => chanceIn(information, k, drift, grid, -f, f) - target, 0, c);
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
 * at the design's drift. Look k's bounds depend on the looks up to k only (a look short of fraction 1 is an interim
 * look). The futility bound at fraction 1 is returned too (the standardized design needs it; the last look decides on
 * the efficacy bound alone). `information` (default: the fractions) sets the correlations and the drift's means.
 *
 * An interim look whose futility bound reaches its efficacy bound stops every path: it is the last look, so it spends
 * all the alpha left (issue 51: with the drift of a stated effect over a generous maximum, the bounds can meet before
 * fraction 1, and keeping the look's own spending threw the rest away, 0.0244 of 0.05 spent for O'Brien-Fleming at
 * 200 pairs). rpact avoids the case by its standardized drift (the bounds meet at fraction 1); a batch's maximum is
 * fixed by its pairs, so we keep the effect's drift and end the design where the bounds meet (`endsAt`).
 */
export function futilityBoundaries(fractions: readonly number[], design: FutilityDesign, information: readonly number[] = fractions): FutilityBoundaries {
  const { shortfall: _shortfall, ...boundaries } = futilityCore(fractions, design, information);
  return boundaries;
}

/** The running state of futilityCore: the three sub-densities carried from look to look, and what was spent. */
type FutilityState = { nullGrid: Grid | null; altGrid: Grid | null; oneGrid: Grid | null; firstWithFutility: number; spentBeta: number; spentOne: number };

/** The bounds, and at the last look the alternative's chance of |Z| < c_K beyond the beta left (the drift's fit). */
function futilityCore(fractions: readonly number[], design: FutilityDesign, information: readonly number[]): FutilityBoundaries & { shortfall: number } {
  checkFractions(fractions);
  checkInformation(information, fractions.length);
  // The bounds without futility: the efficacy bounds of a non-binding design; a binding one needs them only rarely.
  let plainBounds: TwoSidedBoundaries | null = null;
  const plain = () => (plainBounds ??= twoSidedBoundaries(fractions, design.alpha, design.family, information));
  // The state after look k depends on look k + 1's information too (its grid's step): it is kept under key k + 1.
  const keys = prefixKeys([fractions, information], `${design.family}|${design.alpha}|${design.beta}|${design.drift}|${design.binding}`);
  const known = longestPrefix(futilityPrefixes, keys);
  const out: FutilityBoundaries = known ? copyBoundaries(known.value.out, fractions) : { fractions: [...fractions], critical: [], cumulativeAlpha: [], nominal: [], futility: [], cumulativeBeta: [], endsAt: null };
  const state: FutilityState = known ? { ...known.value.state } : { nullGrid: null, altGrid: null, oneGrid: null, firstWithFutility: -1, spentBeta: 0, spentOne: 0 };
  let shortfall = 0;
  for (let k = out.critical.length; k < fractions.length; k++) {
    const t = fractions[k] as number;
    const last = t >= 1;
    let alphaNow = alphaSpent(design.family, design.alpha, t);
    const spentBefore = out.cumulativeAlpha[k - 1] ?? 0;
    const efficacy = (spend: number, fallback: () => number) => (design.binding ? bindingCritical(information, k, state.nullGrid, spend, fallback) : fallback());
    let c = efficacy(alphaNow - spentBefore, () => plain().critical[k] as number);
    const rawBeta = betaSpent(design.family, design.beta, t);
    const one = oneSidedFutility(information, k, design.drift, state.oneGrid, state.spentOne, rawBeta);
    // The last look is the one at full information; a look before it is interim even when it is the last one so far.
    if (!last && state.firstWithFutility < 0 && one > 0) state.firstWithFutility = k;
    const target = adjustedBeta(design, fractions, state.firstWithFutility < 0 && !last ? fractions.length : state.firstWithFutility, k);
    let f = !last && one < 0 ? 0 : twoSidedFutility(information, k, design.drift, state.altGrid, c, target - state.spentBeta);
    const meets = !last && f > 0 && f >= Math.min(c, GRID_END);
    if (meets) {
      // Every path stops here: spend what is left, at the bound without futility's recursion for non-binding bounds.
      alphaNow = design.alpha;
      c = efficacy(alphaNow - spentBefore, () => boundAfter(information.slice(0, k + 1), plain().critical.slice(0, k), alphaNow - spentBefore));
      f = Math.min(c, GRID_END);
      out.endsAt = k;
    }
    state.spentOne += chanceIn(information, k, design.drift, state.oneGrid, -EVERYWHERE, one);
    state.spentBeta += f > 0 ? chanceIn(information, k, design.drift, state.altGrid, -f, f) : 0;
    out.critical.push(c);
    out.futility.push(f);
    out.cumulativeAlpha.push(alphaNow);
    out.cumulativeBeta.push(state.spentBeta);
    if (meets) {
      // A drift that ends the design before fraction 1 is too large for the standardized design's fit.
      shortfall = -1;
      fillAfterEnd(out, fractions.length, design.alpha);
      break;
    }
    if (last || k === fractions.length - 1) {
      const c0 = Math.min(c, GRID_END);
      shortfall = chanceIn(information, k, design.drift, state.altGrid, -c0, c0) - (target - (out.cumulativeBeta[k - 1] ?? 0));
      break;
    }
    const region = regionOf(c, f);
    state.altGrid = advance(information, k, design.drift, region, state.altGrid);
    state.oneGrid = advance(information, k, design.drift, [[Math.max(one, -GRID_END), Math.min(c, GRID_END)]], state.oneGrid);
    if (design.binding) state.nullGrid = advance(information, k, 0, region, state.nullGrid);
    remember(futilityPrefixes, keys[k + 1] as string, { out: copyBoundaries(out, fractions), state: { ...state } });
  }
  out.nominal = out.critical.map((c) => 2 * normalCdf(-c));
  return { ...out, shortfall };
}

const futilityPrefixes: Prefixes<{ out: FutilityBoundaries; state: FutilityState }> = new Map();

function copyBoundaries(b: FutilityBoundaries, fractions: readonly number[]): FutilityBoundaries {
  return { fractions: [...fractions], critical: [...b.critical], cumulativeAlpha: [...b.cumulativeAlpha], nominal: [], futility: [...b.futility], cumulativeBeta: [...b.cumulativeBeta], endsAt: b.endsAt };
}

/** Looks after the one where the design ended cannot be reached: no bound, everything spent. */
function fillAfterEnd(out: FutilityBoundaries, looks: number, alpha: number): void {
  while (out.critical.length < looks) {
    out.critical.push(Infinity);
    out.futility.push(0);
    out.cumulativeAlpha.push(alpha);
    out.cumulativeBeta.push(out.cumulativeBeta[out.cumulativeBeta.length - 1] ?? 0);
  }
}

/**
 * rpact's standardized design: the drift at which the last look's futility bound meets its efficacy bound, so that
 * the chance of rejecting under the drift is 1 - beta (getDesignGroupSequential's `shift`).
 */
export function standardizedDrift(fractions: readonly number[], design: Omit<FutilityDesign, 'drift'>): number {
  return increasingRoot((drift) => -futilityCore(fractions, { ...design, drift }, fractions).shortfall, 0.5, 8, 1e-9);
}
