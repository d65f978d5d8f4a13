import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { planLook, stageOf, stageWeights } from '../../src/batches/reallocated-look.js';
import { boundAfter, twoSidedBoundaries } from '../../src/numbers/group-sequential.js';
import { normalCdf } from '../../src/numbers/normal.js';

// Bounds of a comparison whose maximum was raised by reallocation, against R's rpact 3.3.4 with user-defined alpha
// spending at the information actually reached (test/fixtures/sequential-reallocation-rpact.json, made by
// scripts/sequential-reallocation-rpact.R; the file names its source).
const fixture = z
  .object({
    source: z.string(),
    scenarios: z.array(
      z.object({
        family: z.enum(['obrien-fleming', 'pocock']),
        alpha: z.number(),
        decisive: z.array(z.number()),
        maxima: z.array(z.number()),
        final: z.boolean(),
        ownFractions: z.array(z.number()),
        informationRates: z.array(z.number()),
        cumulativeAlpha: z.array(z.number()),
        critical: z.array(z.number().nullable()),
      }),
    ),
  })
  .parse(JSON.parse(readFileSync(new URL('../fixtures/sequential-reallocation-rpact.json', import.meta.url), 'utf8')));

const nominal = (c: number | null) => (c === null || c === Infinity ? 0 : 2 * normalCdf(-c));

describe('boundAfter', () => {
  it.each(fixture.scenarios.map((s) => [`${s.family} alpha ${s.alpha}, maxima ${s.maxima.join(',')}`, s] as const))(
    'boundAfter, for a maximum raised between looks (%s), equals rpact with the same spending',
    (_name, s) => {
      const ours: number[] = [];
      s.informationRates.forEach((_, k) => {
        const spend = (s.cumulativeAlpha[k] as number) - (k === 0 ? 0 : (s.cumulativeAlpha[k - 1] as number));
        ours.push(boundAfter(s.informationRates.slice(0, k + 1), ours, spend));
      });
      s.critical.forEach((c, k) => {
        expect(Math.abs(nominal(ours[k] as number) - nominal(c))).toBeLessThan(1e-8);
        if (c !== null && c <= 3.5) expect(Math.abs((ours[k] as number) - c)).toBeLessThan(1e-6);
      });
    },
  );

  it('boundAfter, with an unchanged maximum, gives the bounds twoSidedBoundaries gives', () => {
    const fractions = [0.2, 0.45, 0.7, 1];
    const all = twoSidedBoundaries(fractions, 0.05, 'obrien-fleming');
    for (let k = 1; k < fractions.length; k++) {
      const spend = (all.cumulativeAlpha[k] as number) - (all.cumulativeAlpha[k - 1] as number);
      expect(boundAfter(fractions.slice(0, k + 1), all.critical.slice(0, k), spend)).toBeCloseTo(all.critical[k] as number, 9);
    }
  });

  it('boundAfter, when the new fraction allows no more alpha than was spent, sets no bound', () => {
    expect(boundAfter([0.3, 0.5], [2.5], 0)).toBe(Infinity);
    expect(boundAfter([0.3, 0.5], [2.5], -0.001)).toBe(Infinity);
  });
});

// After a raised maximum the comparison keeps its design (Cui, Hung & Wang 1999): the pairs of each stage share a
// weight fixed at the raise, and the looks stand on the original design's fractions.
describe('planLook', () => {
  const looks = [{ fraction: 0.25, information: 0.25, maxPairs: 40, completed: 10, observedInformation: 10 }];

  it('planLook, with the maximum unchanged, spends at the completed pairs over the maximum, reads information as observed and weighs every pair alike', () => {
    const plan = planLook(looks, { completed: 20, decisive: 18, maxPairs: 40, final: false, observedInformation: 18 });
    expect(plan).toEqual({ point: { fraction: 0.5, information: 0.25 * (18 / 10) }, designPairs: 40, stages: [{ untilLook: null, weight: 1 }] });
    // Raters who lean make the variance grow faster than the pairs: information grows as observed, not as counted.
    expect(planLook(looks, { completed: 20, decisive: 18, maxPairs: 40, final: false, observedInformation: 15 }).point.information).toBeCloseTo(0.375, 14);
    expect(planLook(looks, { completed: 40, decisive: 35, maxPairs: 40, final: true, observedInformation: 30 }).point).toEqual({ fraction: 1, information: 0.75 });
    // The first look stands at its decisive pairs; an estimate that fell grows by a quarter of what the pairs grew by
    // (10 to 20 completed: doubled, so the information grows by at least a quarter).
    expect(planLook([], { completed: 10, decisive: 9, maxPairs: 40, final: false, observedInformation: 9 }).point).toEqual({ fraction: 0.25, information: 9 / 40 });
    expect(planLook(looks, { completed: 20, decisive: 18, maxPairs: 40, final: false, observedInformation: 9 }).point.information).toBeCloseTo(0.25 * 1.25, 14);
  });

  it('planLook, after the maximum rose from 40 to 48 past the first look, spreads the design\'s remaining fraction over the pairs still to complete', () => {
    // 10 of 40 at look 1 (t = 0.25); 38 pairs were left to complete the remaining 0.75; 20 completed is 10 of them.
    const plan = planLook(looks, { completed: 20, decisive: 20, maxPairs: 48, final: false, observedInformation: 20 });
    const t = 0.25 + (0.75 * 10) / 38;
    expect(plan.designPairs).toBe(40);
    expect(plan.point.fraction).toBeCloseTo(t, 14);
    expect(plan.point.information).toBeCloseTo(t, 14);
    expect(plan.stages).toEqual([
      { untilLook: 1, weight: 0.25 },
      { untilLook: null, weight: t - 0.25 },
    ]);
    expect(planLook(looks, { completed: 48, decisive: 44, maxPairs: 48, final: true, observedInformation: 44 }).point.fraction).toBe(1);
  });

  it('stageWeights, for 10 pairs of the first stage and 5 of the second, gives each the square root of its stage\'s weight over its pairs', () => {
    const stages = [
      { untilLook: 1, weight: 0.25 },
      { untilLook: null, weight: 0.2 },
    ];
    const entered = [...Array<number>(10).fill(1), ...Array<null>(5).fill(null)];
    const weights = stageWeights(stages, entered.map((e) => stageOf(stages, e)));
    expect(weights.slice(0, 10).every((w) => Math.abs(w - Math.sqrt(0.025)) < 1e-15)).toBe(true);
    expect(weights.slice(10).every((w) => Math.abs(w - Math.sqrt(0.04)) < 1e-15)).toBe(true);
    // The weighted sum of the stages' standardized statistics: sqrt(0.25) Z_1 + sqrt(0.2) Z_2 over sqrt(0.45).
    expect(stageOf(stages, 2)).toBe(1);
  });
});
