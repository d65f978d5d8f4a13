import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { summariseComparison } from '../../src/analysis/sequential-report.js';
import { wilsonInterval } from '../../src/analysis/wilson.js';
import { clusteredPairScore, effectiveClusters } from '../../src/numbers/clustered-pair-score.js';
import { alphaSpent, futilityBoundaries, spendingBoundaries, stagewisePValue, twoSidedBoundaries } from '../../src/numbers/group-sequential.js';
import { normalCdf } from '../../src/numbers/normal.js';
import { studentTQuantileTwoSided, studentTTwoSided } from '../../src/numbers/student-t.js';
import type { SequentialLookRow } from '../../src/rating/sequential.queries.js';
import { lookStatistic } from '../../src/batches/look-statistic.js';

// Issue 51's fixes of the sequential inference, against values computed without simarena's code: R's pt, rpact 3.3.4's
// designs, mvtnorm's Miwa algorithm for the looks' joint normal law and sandwich's vcovCL
// (test/fixtures/sequential-inference-reference.json, made by scripts/sequential-inference-reference.R; the file
// names its source), and, for binding futility, a plain numerical integration written in this file.
const bounds = z.array(z.number().nullable()).transform((v) => v.map((x) => x ?? Infinity));
const fixture = z
  .object({
    source: z.string(),
    studentT: z.array(z.object({ t: z.number(), df: z.number(), p: z.number() })),
    bindingPValue: z.object({
      fractions: z.array(z.number()),
      critical: bounds,
      futility: z.array(z.number()),
      cases: z.array(z.object({ look: z.number(), z: z.number(), withRegions: z.number(), withoutRegions: z.number() })),
    }),
    coverage: z.array(z.object({ family: z.enum(['pocock', 'obrien-fleming']), binding: bounds, plain: bounds, missBinding: z.number(), missPlain: z.number() })),
    issueDesigns: z.array(
      z.object({
        family: z.enum(['pocock', 'obrien-fleming']),
        critical: z.array(z.number()),
        futility: z.array(z.number()),
        oldLook4: z.number(),
        oldLook5: z.number(),
        pAtOldLook4WithRegions: z.number(),
        pAtOldLook4WithoutRegions: z.number(),
        missOld: z.number(),
        plain: bounds,
      }),
    ),
    endsEarly: z.array(z.object({ family: z.enum(['pocock', 'obrien-fleming']), information: z.array(z.number()), cumulativeAlpha: z.array(z.number()), critical: bounds })),
    observedInformation: z.array(
      z.object({ family: z.enum(['pocock', 'obrien-fleming']), fractions: z.array(z.number()), information: z.array(z.number()), cumulativeAlpha: z.array(z.number()), critical: bounds }),
    ),
    clustered: z.object({
      weights: z.array(z.number()),
      judgments: z.array(z.object({ pair: z.number(), rater: z.number(), vote: z.union([z.literal(-1), z.literal(0), z.literal(1)]) })),
      raters: z.number(),
      byRater: z.number(),
      byPair: z.number(),
      byJudgment: z.number(),
      mean: z.number(),
    }),
  })
  .parse(JSON.parse(readFileSync(new URL('../fixtures/sequential-inference-reference.json', import.meta.url), 'utf8')));

const nominal = (c: number) => (c === Infinity ? 0 : 2 * normalCdf(-c));

describe('studentTTwoSided', () => {
  it('studentTTwoSided, on a grid of t and whole degrees of freedom, equals R\'s 2 pt(-t, df)', () => {
    for (const { t, df, p } of fixture.studentT) expect(Math.abs(studentTTwoSided(t, df) - p)).toBeLessThan(1e-13);
  });

  it('studentTQuantileTwoSided, for a tail, gives back the t whose tail it is', () => {
    for (const df of [1, 4, 9, 30]) for (const p of [0.5, 0.05, 1e-4, 1e-8]) expect(studentTTwoSided(studentTQuantileTwoSided(p, df), df)).toBeCloseTo(p, 12);
  });

  it('studentTTwoSided, with degrees of freedom that are not a whole number, refuses them', () => {
    expect(() => studentTTwoSided(1, 2.5)).toThrow(RangeError);
  });
});

describe('stagewisePValue with binding futility', () => {
  const { fractions, critical, futility, cases } = fixture.bindingPValue;
  it.each(cases.map((c) => [c.look + 1, c.z, c] as const))('stagewisePValue, at look %i with |z| = %f of rpact\'s binding Pocock design, integrates over the continuation regions as mvtnorm does', (_look, _z, c) => {
    expect(Math.abs(stagewisePValue(fractions, critical, c.look, c.z, futility) - c.withRegions)).toBeLessThan(2e-7);
    expect(Math.abs(stagewisePValue(fractions, critical, c.look, c.z) - c.withoutRegions)).toBeLessThan(2e-7);
  });

  it.each(fixture.issueDesigns.map((d) => [d.family, d] as const))('stagewisePValue, in the issue\'s binding %s design (win rate 0.65 over 200 pairs), is the alpha spent at a look\'s bound only with the regions', (_family, d) => {
    const fractions = [0.2, 0.4, 0.6, 0.8, 1];
    const design = futilityBoundaries(fractions, { family: d.family, alpha: 0.05, beta: 0.2, drift: 0.3 * Math.sqrt(200), binding: true });
    d.critical.forEach((c, k) => expect(design.critical[k]).toBeCloseTo(c, 9));
    d.futility.forEach((f, k) => expect(design.futility[k]).toBeCloseTo(f, 9));
    // Before issue 51 look 4 spent only alpha(0.8) and the p-value ignored the regions: 0.0728 reported for a
    // rejection at that bound (Pocock), where the regions give the alpha spent, 0.0432.
    expect(d.pAtOldLook4WithRegions).toBeCloseTo(alphaSpent(d.family, 0.05, 0.8), 6);
    if (d.family === 'pocock') {
      expect(d.pAtOldLook4WithRegions).toBeCloseTo(0.0432, 4);
      expect(d.pAtOldLook4WithoutRegions).toBeCloseTo(0.0728, 4);
    }
    const old = [...d.critical, d.oldLook4];
    expect(stagewisePValue(fractions, old, 3, d.oldLook4, design.futility)).toBeCloseTo(d.pAtOldLook4WithRegions, 6);
    expect(stagewisePValue(fractions, old, 3, d.oldLook4)).toBeCloseTo(d.pAtOldLook4WithoutRegions, 6);
    // Now look 4, where the bounds meet, is the last and spends all of alpha: a rejection at its bound has p = 0.05.
    expect(design.endsAt).toBe(3);
    expect(stagewisePValue(fractions, design.critical, 3, design.critical[3] as number, design.futility)).toBeCloseTo(0.05, 8);
  });
});

describe('repeated confidence intervals', () => {
  it.each(fixture.issueDesigns.map((d) => [d.family, d] as const))('repeated intervals from the issue\'s binding %s bounds missed the truth more often than alpha (7.5% Pocock, 5.9% O\'Brien-Fleming)', (_family, d) => {
    expect(d.missOld).toBeCloseTo(d.family === 'pocock' ? 0.075 : 0.059, 3);
  });

  it.each(fixture.coverage.map((c) => [c.family, c] as const))('the %s binding design\'s lowered bounds miss the truth more often than alpha; the bounds without futility, which the intervals use, miss it alpha of the time', (_family, c) => {
    expect(c.missBinding).toBeGreaterThan(0.051);
    expect(c.missPlain).toBeCloseTo(0.05, 7);
    const fractions = [0.2, 0.4, 0.6, 0.8, 1];
    const ours = spendingBoundaries(fractions, fractions.map((t) => alphaSpent(c.family, 0.05, t))).critical;
    c.plain.forEach((bound, k) => expect(Math.abs(nominal(ours[k] as number) - nominal(bound))).toBeLessThan(1e-8));
  });

  it('summariseComparison, for a binding design\'s look, builds the repeated interval from the bound without futility, not the lowered one', () => {
    const d = fixture.issueDesigns.find((x) => x.family === 'pocock');
    if (!d) throw new Error('the fixture lacks Pocock');
    // Look 3 of the issue's binding Pocock design: its bound (2.350) is below the bound without futility (2.410).
    const looks = [0.2, 0.4, 0.6].map((t, k) =>
      lookRow({ look: k + 1, information_fraction: t, information: t, critical_z: d.critical[k] as number, futility_z: (d.futility[k] as number) || null, wins_a: 25 + 25 * k, wins_b: 15 + 15 * k, cumulative_alpha: alphaSpent('pocock', 0.05, t) }),
    );
    const summary = summariseComparison({ id: 1, batch_id: 1, position: 0, condition_a: 'A', condition_b: 'B', stopped_at: null, stop_reason: null }, looks, { spending: 'pocock', futility: { beta: 0.2, effect: 0.65, binding: true } });
    expect(d.critical[2]).toBeLessThan((d.plain[2] as number) - 0.05);
    const expected = wilsonInterval(75, 120, d.plain[2] as number) as [number, number];
    expect(summary.repeatedCi?.[0]).toBeCloseTo(expected[0], 6);
    expect(summary.repeatedCi?.[1]).toBeCloseTo(expected[1], 6);
  });
});

describe('a design whose bounds meet before the last look', () => {
  it('futilityBoundaries, non-binding, spends all alpha at the look where the bounds meet, as rpact\'s user-defined spending does', () => {
    const reference = fixture.endsEarly.find((e) => e.family === 'obrien-fleming');
    if (!reference) throw new Error('the fixture lacks the design');
    const got = futilityBoundaries([0.2, 0.4, 0.6, 0.8, 1], { family: 'obrien-fleming', alpha: 0.05, beta: 0.2, drift: 0.3 * Math.sqrt(200), binding: false });
    expect(got.endsAt).toBe(3);
    reference.critical.forEach((c, k) => expect(Math.abs(nominal(got.critical[k] as number) - nominal(c))).toBeLessThan(1e-8));
    for (const e of fixture.endsEarly) {
      const ours = spendingBoundaries(e.information, e.cumulativeAlpha).critical;
      e.critical.forEach((c, k) => expect(Math.abs(nominal(ours[k] as number) - nominal(c))).toBeLessThan(1e-8));
    }
  });

  it('futilityBoundaries, binding, crosses with chance alpha under the null through its continuation regions (checked by a separate integration)', () => {
    const fractions = [0.2, 0.4, 0.6, 0.8, 1];
    const got = futilityBoundaries(fractions, { family: 'obrien-fleming', alpha: 0.05, beta: 0.2, drift: 0.3 * Math.sqrt(200), binding: true });
    expect(got.endsAt).toBe(3);
    expect(nullCrossing(fractions.slice(0, 4), got.critical.slice(0, 4), got.futility.slice(0, 4))).toBeCloseTo(0.05, 6);
  });
});

describe('observed information at the last look', () => {
  it.each(fixture.observedInformation.map((o) => [o.family, o] as const))('twoSidedBoundaries, %s with ties (information short of the fractions), equals rpact\'s user-defined spending at the information observed', (_family, o) => {
    const ours = twoSidedBoundaries(o.fractions, 0.05, o.family, o.information);
    expect(ours.cumulativeAlpha[4]).toBe(0.05);
    o.critical.forEach((c, k) => {
      expect(Math.abs(nominal(ours.critical[k] as number) - nominal(c))).toBeLessThan(1e-8);
      if (c <= 3.5) expect(Math.abs((ours.critical[k] as number) - c)).toBeLessThan(1e-6);
    });
    // Forcing the last look to information 1 (the old rule) gives another, higher last bound.
    const forced = twoSidedBoundaries(o.fractions, 0.05, o.family, [...o.information.slice(0, 4), 1]);
    expect(forced.critical[4]).toBeGreaterThan((ours.critical[4] as number) + 1e-3);
  });
});

describe('clusteredPairScore', () => {
  it('clusteredPairScore, on weighted pairs of two or three judgments, has the two-way variance sandwich\'s vcovCL gives by rater, pair and judgment', () => {
    const { weights, judgments, byRater, byPair, byJudgment, raters, mean } = fixture.clustered;
    const pairs = weights.map((weight, i) => ({ weight, votes: judgments.filter((j) => j.pair === i).map((j) => ({ rater: j.rater, vote: j.vote })) }));
    const got = clusteredPairScore(pairs);
    expect(got.raters).toBe(raters);
    expect(got.mean).toBeCloseTo(mean, 12);
    const twoWay = (raters / (raters - 1)) * byRater + byPair - byJudgment;
    expect(got.variance).toBeCloseTo(Math.max(twoWay, byPair), 12);
    expect(got.pairVariance).toBeCloseTo(byPair, 12);
  });
});

/** A look's stored row, as a sequential batch's report reads it (only the fields a test sets vary). */
function lookRow(over: Partial<SequentialLookRow> & Pick<SequentialLookRow, 'look'>): SequentialLookRow {
  const decisive = (over.wins_a ?? 0) + (over.wins_b ?? 0);
  return {
    id: over.look,
    batch_id: 1,
    comparison_id: 1,
    planned_looks: 5,
    max_pairs: 200,
    completed_pairs: decisive,
    ties: 0,
    wins_a: 0,
    wins_b: 0,
    information_fraction: 0.2,
    alpha: 0.05,
    critical_z: null,
    nominal_alpha: 0,
    futility_z: null,
    p_value: 1,
    z: 0,
    decision: 'continue',
    taken_at: '2026-11-01T00:00:00.000Z',
    statistic: 'pair-majorities',
    statistic_reason: null,
    raters: 3,
    df: null,
    estimate: null,
    standard_error: null,
    design_effect: null,
    information: null,
    observed_information: null,
    cumulative_alpha: null,
    ends_design: 0,
    ...over,
  };
}

/**
 * P(some look crosses its efficacy bound) under the null for a binding design, every path with f_k <= |Z_k| < c_k
 * going on: the score's independent normal increments carried by the midpoint rule on cells aligned with each region's
 * ends. Written apart from src/numbers/group-sequential.ts (no Simpson grids, no shared code but the normal
 * distribution function, itself checked against R) so it checks it.
 */
function nullCrossing(t: readonly number[], c: readonly number[], f: readonly number[]): number {
  const phi = (x: number) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
  const cells = (lo: number, hi: number) => {
    const n = Math.max(1, Math.ceil((hi - lo) / 0.002));
    return Array.from({ length: n }, (_, i) => ({ z: lo + ((i + 0.5) * (hi - lo)) / n, h: (hi - lo) / n }));
  };
  const region = (k: number) => [...cells(-(c[k] as number), -(f[k] as number)), ...cells(f[k] as number, c[k] as number)];
  let grid = region(0).map((p) => ({ z: p.z, mass: p.h * phi(p.z) }));
  let crossed = 2 * normalCdf(-(c[0] as number));
  for (let k = 1; k < t.length; k++) {
    const r = Math.sqrt((t[k - 1] as number) / (t[k] as number));
    const s = Math.sqrt(1 - r * r);
    const bound = c[k] as number;
    for (const g of grid) crossed += g.mass * (normalCdf((-bound - r * g.z) / s) + normalCdf((r * g.z - bound) / s));
    if (k === t.length - 1) break;
    const old = grid;
    grid = region(k).map((p) => ({ z: p.z, mass: (p.h / s) * old.reduce((a, g) => a + g.mass * phi((p.z - r * g.z) / s), 0) }));
  }
  return crossed;
}

describe('the effective number of raters (Carter, Schnepel & Steigerwald 2017)', () => {
  it('effectiveClusters, for clusters of one size, is their number; for one cluster far larger than the rest, near one', () => {
    expect(effectiveClusters(new Array(12).fill(7))).toBeCloseTo(12, 12);
    // Ten raters of 40 judgments and fourteen of 14 (a batch whose first raters judged up to their cap): 13.4 of 24.
    const uneven = [...new Array(10).fill(40), ...new Array(14).fill(14)];
    expect(effectiveClusters(uneven)).toBeCloseTo(18744 ** 2 / (10 * 40 ** 4 + 14 * 14 ** 4), 10);
    expect(effectiveClusters([1000, 1, 1, 1])).toBeLessThan(1.01);
    expect(effectiveClusters([])).toBe(0);
  });

  it('lookStatistic, when a few raters judged most pairs, tests against t with the effective number of raters less one', () => {
    // 12 raters over 30 pairs of K = 2: raters 0 and 1 judge 15 pairs each, ten others 3 each. A judgment weighs 1/2
    // (its pair's K), so the sizes are 7.5, 7.5 and ten of 1.5: G* = 2.9 of 12, df 1 rather than 11.
    const pairs = Array.from({ length: 30 }, (_, i) => ({ weight: 1, votes: [{ rater: i % 2, vote: (i % 3 === 0 ? -1 : 1) as -1 | 1 }, { rater: 2 + (i % 10), vote: (i % 4 === 0 ? -1 : 1) as -1 | 1 }] }));
    const s = lookStatistic(pairs);
    expect(s.statistic).toBe('rater-clustered');
    expect(s.raters).toBe(12);
    const sizes = [7.5, 7.5, ...new Array(10).fill(1.5)];
    expect(s.df).toBe(Math.floor(effectiveClusters(sizes)) - 1);
    expect(s.df).toBeLessThan(11);
    expect(s.reason).toContain(`the effective number of raters, ${effectiveClusters(sizes).toFixed(1)} of 12`);
  });
});
