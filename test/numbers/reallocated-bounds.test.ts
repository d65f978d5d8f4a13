import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decideReallocatedLook } from '../../src/batches/reallocated-look.js';
import { alphaSpent, boundAfter, futilityBoundaries, futilityDrift, twoSidedBoundaries } from '../../src/numbers/group-sequential.js';
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

describe('decideReallocatedLook', () => {
  it.each(fixture.scenarios.map((s) => [`${s.family} alpha ${s.alpha}, maxima ${s.maxima.join(',')}`, s] as const))(
    'decideReallocatedLook, at the last look of %s, holds the look to rpact\'s bound',
    (_name, s) => {
      const k = s.decisive.length - 1;
      const earlier = s.critical.slice(0, k).map((c, j) => ({ fraction: s.ownFractions[j] as number, maxPairs: s.maxima[j] as number, critical: c }));
      const decisive = s.decisive[k] as number;
      const decision = decideReallocatedLook({ alpha: s.alpha, spending: s.family, maxPairs: s.maxima[k] as number, earlier, winsA: decisive, winsB: 0, final: s.final });
      expect(decision).not.toBeNull();
      expect(decision?.fraction).toBeCloseTo(s.ownFractions[k] as number, 12);
      expect(Math.abs((decision?.nominal ?? 0) - nominal(s.critical[k] ?? null))).toBeLessThan(1e-8);
      expect(decision?.decision).toBe('efficacy');
    },
  );

  it('decideReallocatedLook, when no decisive pair was added since the last look over the new maximum, takes no look', () => {
    const earlier = [{ fraction: 0.5, maxPairs: 20, critical: 3.34 }];
    expect(decideReallocatedLook({ alpha: 0.025, spending: 'obrien-fleming', maxPairs: 30, earlier, winsA: 6, winsB: 4, final: false })).toBeNull();
  });

  it('decideReallocatedLook, when the new maximum lowers the fraction below what was spent, spends nothing and cannot reject', () => {
    // 20 of 40 (t = 0.5) spent alpha(0.5); raised to 80, 24 decisive pairs is t = 0.3: nothing more may be spent.
    const earlier = [{ fraction: 0.5, maxPairs: 40, critical: 2.42 }];
    const decision = decideReallocatedLook({ alpha: 0.025, spending: 'pocock', maxPairs: 80, earlier, winsA: 24, winsB: 0, final: false });
    expect(alphaSpent('pocock', 0.025, 0.3)).toBeLessThan(alphaSpent('pocock', 0.025, 0.5));
    expect(decision).toMatchObject({ decision: 'continue', critical: Infinity, nominal: 0 });
  });

  it('decideReallocatedLook, with binding futility, checks futility over the new maximum but holds efficacy to the bound that ignores it', () => {
    // One look at 20 of 40 decisive pairs; the maximum rose to 48; 36 decisive pairs split 18 to 18 (|z| = 0).
    const futility = { beta: 0.2, effect: 0.65, binding: true };
    const earlier = [{ fraction: 0.5, maxPairs: 40, critical: 2.21 }];
    const input = { alpha: 0.05, spending: 'pocock' as const, maxPairs: 48, earlier, winsA: 18, winsB: 18, final: false };
    const plain = decideReallocatedLook(input);
    const withFutility = decideReallocatedLook({ ...input, futility });
    const expected = futilityBoundaries([20 / 48, 36 / 48], { family: 'pocock', alpha: 0.05, beta: 0.2, drift: futilityDrift(0.65, 48), binding: false }).futility[1] as number;
    expect(expected).toBeGreaterThan(0);
    expect(withFutility).toMatchObject({ decision: 'futility', critical: plain?.critical, nominal: plain?.nominal });
    expect(withFutility?.futility).toBeCloseTo(expected, 12);
    expect(plain).toMatchObject({ decision: 'continue', futility: null });
    // A split far from even is not futile: 26 to 10 of 36 (|z| about 2.5) rejects or continues.
    expect(decideReallocatedLook({ ...input, futility, winsA: 26, winsB: 10 })?.decision).not.toBe('futility');
  });

  it('decideReallocatedLook, at the last look, has no futility bound', () => {
    const earlier = [{ fraction: 0.25, maxPairs: 40, critical: 2.41 }];
    const decision = decideReallocatedLook({ alpha: 0.05, spending: 'pocock', futility: { beta: 0.2, effect: 0.65, binding: false }, maxPairs: 48, earlier, winsA: 24, winsB: 24, final: true });
    expect(decision).toMatchObject({ decision: 'final', futility: null });
  });
});
