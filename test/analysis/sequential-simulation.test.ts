import { describe, expect, it } from 'vitest';
import { simulateSequential, type SimulationInput } from '../../src/analysis/sequential-simulation.js';
import { lookStatistic } from '../../src/batches/look-statistic.js';
import { decideLook, lookPoint, lookSchedule } from '../../src/batches/sequential-rule.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

// Seeded, smaller versions of scripts/sequential-simulation.ts (5,000 studies a line in docs/researcher/sequential-batches.md):
// batches served and answered as they run, K raters a pair, each rater leaning toward a condition, through the rule's
// own code (evaluateLook). The limit on a type I error is alpha plus three Monte Carlo standard errors.
const limit = (studies: number, alpha = 0.05) => alpha + 3 * Math.sqrt((alpha * (1 - alpha)) / studies);

const world: Omit<SimulationInput, 'studies' | 'random' | 'rule' | 'winRates'> = {
  pairs: 200,
  judgmentsPerPair: 3,
  perRater: 40,
  raterLean: 0.5,
  tieShare: 0,
  concurrency: 5,
  reserve: 0,
};

describe('sequential stopping rule, simulated with raters who lean', () => {
  it('simulateSequential, with 40 pairs a rater leaning with SD 0.5, shows the exact test of pair majorities far above alpha and the rule held to it', () => {
    const studies = 1500;
    const result = simulateSequential({ ...world, winRates: [0.5], rule: { looks: 5, alpha: 0.05, spending: 'obrien-fleming' }, studies, random: seededRandom(51) });
    const c = result.comparisons[0];
    // The figure for this world: 0.216 for the exact test that treats pair majorities as independent.
    expect(c?.fixedExactRate).toBeGreaterThan(0.17);
    expect(c?.fixedClusteredRate).toBeLessThanOrEqual(limit(studies));
    expect(c?.rejectRate).toBeLessThanOrEqual(limit(studies));
    expect(c?.clusteredShare).toBeGreaterThan(0.9);
  });

  it('simulateSequential, with binding futility, ties and 20 pairs a rater, holds the type I error and stops most null studies for futility', () => {
    const studies = 1000;
    const rule = { looks: 5, alpha: 0.05, spending: 'pocock' as const, futility: { beta: 0.2, effect: 0.65, binding: true } };
    const result = simulateSequential({ ...world, perRater: 20, tieShare: 0.1, winRates: [0.5], rule, studies, random: seededRandom(52), fixedDesign: false });
    const c = result.comparisons[0];
    expect(c?.rejectRate).toBeLessThanOrEqual(limit(studies));
    expect(c?.futilityRate).toBeGreaterThan(0.8);
    // Answers given after the stop are paid for: fewer judgments are saved than pairs left unused.
    expect(c?.meanJudgments).toBeGreaterThan((c?.meanPairsUsed ?? 0) * 3);
  });

  it('simulateSequential, when a decided comparison\'s judgments buy pairs for an undecided one, holds the receiving comparison\'s type I error', () => {
    const studies = 800;
    const rule = { looks: 5, alpha: 0.05, spending: 'pocock' as const, reallocate: true };
    const result = simulateSequential({ ...world, winRates: [0.75, 0.5], reserve: 60, rule, studies, random: seededRandom(53), fixedDesign: false });
    const [decided, open] = result.comparisons;
    expect(decided?.rejectRate).toBeGreaterThan(0.9);
    // Its maximum rose: more judgments than its own 200 pairs could hold.
    expect(open?.meanMaxJudgments).toBeGreaterThan(650);
    expect(open?.rejectRate).toBeLessThanOrEqual(limit(studies, 0.025));
  });

  it('simulateSequential, when one condition wins 70% of judgments, stops early nearly always', () => {
    const result = simulateSequential({ ...world, winRates: [0.7], rule: { looks: 5, alpha: 0.05, spending: 'pocock' }, studies: 200, random: seededRandom(3), fixedDesign: false });
    expect(result.comparisons[0]?.rejectRate).toBeGreaterThan(0.98);
    expect(result.comparisons[0]?.meanPairsUsed).toBeLessThan(120);
  });
});

describe('sequential rule', () => {
  it('lookSchedule, for looks or lookEvery, puts the last look at every pair complete', () => {
    expect(lookSchedule({ looks: 4 }, 40)).toEqual([10, 20, 30, 40]);
    expect(lookSchedule({ looks: 3 }, 10)).toEqual([4, 7, 10]);
    expect(lookSchedule({ lookEvery: 15 }, 40)).toEqual([15, 30, 40]);
  });

  it('decideLook, when only ties completed since the last look, takes no look; at the last look, spends all alpha at the information observed', () => {
    const base = { alpha: 0.05, spending: 'obrien-fleming' as const, designPairs: 100 };
    const statistic = { pValue: 0.5, z: 0.67 };
    // 30 completed, 20 decisive: no more information than the look at 20 decisive.
    expect(decideLook({ ...base, earlier: [{ fraction: 0.2, information: 0.2 }], now: lookPoint({ completed: 30, decisive: 20, maxPairs: 100, final: false }), statistic, final: false })).toBeNull();
    const last = decideLook({ ...base, earlier: [{ fraction: 0.2, information: 0.2 }, { fraction: 0.5, information: 0.45 }], now: lookPoint({ completed: 100, decisive: 90, maxPairs: 100, final: true }), statistic, final: true });
    expect(last).toMatchObject({ fraction: 1, information: 0.9, cumulativeAlpha: 0.05, decision: 'final' });
    // A look taken late (45 completed for one due at 40) reads the spending function at 0.45.
    const late = decideLook({ ...base, earlier: [{ fraction: 0.2, information: 0.2 }], now: lookPoint({ completed: 45, decisive: 43, maxPairs: 100, final: false }), statistic: { pValue: 1e-8, z: 5.7 }, final: false });
    expect(late).toMatchObject({ fraction: 0.45, information: 0.43, decision: 'efficacy' });
  });

  it('lookStatistic, with fewer than ten raters, tests pair majorities exactly and says the inference is conditional on these raters', () => {
    const pairs = Array.from({ length: 12 }, (_, i) => ({ weight: 1, votes: [0, 1, 2].map((r) => ({ rater: r, vote: (i < 10 ? 1 : -1) as 1 | -1 })) }));
    const s = lookStatistic(pairs);
    expect(s).toMatchObject({ statistic: 'pair-majorities', winsA: 10, winsB: 2, raters: 3, df: null });
    expect(s.pValue).toBeCloseTo(0.03857421875, 12);
    expect(s.reason).toContain('conditional on these raters');
  });

  it('lookStatistic, with a, tie, tie, counts the pair for a, as the report does', () => {
    const pairs = [{ weight: 1, votes: [{ rater: 1, vote: 1 as const }, { rater: 2, vote: 0 as const }, { rater: 3, vote: 0 as const }] }];
    expect(lookStatistic(pairs)).toMatchObject({ winsA: 1, winsB: 0, ties: 0 });
  });
});
