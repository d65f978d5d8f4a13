import { describe, expect, it } from 'vitest';
import { simulateSequential } from '../../src/analysis/sequential-simulation.js';
import { decideLook, lookSchedule } from '../../src/batches/sequential-rule.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

// A quick, seeded version of scripts/sequential-simulation.ts (which runs 20,000 studies per design): the real rule's
// type I error stays within alpha plus three Monte Carlo standard errors, with and without late looks.
describe('sequential stopping rule, simulated', () => {
  it.each([
    ['obrien-fleming', 0],
    ['pocock', 0],
    ['pocock', 20],
  ] as const)('simulateSequential, under the null with %s spending and looks up to %i pairs late, holds the type I error', (spending, lateBy) => {
    const studies = 2000;
    const result = simulateSequential({ pairs: 200, rule: { looks: 5, alpha: 0.05, spending }, comparisons: 1, winRate: 0.5, tieShare: 0, lateBy, studies, random: seededRandom(7) });
    expect(result.rejectRate).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / studies));
  });

  it.each([false, true])('simulateSequential, with futility stopping (binding %s), holds the type I error and stops most null studies for futility', (binding) => {
    const studies = 2000;
    const rule = { looks: 5, alpha: 0.05, spending: 'obrien-fleming' as const, futility: { beta: 0.2, effect: 0.65, binding } };
    const result = simulateSequential({ pairs: 200, rule, comparisons: 1, winRate: 0.5, tieShare: 0, lateBy: 0, studies, random: seededRandom(11) });
    expect(result.rejectRate).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / studies));
    expect(result.futilityRate).toBeGreaterThan(0.8);
    expect(result.meanPairs).toBeLessThan(140);
  });

  it('simulateSequential, when the planned effect holds, stops for futility about as often as the beta spent before the last look', () => {
    const rule = { looks: 5, alpha: 0.05, spending: 'pocock' as const, futility: { beta: 0.2, effect: 0.6, binding: false } };
    const studies = 1000;
    const result = simulateSequential({ pairs: 200, rule, comparisons: 1, winRate: 0.6, tieShare: 0, lateBy: 0, studies, random: seededRandom(5) });
    // Pocock-type beta spending at t = 0.8 spends 0.162 of the 0.2 once rescaled (no futility bound at the first
    // look); the exact test's z runs below the normal z by about a continuity correction, which adds a few points.
    expect(result.futilityRate).toBeGreaterThan(0.1);
    expect(result.futilityRate).toBeLessThan(0.25);
    expect(result.rejectRate).toBeGreaterThan(0.5);
  });

  it('simulateSequential, when one condition wins 70% of pairs, stops early nearly always and uses far fewer pairs than the fixed design', () => {
    const result = simulateSequential({ pairs: 200, rule: { looks: 5, alpha: 0.05, spending: 'pocock' }, comparisons: 1, winRate: 0.7, tieShare: 0, lateBy: 0, studies: 500, random: seededRandom(3) });
    expect(result.rejectRate).toBeGreaterThan(0.98);
    expect(result.meanPairs).toBeLessThan(120);
  });
});

describe('sequential rule', () => {
  it('lookSchedule, for looks or lookEvery, puts the last look at every pair complete', () => {
    expect(lookSchedule({ looks: 4 }, 40)).toEqual([10, 20, 30, 40]);
    expect(lookSchedule({ looks: 3 }, 10)).toEqual([4, 7, 10]);
    expect(lookSchedule({ lookEvery: 15 }, 40)).toEqual([15, 30, 40]);
  });

  it('decideLook, when only ties completed since the last look, takes no look; at the last look, spends all alpha', () => {
    const base = { alpha: 0.05, spending: 'obrien-fleming' as const, maxPairs: 100 };
    expect(decideLook({ ...base, earlier: [0.2], completed: 30, winsA: 12, winsB: 8, final: false })).toBeNull();
    const last = decideLook({ ...base, earlier: [0.2, 0.5], completed: 100, winsA: 50, winsB: 40, final: true });
    expect(last?.fraction).toBe(1);
    expect(last?.decision).toBe('final');
    const late = decideLook({ ...base, earlier: [0.2], completed: 45, winsA: 40, winsB: 3, final: false });
    expect(late).toMatchObject({ fraction: 0.43, decision: 'efficacy' });
  });
});
