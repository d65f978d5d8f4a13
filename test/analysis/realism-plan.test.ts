// Issue 53, item 4: the power of a which-is-real question's equivalence test, checked against statsmodels'
// power_ztost_prop (test/fixtures/realism/tost-power.json, scripts/realism-reference.py) for independent answers, and
// against a simulation of what runs for clustered ones: K raters per pair, raters who lean (some see through
// synthetic text more than others), pairs with giveaways, and the analysis's own two-way clustered TOST.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { twoWayClusteredMean } from '../../src/analysis/cluster-covariance.js';
import { equivalenceTest } from '../../src/analysis/equivalence-test.js';
import { equivalencePower, equivalenceSampleSize, oneWayIcc, planRealism } from '../../src/analysis/realism-plan.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

const reference = JSON.parse(readFileSync(new URL('../fixtures/realism/tost-power.json', import.meta.url), 'utf8')) as {
  source: string;
  grid: { n: number; p_alt: number; margin: number; alpha: number; power: number }[];
};

/**
 * One simulated realism study of one synthetic condition: `pairs` pairs (one per scenario), each answered by K
 * distinct raters, raters answering m pairs each. A right answer has chance p + a_pair + b_rater, a and b ±δ with
 * δ² = ρ·p(1 − p), so the intraclass correlations are exactly ρ_pair and ρ_rater. True when the analysis's TOST
 * shows equivalence.
 */
function simulatedStudy(random: () => number, o: { pairs: number; k: number; m: number; p: number; iccPair: number; iccRater: number; margin: number }): boolean {
  const raters = Math.ceil((o.pairs * o.k) / o.m);
  const da = Math.sqrt(o.iccPair * o.p * (1 - o.p));
  const db = Math.sqrt(o.iccRater * o.p * (1 - o.p));
  const lean = Array.from({ length: raters }, () => (random() < 0.5 ? -db : db));
  const n = o.pairs * o.k;
  const y = new Float64Array(n);
  const rater = new Int32Array(n);
  const scenario = new Int32Array(n);
  let row = 0;
  for (let pair = 0; pair < o.pairs; pair++) {
    const giveaway = random() < 0.5 ? -da : da;
    for (let j = 0; j < o.k; j++) {
      // Round robin: consecutive answers go to consecutive raters, so a pair's K raters are distinct.
      const r = row % raters;
      y[row] = random() < o.p + giveaway + (lean[r] as number) ? 1 : 0;
      rater[row] = r;
      scenario[row] = pair;
      row++;
    }
  }
  const m = twoWayClusteredMean(y, rater, scenario);
  return m.mean !== null && m.se !== null && m.se > 0 && equivalenceTest(m.mean, m.se, 0.5 - o.margin, 0.5 + o.margin).equivalent;
}

describe('the power of the equivalence test', () => {
  it('equivalencePower, for independent answers, equals statsmodels power_ztost_prop on a grid of sizes, accuracies and margins', () => {
    expect(reference.source).toContain('power_ztost_prop');
    expect(reference.grid).toHaveLength(30);
    for (const g of reference.grid) expect(equivalencePower(g.n, g.p_alt, g.margin, g.alpha)).toBeCloseTo(g.power, 12);
  });

  it('equivalenceSampleSize gives the fewest answers with the power asked for: 857 at margin 0.05 and power 0.8, where statsmodels gives 0.7998 at 856 and 0.8004 at 857', () => {
    expect(equivalenceSampleSize(0.5, 0.05, 0.05, 0.8)).toMatchObject({ n: 857 });
    // With a design effect D the answers needed are D times as many (the variance is D times larger).
    expect(equivalenceSampleSize(0.5, 0.05, 0.05, 0.8, 2)?.n).toBe(1713);
  });

  it('planRealism, for the clustered design a simulation of K raters per pair with leaning raters runs, plans a size at which the analysis\'s own TOST shows equivalence about as often as planned; the size planned as if answers were independent falls well short', () => {
    const design = { k: 3, perRater: 12, conditions: 1, iccPair: 0.1, iccRater: 0.06, margin: 0.1, accuracy: 0.5 };
    const plan = planRealism({ ...design, alpha: 0.05, power: 0.8, pilot: null, pay: null });
    expect(plan.design.design_effect).toBeCloseTo(1 + 2 * 0.1 + 11 * 0.06, 12);
    const pairs = plan.per_condition?.pairs_needed ?? 0;
    const naive = Math.ceil((plan.per_condition?.answers_independent ?? 0) / design.k);
    expect(pairs).toBeGreaterThan(1.5 * naive);
    const random = seededRandom(53);
    const study = (p: number) => simulatedStudy(random, { pairs: p, k: design.k, m: design.perRater, p: 0.5, iccPair: design.iccPair, iccRater: design.iccRater, margin: design.margin });
    const studies = 1500;
    let planned = 0;
    let independent = 0;
    for (let s = 0; s < studies; s++) {
      if (study(pairs)) planned++;
      if (study(naive)) independent++;
    }
    // 1500 studies: a Monte Carlo standard error of about 0.01 around 0.8; the clustered estimator's own small-sample
    // bias (a few dozen raters) is the rest of the allowance.
    expect(planned / studies).toBeGreaterThan(0.76);
    expect(planned / studies).toBeLessThan(0.86);
    expect(independent / studies).toBeLessThan(0.65);
  });

  it('planRealism, for an assumed accuracy outside the margin, plans nothing and says equivalence cannot be shown', () => {
    const plan = planRealism({ margin: 0.05, accuracy: 0.6, alpha: 0.05, power: 0.8, k: 3, perRater: 10, conditions: 2, iccPair: 0, iccRater: 0, pilot: null, pay: null });
    expect(plan.per_condition).toBeNull();
    expect(plan.notes).toContain('an accuracy of 0.6 lies outside 0.5 ± 0.05: equivalence cannot be shown, whatever the sample');
  });

  it('oneWayIcc gives the ANOVA intraclass correlation: 2/3 for groups (1,1,0), (0,0,0), (1,1,1), worked by hand', () => {
    // MSB = 3·((2/3 − 5/9)² + (5/9)² + (4/9)²)/2 = 7/9; MSW = (2/9 + 4/9)/6 = 1/9; n0 = 3: (7/9 − 1/9)/(7/9 + 2/9) = 2/3.
    const icc = oneWayIcc(Float64Array.from([1, 1, 0, 0, 0, 0, 1, 1, 1]), Int32Array.from([0, 0, 0, 1, 1, 1, 2, 2, 2]));
    expect(icc).toBeCloseTo(2 / 3, 12);
    expect(oneWayIcc(Float64Array.from([1, 0]), Int32Array.from([0, 1]))).toBeNull();
  });
});
