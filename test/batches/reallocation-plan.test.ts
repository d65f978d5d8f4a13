import { describe, expect, it } from 'vitest';
import { chooseReallocation, ratersForDesign } from '../../src/batches/reallocation-plan.js';
import { computeCapacity } from '../../src/batches/capacity-check.js';

const pairs = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ sample: `${prefix}${i}`, id: `${prefix}${i}` }));
const base = { judgmentsPerPair: 2, perRaterCap: 5, allowSameSample: false, openDemands: [], admitted: 0 };

describe('chooseReallocation', () => {
  it('chooseReallocation, with enough unused pairs and raters, adds as many pairs of K judgments as the freed judgments pay for, taking the open comparisons in turn', () => {
    const choice = chooseReallocation({ ...base, freed: 10, candidates: [pairs('a', 10), pairs('b', 10)], budgetRaters: 100 });
    expect(choice.chosen.map((p) => p.id)).toEqual(['a0', 'b0', 'a1', 'b1', 'a2']);
    expect(choice.limitedBy).toBeNull();
  });

  it('chooseReallocation, when the freed judgments do not pay for a whole pair of K, adds only whole pairs', () => {
    expect(chooseReallocation({ ...base, freed: 3, candidates: [pairs('a', 10)], budgetRaters: 100 }).chosen).toHaveLength(1);
    expect(chooseReallocation({ ...base, freed: 1, candidates: [pairs('a', 10)], budgetRaters: 100 })).toMatchObject({ chosen: [], limitedBy: null });
  });

  it('chooseReallocation, when the open comparisons have fewer unused pairs than were freed, adds those and says so', () => {
    const choice = chooseReallocation({ ...base, freed: 16, candidates: [pairs('a', 2), []], budgetRaters: 100 });
    expect(choice.chosen).toHaveLength(2);
    expect(choice.limitedBy).toBe('no-unused-pair');
  });

  it('chooseReallocation, when more pairs would need more raters than the budget, stops at the budget', () => {
    // 4 raters admitted, 3 more in the budget; each new sample needs K = 2 raters of at most 5 pairs: 7 new pairs need
    // ceil(14 / 5) = 3 more raters, an 8th would need ceil(16 / 5) = 4.
    const choice = chooseReallocation({ ...base, freed: 20, candidates: [pairs('a', 10)], admitted: 4, budgetRaters: 7 });
    expect(choice.chosen).toHaveLength(7);
    expect(choice.limitedBy).toBe('raters');
    expect(choice.ratersAfter).toBe(7);
  });

  it('chooseReallocation, when the open pairs already need every rater of the budget, adds nothing', () => {
    const openDemands = pairs('o', 10).map((p) => ({ sample: p.sample, demand: 2 }));
    const choice = chooseReallocation({ ...base, freed: 6, candidates: [pairs('a', 5)], openDemands, admitted: 2, budgetRaters: 6 });
    expect(choice.chosen).toEqual([]);
    expect(choice.limitedBy).toBe('raters');
  });

  it('chooseReallocation, without allowSameSample, skips a pair whose sample would need more distinct raters than the budget and takes a fresh one', () => {
    // Sample s already owes 2 judgments; a second pair of s needs 4 distinct raters, the budget has 3.
    const choice = chooseReallocation({ ...base, freed: 2, candidates: [[{ sample: 's', id: 'same' }, { sample: 't', id: 'fresh' }]], openDemands: [{ sample: 's', demand: 2 }], budgetRaters: 3 });
    expect(choice.chosen.map((p) => p.id)).toEqual(['fresh']);
  });
});

describe('ratersForDesign', () => {
  it('ratersForDesign, on a pair set, agrees with the launch capacity check', () => {
    const samples = ['x', 'x', 'y', 'z', 'z', 'z', 'w'];
    const capacity = computeCapacity({
      judgmentsPerPair: 3,
      perRaterCap: 4,
      allowSameSample: false,
      plannedRaters: null,
      pairSamples: samples,
      gold: { onboardingWanted: 0, onboardingPairs: 0, attentionRate: null, attentionPairs: 0, fromRatedSamples: 0 },
    });
    expect(ratersForDesign(samples, 3, 4, false)).toBe(capacity.ratersNeeded);
  });
});
