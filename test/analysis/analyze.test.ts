// The full report from in-memory judgments, checked against test/fixtures/stats/expected.json (proportions and the
// baseball Bradley-Terry fit; path in shared-stats.ts) and on the edge cases the issue lists.
import { describe, expect, it } from 'vitest';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { analyzeJudgments } from '../../src/analysis/analyze.js';
import { createJudgmentTableBuilder, findDuplicateJudgment, type JudgmentRowInput } from '../../src/analysis/judgment-table.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { type Json, loadExpected } from './shared-stats.js';

const expected = loadExpected();
const SOURCE = { kind: 'file', path: 'memory' } as const;
const A = 'SCRIPT:gpt-4o-mini';
const B = 'AGENTS:gpt-4o-mini';

function row(partial: Partial<JudgmentRowInput> & { item: string; rater: string; outcome: 0 | 1 | 2 }): JudgmentRowInput {
  return { conditionA: A, conditionB: B, left: -1, seconds: NaN, aWords: NaN, bWords: NaN, scenario: null, category: null, ...partial };
}

function tableOf(rows: JudgmentRowInput[]) {
  const b = createJudgmentTableBuilder();
  for (const r of rows) expect(b.add(r)).toBeNull();
  return b.build();
}

/** Every number in the report is finite: undefined statistics are null, never NaN or Infinity. */
function nonFinitePaths(value: unknown, path = '$'): string[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nonFinitePaths(v, `${path}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => nonFinitePaths(v, `${path}.${k}`));
  return [];
}

describe('analyzeJudgments', () => {
  it('for 73 wins of a in 100 decisive judgments, reports the shared Wilson interval and exact p', () => {
    const ex = (expected.proportions as Json[]).find((p) => p.x === 73 && p.n === 100);
    const rows = Array.from({ length: 100 }, (_, i) => row({ item: `p${i}`, rater: `r${i % 10}`, outcome: i < 73 ? 0 : 1 }));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 200 });
    const c = report.comparisons[0]!;
    expect(c).toMatchObject({ a: A, b: B, n: 100, wins_a: 73, wins_b: 27, ties: 0, win_rate_a: 0.73 });
    expect(Math.abs(c.ci95![0] - ex.wilson95[0])).toBeLessThan(1e-9);
    expect(Math.abs(c.ci95![1] - ex.wilson95[1])).toBeLessThan(1e-9);
    expect(Math.abs(c.p_value! - ex['binom_two_sided_p_vs_0.5']) / ex['binom_two_sided_p_vs_0.5']).toBeLessThan(1e-9);
    expect(c.bootstrap.cluster).toBe('item');
    expect(c.bootstrap.ci95![0]).toBeLessThan(0.73);
    expect(nonFinitePaths(report)).toEqual([]);
  });

  it('with ties, excludes them from the win rate, counts them as half in ties_half, and takes the pair majority as the stopping rule does', () => {
    const rows = [
      row({ item: '1', rater: 'x', outcome: 0 }),
      row({ item: '1', rater: 'y', outcome: 0 }),
      row({ item: '1', rater: 'z', outcome: 2 }),
      row({ item: '2', rater: 'x', outcome: 1 }),
      row({ item: '2', rater: 'y', outcome: 2 }),
      row({ item: '2', rater: 'z', outcome: 2 }),
      row({ item: '3', rater: 'x', outcome: 0 }),
      row({ item: '3', rater: 'y', outcome: 1 }),
    ];
    const c = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 0, tiesAllowed: true }).comparisons[0]!;
    expect(c).toMatchObject({ wins_a: 3, wins_b: 2, ties: 3, win_rate_a: 0.6 });
    expect(c.ties_half.win_rate_a).toBe(4.5 / 8);
    // One definition with the sequential rule (issue 51): tie answers aside, pair 2 (b, tie, tie) goes to b; pair 3 (a, b) ties.
    expect(c.majority).toMatchObject({ pairs: 3, wins_a: 1, wins_b: 1, ties: 1 });
    expect(c.agreement.categories).toEqual([A, B, 'TIE']);
    expect(c.agreement.categories_from).toBe('batch settings');
    expect(c.agreement.fleiss_variant).toBe('gwet_unequal');
  });

  it('on Agresti\'s baseball data with more than two conditions, gives Bradley-Terry scores matching BradleyTerry2', () => {
    const ex = expected.bradley_terry.baseball_1987_AL_East;
    const rows: JudgmentRowInput[] = [];
    let g = 0;
    for (const [a, b, wa, wb] of ex.pairs_first_second_wins_first_wins_second as [string, string, number, number][]) {
      for (let k = 0; k < wa + wb; k++) rows.push(row({ item: `g${g++}`, rater: 'scorer', outcome: k < wa ? 0 : 1, conditionA: a, conditionB: b }));
    }
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 50, anchor: 'Baltimore' });
    const bt = report.bradley_terry!;
    expect(bt.anchor).toBe('Baltimore');
    for (const c of bt.conditions) {
      const want = 1000 + (400 * ex.natural_log_ability_vs_Baltimore[c.condition]) / Math.LN10;
      expect(Math.abs(c.score! - want)).toBeLessThan(1e-7);
      if (c.condition !== 'Baltimore') expect(c.ci95![0]).toBeLessThan(c.score!);
    }
    expect(report.comparisons).toHaveLength(21);
  });

  it('with two comparisons of disjoint conditions, keeps each comparison\'s agreement and warns that the pooled batch kappa is inflated', () => {
    // Within each comparison the raters agree no better than chance (kappa about 0); pooled, kappa rises.
    const rows: JudgmentRowInput[] = [];
    for (const [k, [a, b]] of [['SCRIPT:m1', 'AGENTS:m1'], ['SCRIPT:m2', 'AGENTS:m2']].entries())
      for (let i = 0; i < 40; i++)
        for (const [r, rater] of ['x', 'y'].entries()) rows.push(row({ item: `c${k}p${i}`, rater, outcome: ((i >> r) & 1) as 0 | 1, conditionA: a, conditionB: b }));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 0, tiesAllowed: false });
    for (const c of report.comparisons) expect(Math.abs(c.agreement.fleiss_kappa!)).toBeLessThan(0.05);
    expect(report.agreement.categories).toEqual(['AGENTS:m1', 'AGENTS:m2', 'SCRIPT:m1', 'SCRIPT:m2']);
    expect(report.agreement.fleiss_kappa!).toBeGreaterThan(0.2);
    expect(report.notes.join(' ')).toMatch(/whole batch pools comparisons.*per-comparison values/);
    const single = analyzeJudgments(tableOf(rows.filter((r) => r.conditionA === 'SCRIPT:m1')), { source: SOURCE, bootstrap: 0, tiesAllowed: false });
    expect(single.notes.join(' ')).not.toMatch(/pools comparisons/);
  });

  it('with SCRIPT vs AGENTS run separately per model, fits Bradley-Terry per model on its own scale and says the scales differ', () => {
    // m1: SCRIPT wins 30, AGENTS 10, 4 ties; m2: SCRIPT 12, AGENTS 24. Two conditions: the score is the log odds in closed form.
    const rows: JudgmentRowInput[] = [];
    const add = (model: string, outcome: 0 | 1 | 2, times: number) => {
      for (let k = 0; k < times; k++) rows.push(row({ item: `${model}-${outcome}-${k}`, rater: `r${k % 4}`, outcome, conditionA: `SCRIPT:${model}`, conditionB: `AGENTS:${model}`, scenario: `s${(k + 2 * outcome) % 5}` }));
    };
    add('m1', 0, 30);
    add('m1', 1, 10);
    add('m1', 2, 4);
    add('m2', 0, 12);
    add('m2', 1, 24);
    const bt = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 100 }).bradley_terry!;
    expect(bt.reason).toBeUndefined();
    expect(bt.groups!.map((g) => [g.anchor, g.conditions.slice().sort()])).toEqual(
      expect.arrayContaining([
        ['SCRIPT:m1', ['AGENTS:m1', 'SCRIPT:m1']],
        ['SCRIPT:m2', ['AGENTS:m2', 'SCRIPT:m2']],
      ]),
    );
    const score = (c: string) => bt.conditions.find((x) => x.condition === c)!;
    expect(score('SCRIPT:m1')).toMatchObject({ score: 1000, anchor: 'SCRIPT:m1' });
    expect(Math.abs(score('AGENTS:m1').score! - (1000 + 400 * Math.log10(12 / 32)))).toBeLessThan(1e-6);
    expect(Math.abs(score('AGENTS:m2').score! - (1000 + 400 * Math.log10(24 / 12)))).toBeLessThan(1e-6);
    expect(score('AGENTS:m2').anchor).toBe('SCRIPT:m2');
    expect(score('AGENTS:m2').ci95![0]).toBeLessThan(score('AGENTS:m2').score!);
    expect(bt.note).toMatch(/2 groups of conditions never compared with each other/);
  });

  it('with raters resampled and two comparisons rated by different raters, resamples only each comparison\'s own raters', () => {
    const rows: JudgmentRowInput[] = [];
    for (const [k, model] of ['m1', 'm2'].entries())
      for (let i = 0; i < 30; i++)
        for (let r = 0; r < 3; r++)
          rows.push(row({ item: `${model}-${i}`, rater: `${model}-r${(i + r) % 5}`, outcome: ((i * 3 + r + k) % 4 === 0 ? 1 : 0) as 0 | 1, conditionA: `SCRIPT:${model}`, conditionB: `AGENTS:${model}`, scenario: `s${i % 6}` }));
    const options = { source: SOURCE, bootstrap: 300, seed: 11, resampleRaters: true };
    const both = analyzeJudgments(tableOf(rows), options).comparisons[0]!;
    const alone = analyzeJudgments(tableOf(rows.filter((r) => r.conditionA === 'SCRIPT:m1')), options).comparisons[0]!;
    expect(both.bootstrap.raters_resampled).toBe(true);
    expect(both.bootstrap.undefined_replicates).toBe(0);
    expect(both.bootstrap.ci95).toEqual(alone.bootstrap.ci95);
  });

  it('with no judgments, returns an empty report whose statistics are null with reasons', () => {
    const report = analyzeJudgments(tableOf([]), { source: SOURCE });
    expect(report.comparisons).toEqual([]);
    expect(report.agreement).toMatchObject({ percent: null, fleiss_kappa: null, krippendorff_alpha: null, gwet_ac1: null, reason: expect.any(String) });
    expect(report.position_bias).toMatchObject({ left_rate: null, reason: expect.any(String) });
    expect(nonFinitePaths(report)).toEqual([]);
  });

  it('when every judgment is a tie, reports no win rate and kappa/alpha as null with the one-category reason', () => {
    const rows = ['1', '2', '3'].flatMap((item) => ['x', 'y'].map((rater) => row({ item, rater, outcome: 2 })));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, tiesAllowed: null });
    const c = report.comparisons[0]!;
    expect(c).toMatchObject({ ties: 6, win_rate_a: null, ci95: null, p_value: null });
    expect(c.agreement.categories).toEqual(['TIE']);
    expect(c.agreement).toMatchObject({ fleiss_kappa: null, krippendorff_alpha: null, gwet_ac1: null, percent: 1 });
    expect(c.agreement.reasons.fleiss_kappa).toMatch(/one category/);
    expect(c.agreement.reasons.gwet_ac1).toMatch(/fewer than two/);
    expect(c.sample_size.reason).toMatch(/no decisive/);
    expect(c.bootstrap.ci95).toBeNull();
    expect(nonFinitePaths(report)).toEqual([]);
  });

  it('with one rater, reports win rates but agreement as null because nothing is pairable', () => {
    const rows = ['1', '2', '3', '4'].map((item, i) => row({ item, rater: 'solo', outcome: (i % 2) as 0 | 1 }));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE });
    expect(report.comparisons[0]).toMatchObject({ wins_a: 2, wins_b: 2, win_rate_a: 0.5 });
    expect(report.comparisons[0]!.agreement).toMatchObject({ percent: null, krippendorff_alpha: null });
    expect(report.raters[0]).toMatchObject({ rater: 'solo', judgments: 4, loo_agreement: null });
    expect(nonFinitePaths(report)).toEqual([]);
  });

  it('with unanimous items and perfect agreement, reports every coefficient as 1 and each rater agreeing fully', () => {
    const rows = ['1', '2', '3', '4'].flatMap((item, i) => ['x', 'y', 'z'].map((rater) => row({ item, rater, outcome: (i % 2) as 0 | 1, seconds: 20 + i })));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, tiesAllowed: false });
    const ag = report.comparisons[0]!.agreement;
    expect(ag).toMatchObject({ percent: 1, unanimous_share: 1, majority_share: 1, fleiss_kappa: 1, fleiss_variant: 'fleiss', krippendorff_alpha: 1, gwet_ac1: 1 });
    expect(ag.cohen_kappa_mean).toBeNull();
    expect(report.raters.map((r) => r.loo_agreement)).toEqual([1, 1, 1]);
    expect(report.comparisons[0]!.dawid_skene).toEqual({ win_rate_a: 0.5, pairs_a: 2, pairs_b: 2, pairs_tie: 0 });
    expect(report.raters[0]!.median_seconds).toBe(21.5);
  });

  it('with the side each dialogue was shown on, reports the left-choice rate and the win rate split by side', () => {
    const rows = Array.from({ length: 40 }, (_, i) => row({ item: `p${i}`, rater: 'r', outcome: i % 4 === 3 ? 1 : 0, left: (i % 2) as 0 | 1 }));
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 0 });
    const pb = report.comparisons[0]!.position_bias;
    // a wins 30 of 40; left is a on even i. Left chosen: a left and a won (20) + b left and b won (10).
    expect(pb).toMatchObject({ n: 40, left_chosen: 30, left_rate: 0.75 });
    expect(pb.a_shown_left).toMatchObject({ wins_a: 20, wins_b: 0 });
    expect(pb.a_shown_right).toMatchObject({ wins_a: 10, wins_b: 10 });
    expect(report.raters[0]!.left_rate).toBe(0.75);
    expect(report.position_bias.left_rate).toBe(0.75);
  });

  it('with scenarios and categories, breaks the win rate down and clusters the bootstrap by scenario', () => {
    const rows = Array.from({ length: 60 }, (_, i) =>
      row({ item: `p${i}`, rater: `r${i % 3}`, outcome: (i % 3 === 0 ? 1 : 0) as 0 | 1, scenario: `s${i % 6}`, category: i % 2 ? 'cooperative' : 'competitive' }),
    );
    const c = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 300, seed: 5 }).comparisons[0]!;
    expect(c.bootstrap.cluster).toBe('scenario');
    expect(c.by_category.map((k) => [k.key, k.n])).toEqual([['competitive', 30], ['cooperative', 30]]);
    expect(c.by_scenario).toHaveLength(6);
    expect(c.by_scenario.reduce((s, k) => s + k.wins_a, 0)).toBe(c.wins_a);
    const again = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 300, seed: 5 }).comparisons[0]!;
    expect(again.bootstrap.ci95).toEqual(c.bootstrap.ci95);
  });

  it('with weak preferences, where Dawid-Skene needs a few hundred EM iterations, lets it converge and adds no warning', () => {
    // 120 pairs x 3 of 12 raters, a chosen 40% of decisive judgments, 10% ties: EM needs about 360 iterations here.
    const random = seededRandom(2);
    const rows: JudgmentRowInput[] = [];
    for (let i = 0; i < 120; i++) {
      const used = new Set<number>();
      for (let k = 0; k < 3; k++) {
        let r = Math.floor(random() * 12);
        while (used.has(r)) r = (r + 1) % 12;
        used.add(r);
        const u = random();
        rows.push(row({ item: `p${i}`, rater: `r${r}`, outcome: u < 0.1 ? 2 : random() < 0.4 ? 0 : 1 }));
      }
    }
    const report = analyzeJudgments(tableOf(rows), { source: SOURCE, bootstrap: 0 });
    expect(report.comparisons[0]!.dawid_skene).not.toBeNull();
    expect(report.notes.join(' ')).not.toMatch(/without converging/);
  });

  it('above the size limit, skips Dawid-Skene and Cohen pairs and says so in the notes', () => {
    const rows = ['1', '2', '3'].flatMap((item) => ['x', 'y'].map((rater) => row({ item, rater, outcome: 0 })));
    const report: AnalysisReport = analyzeJudgments(tableOf(rows), { source: SOURCE, heavyLimit: 2 });
    expect(report.notes.join(' ')).toMatch(/skipped/);
    expect(report.comparisons[0]!.dawid_skene).toBeNull();
    expect(report.comparisons[0]!.agreement.cohen_pairs).toBeNull();
  });
});

describe('createJudgmentTableBuilder', () => {
  it('when a pair changes conditions, refuses the row with the problem', () => {
    const b = createJudgmentTableBuilder();
    expect(b.add(row({ item: '1', rater: 'x', outcome: 0 }))).toBeNull();
    expect(b.add(row({ item: '1', rater: 'y', outcome: 1, conditionA: 'X:y' }))).toMatch(/two different pairs of conditions/);
    expect(b.build().n).toBe(1);
  });
  it('findDuplicateJudgment, when a rater judged the same pair twice, names the first repeated row; otherwise null', () => {
    const b = createJudgmentTableBuilder();
    for (const [item, rater] of [['1', 'x'], ['2', 'x'], ['1', 'y'], ['2', 'y'], ['2', 'x'], ['1', 'y']]) b.add(row({ item: item!, rater: rater!, outcome: 0 }));
    expect(findDuplicateJudgment(b.build())).toEqual({ row: 4, item: '2', rater: 'x' });
    expect(findDuplicateJudgment(tableOf([row({ item: '1', rater: 'x', outcome: 0 }), row({ item: '1', rater: 'y', outcome: 0 })]))).toBeNull();
  });
});
