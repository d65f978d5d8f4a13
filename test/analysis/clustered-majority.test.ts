import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clusteredMajorityWinRate, type MajorityJudgment } from '../../src/analysis/clustered-majority.js';
import { wilsonInterval } from '../../src/analysis/wilson.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';

// The pair-majority win rate with its rater-clustered interval (src/analysis/clustered-majority.ts), checked against
// statsmodels' cluster-robust standard error where each pair has one rater (fixture made by
// scripts/clustered-majority-statsmodels.py), against the binomial variance where every rater judged one pair, and,
// with several raters a pair, against a direct double sum over every two pairs that share a rater.

const fixture = JSON.parse(readFileSync(new URL('../fixtures/clustered-majority-statsmodels.json', import.meta.url), 'utf8')) as {
  cases: { rater: number[]; a_won: number[]; win_rate_a: number; se: number }[];
};

describe('the pair-majority win rate with a rater-clustered interval', () => {
  it('clusteredMajorityWinRate, with one rater a pair and raters judging several pairs, gives statsmodels\' cluster-robust standard error', () => {
    for (const c of fixture.cases) {
      const rows = c.rater.map((rater, item) => ({ item, rater, outcome: c.a_won[item] === 1 ? 0 : 1 }));
      const result = clusteredMajorityWinRate(rows);
      expect(result.win_rate_a).toBeCloseTo(c.win_rate_a, 12);
      expect(result.se).toBeCloseTo(c.se, 12);
    }
  });

  it('clusteredMajorityWinRate, with each rater judging one pair, gives the binomial variance, and Wilson\'s interval', () => {
    // 20 pairs of one rater each, 14 won by a: G / (G - 1) * p (1 - p) / n.
    const rows = Array.from({ length: 20 }, (_, item) => ({ item, rater: item, outcome: item < 14 ? 0 : 1 }));
    const result = clusteredMajorityWinRate(rows);
    expect(result.se).toBeCloseTo(Math.sqrt((20 / 19) * ((0.7 * 0.3) / 20)), 14);
    expect(result.design_effect).toBeCloseTo(20 / 19, 14);
    const wilson = wilsonInterval(14 / (20 / 19), 20 / (20 / 19)) as [number, number];
    expect(result.ci95?.[0]).toBeCloseTo(wilson[0], 14);
    expect(result.ci95?.[1]).toBeCloseTo(wilson[1], 14);
  });

  it('clusteredMajorityWinRate, with three raters a pair drawn from a pool, equals the double sum over pairs that share a rater', () => {
    const random = seededRandom(51);
    const rows: MajorityJudgment[] = [];
    for (let item = 0; item < 60; item++) {
      const raters = new Set<number>();
      while (raters.size < 3) raters.add(Math.floor(random() * 12));
      for (const rater of raters) rows.push({ item, rater, outcome: random() < 0.1 ? 2 : random() < 0.6 ? 0 : 1 });
    }
    const result = clusteredMajorityWinRate(rows);
    // Independently: each pair's majority (more a than b), then sum e_i e_j over i, j sharing a rater (or i = j).
    const pairs = [...new Set(rows.map((r) => r.item))].map((item) => {
      const own = rows.filter((r) => r.item === item);
      const a = own.filter((r) => r.outcome === 0).length;
      const b = own.filter((r) => r.outcome === 1).length;
      return { y: a > b ? 1 : a < b ? 0 : null, raters: own.map((r) => r.rater) };
    });
    const decisive = pairs.filter((x) => x.y !== null) as { y: number; raters: number[] }[];
    const p = decisive.reduce((s, x) => s + x.y, 0) / decisive.length;
    let sum = 0;
    for (const x of decisive) for (const z of decisive) if (x === z || x.raters.some((r) => z.raters.includes(r))) sum += (x.y - p) * (z.y - p);
    const g = new Set(decisive.flatMap((x) => x.raters)).size;
    expect(result).toMatchObject({ pairs: 60, decisive: decisive.length, raters: 12 });
    expect(result.win_rate_a).toBeCloseTo(p, 14);
    expect(result.se).toBeCloseTo(Math.sqrt(((g / (g - 1)) * sum) / decisive.length ** 2), 14);
    // Shared raters widen the interval beyond the binomial one.
    expect(result.design_effect).toBeGreaterThanOrEqual(1);
  });

  it('clusteredMajorityWinRate, with one rater or no decisive pair, gives no interval and says how much there was', () => {
    expect(clusteredMajorityWinRate([{ item: 0, rater: 1, outcome: 0 }, { item: 1, rater: 1, outcome: 1 }])).toMatchObject({ pairs: 2, decisive: 2, raters: 1, win_rate_a: 0.5, se: null, ci95: null });
    expect(clusteredMajorityWinRate([{ item: 0, rater: 1, outcome: 0 }, { item: 0, rater: 2, outcome: 1 }])).toMatchObject({ pairs: 1, decisive: 0, win_rate_a: null, ci95: null });
  });
});
