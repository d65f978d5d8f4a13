// Checks Wilson intervals, exact binomial tests and Bradley-Terry fits against test/fixtures/stats/expected.json
// (values from R binom.test, statsmodels proportion_confint and BradleyTerry2); the path is in shared-stats.ts.
import { describe, expect, it } from 'vitest';
import { binomialTestP } from '../../src/numbers/binomial-test.js';
import { fitBradleyTerry } from '../../src/analysis/bradley-terry.js';
import { wilsonInterval } from '../../src/analysis/wilson.js';
import { type Json, loadExpected, loadFixture } from './shared-stats.js';

const expected = loadExpected();
const close = (a: number | null | undefined, b: number, tol = 1e-9) => {
  expect(a).not.toBeNull();
  expect(Math.abs((a as number) - b)).toBeLessThan(tol);
};

describe('wilsonInterval and binomialTestP on the shared proportions', () => {
  for (const ex of expected.proportions as Json[]) {
    it(`for ${ex.x}/${ex.n}, match the Wilson interval and the two-sided p against 0.5`, () => {
      const ci = wilsonInterval(ex.x, ex.n);
      close(ci?.[0], ex.wilson95[0]);
      close(ci?.[1], ex.wilson95[1]);
      const p = binomialTestP(ex.x, ex.n) as number;
      // Tiny p-values are compared relative to their size.
      expect(Math.abs(p - ex['binom_two_sided_p_vs_0.5'])).toBeLessThan(1e-9 * Math.max(1e-9, ex['binom_two_sided_p_vs_0.5']) + 1e-12);
    });
  }
  for (const ex of expected.binomial_tests as Json[]) {
    it(`binomialTestP(${ex.x}, ${ex.n}, ${ex.p0}, ${ex.alternative}) matches R's binom.test`, () => {
      close(binomialTestP(ex.x, ex.n, ex.p0, ex.alternative), ex.p_value);
    });
  }
  it('binomialTestP, for many (x, n, p0), equals the brute-force sum over every outcome no likelier than x', () => {
    const pmf = (k: number, n: number, p: number) => {
      let logC = 0;
      for (let i = 1; i <= k; i++) logC += Math.log(n - k + i) - Math.log(i);
      return Math.exp(logC + k * Math.log(p) + (n - k) * Math.log1p(-p));
    };
    for (const [n, p0] of [[1, 0.5], [7, 0.5], [40, 0.3], [201, 0.5], [333, 0.9]] as [number, number][]) {
      const all = Array.from({ length: n + 1 }, (_, k) => pmf(k, n, p0));
      for (let x = 0; x <= n; x += Math.max(1, Math.floor(n / 17))) {
        const want = Math.min(1, all.filter((q) => q <= all[x]! * (1 + 1e-7)).reduce((s, q) => s + q, 0));
        expect(Math.abs((binomialTestP(x, n, p0) as number) - want)).toBeLessThan(1e-9 * Math.max(want, 1e-3));
      }
    }
  });
  it('wilsonInterval and binomialTestP, with no trials, return null', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(binomialTestP(0, 0)).toBeNull();
  });
});

describe('fitBradleyTerry on the shared fits', () => {
  it('on bt_two_systems.csv (ties as half), gives AGENTS 1195.51 with SCRIPT anchored at 1000', () => {
    const rows = loadFixture('bt_two_systems.csv');
    const conditions = ['AGENTS', 'SCRIPT'];
    const wins = new Float64Array(4);
    for (const r of rows) {
      const n = Number(r.n);
      if (r.winner === 'a') wins[0 * 2 + 1]! += n;
      else if (r.winner === 'b') wins[1 * 2 + 0]! += n;
      else {
        wins[1]! += n / 2;
        wins[2]! += n / 2;
      }
    }
    const fit = fitBradleyTerry(conditions, wins, 1);
    expect(fit.ok).toBe(true);
    if (!fit.ok) return;
    close(fit.score[0], expected.bradley_terry['bt_two_systems.csv'].elo_400_log10.AGENTS);
    close(fit.score[1], 1000);
    close(fit.log_ability[0], expected.bradley_terry['bt_two_systems.csv'].natural_log_ability_vs_anchor.AGENTS);
  });
  it('on Agresti\'s 1987 AL East baseball data, matches BradleyTerry2 abilities relative to Baltimore', () => {
    const ex = expected.bradley_terry.baseball_1987_AL_East;
    const teams = Object.keys(ex.natural_log_ability_vs_Baltimore);
    const k = teams.length;
    const wins = new Float64Array(k * k);
    for (const [a, b, wa, wb] of ex.pairs_first_second_wins_first_wins_second as [string, string, number, number][]) {
      wins[teams.indexOf(a) * k + teams.indexOf(b)]! += wa;
      wins[teams.indexOf(b) * k + teams.indexOf(a)]! += wb;
    }
    const fit = fitBradleyTerry(teams, wins, teams.indexOf('Baltimore'));
    expect(fit.ok).toBe(true);
    if (!fit.ok) return;
    teams.forEach((t, i) => close(fit.log_ability[i], ex.natural_log_ability_vs_Baltimore[t]));
  });
  it('when the comparisons form groups never compared with each other (one per model), reports no fit and says why in plain words', () => {
    // SCRIPT:m1 vs AGENTS:m1 and SCRIPT:m2 vs AGENTS:m2, each with wins both ways.
    const wins = new Float64Array(16);
    wins[0 * 4 + 1] = 6;
    wins[1 * 4 + 0] = 4;
    wins[2 * 4 + 3] = 5;
    wins[3 * 4 + 2] = 5;
    const fit = fitBradleyTerry(['AGENTS:m1', 'SCRIPT:m1', 'AGENTS:m2', 'SCRIPT:m2'], wins);
    expect(fit).toMatchObject({ ok: false, reason: expect.stringMatching(/^The conditions form groups never compared with each other \(AGENTS:m1 and AGENTS:m2/) });
  });
  it('when two groups were compared but one never beat the other, reports no finite fit', () => {
    // A and B beat each other, C and D beat each other, and A, B always beat C.
    const wins = Float64Array.from([0, 3, 2, 0, 3, 0, 0, 0, 0, 0, 0, 4, 0, 0, 4, 0]);
    expect(fitBradleyTerry(['A', 'B', 'C', 'D'], wins)).toMatchObject({ ok: false, reason: expect.stringMatching(/never beat the other/) });
  });
  it('when one condition never loses, reports no fit with the reason', () => {
    const fit = fitBradleyTerry(['A', 'B', 'C'], Float64Array.from([0, 5, 3, 0, 0, 2, 0, 1, 0]));
    expect(fit).toMatchObject({ ok: false, reason: 'A never lost: its score is infinite' });
  });
});
