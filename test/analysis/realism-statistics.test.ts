// Issue 53: the realism analysis against statsmodels, on a realism batch's answers made for the test by
// scripts/realism-reference.py (test/fixtures/realism/realism-batch.json): detection accuracy with its two-way
// (rater, scenario) cluster-robust interval and the equivalence verdict, pairwise error rates with Holm's correction,
// the logistic model with rater and scenario effects, confidence calibration, and the 2×2's logistic effects.
import { describe, expect, it } from 'vitest';
import { equivalenceTest } from '../../src/analysis/equivalence-test.js';
import { fixedEffectsLogit } from '../../src/analysis/fixed-effects-logit.js';
import { holmAdjust } from '../../src/analysis/holm.js';
import { realismSection } from '../../src/analysis/realism-section.js';
import { fixtureTable, REALISM_FIXTURE, type RealismFixture as Fixture } from './realism-fixture.js';

const realTable = (f: Fixture) => fixtureTable(f, (r, realSide) => (r.correct === 1 ? realSide : ((1 - realSide) as 0 | 1)));
const naturalTable = (f: Fixture) => fixtureTable(f, (r, realSide) => (r.natural_synthetic === 1 ? ((1 - realSide) as 0 | 1) : realSide));

const close = (actual: number | null | undefined, expected: number, digits = 10) => expect(actual).toBeCloseTo(expected, digits);

describe('the realism analysis against statsmodels (scripts/realism-reference.py)', () => {
  const f = REALISM_FIXTURE;
  const section = realismSection({ questionId: 'real', real: f.design.real, margin: f.design.margin, table: realTable(f), natural: naturalTable(f) });

  it('realismSection, per synthetic condition, gives the detection accuracy, its two-way clustered standard error and interval, and the TOST verdict that statsmodels gives', () => {
    expect(f.source).toContain('statsmodels');
    expect(section.conditions.map((c) => c.condition)).toEqual(Object.keys(f.detection));
    for (const row of section.conditions) {
      const ref = f.detection[row.condition]!;
      expect(row.n).toBe(ref.n);
      close(row.accuracy, ref.accuracy, 12);
      close(row.se, ref.se, 12);
      close(row.ci95?.[0], ref.ci95[0]);
      close(row.ci95?.[1], ref.ci95[1]);
      close(row.error_rate, ref.error_rate, 12);
      close(row.equivalence?.p_lower, ref.tost.p_lower);
      close(row.equivalence?.p_upper, ref.tost.p_upper);
      close(row.equivalence?.ci[0], ref.tost.ci90[0]);
      close(row.equivalence?.ci[1], ref.tost.ci90[1]);
      expect(row.equivalence?.equivalent).toBe(ref.tost.equivalent);
      expect(row.verdict).toBe(ref.tost.equivalent ? 'equivalent' : 'detected');
    }
    // The data holds both verdicts, so neither can pass by accident.
    expect(new Set(section.conditions.map((c) => c.verdict))).toEqual(new Set(['equivalent', 'detected']));
  });

  it('realismSection compares the error rates pairwise with the clustered linear probability model and Holm, as statsmodels and multipletests do', () => {
    expect(section.pairwise.map((p) => [p.a, p.b])).toEqual(f.pairwise.map((p) => [p.a, p.b]));
    section.pairwise.forEach((p, k) => {
      const ref = f.pairwise[k]!;
      close(p.error_difference, ref.difference, 12);
      close(p.se, ref.se, 12);
      close(p.p, ref.p);
      close(p.p_holm, ref.p_holm);
    });
  });

  it('realismSection fits the logistic model with rater and scenario fixed effects as statsmodels Logit does on the same rows', () => {
    const fe = section.fixed_effects;
    if ('reason' in fe) throw new Error(fe.reason);
    const ref = f.fixed_effects_logit;
    expect({ rows: fe.rows, raters: fe.raters, scenarios: fe.scenarios, parameters: fe.parameters, dropped: fe.dropped_rows }).toEqual({
      rows: ref.rows, raters: ref.raters, scenarios: ref.scenarios, parameters: ref.parameters, dropped: ref.dropped_rows,
    });
    fe.pairwise.forEach((p, k) => {
      const r = ref.pairwise[k]!;
      expect([p.a, p.b]).toEqual([r.a, r.b]);
      close(p.log_odds_ratio, r.log_odds_ratio, 7);
      close(p.se, r.se, 7);
      close(p.p_holm, r.p_holm, 7);
    });
  });

  it('realismSection calibrates confidence: accuracy per level, and the clustered logistic slope statsmodels gives', () => {
    const c = section.calibration;
    expect(c?.n).toBe(f.calibration.n);
    expect(c?.levels.map((l) => ({ confidence: l.confidence, n: l.n, correct: l.correct }))).toEqual(f.calibration.levels);
    close(c?.slope?.estimate, f.calibration.slope, 8);
    close(c?.slope?.se, f.calibration.slope_se, 8);
  });

  it('the 2×2 gives the writer and knowledge main effects and their interaction on the logit scale, with two-way clustered intervals, as statsmodels Logit and t_test do', () => {
    expect(section.two_by_two.map((t) => t.model)).toEqual(['gpt-test']);
    const table = section.two_by_two[0]!;
    expect(table.cells.map((c) => [c.condition, c.writer, c.knowledge])).toEqual([
      ['HUMANS:human', 'person', 'own-side'],
      ['HUMAN_SCRIPT:human', 'person', 'omniscient'],
      ['AGENTS:gpt-test', 'model', 'own-side'],
      ['SCRIPT:gpt-test', 'model', 'omniscient'],
    ]);
    expect(table.cells[0]).toMatchObject({ natural: { rate: 0.5, by_construction: true }, detection_error: { rate: 0.5, by_construction: true } });
    close(table.cells[3]?.detection_error.rate, f.detection['SCRIPT:gpt-test']!.error_rate, 12);
    for (const outcome of ['natural', 'detection_error'] as const) {
      const model = table[outcome];
      if ('reason' in model) throw new Error(model.reason);
      for (const name of ['writer', 'knowledge', 'interaction'] as const) {
        const ref = f.two_by_two[outcome].effects[name];
        close(model.effects[name].estimate, ref.estimate, 8);
        close(model.effects[name].se, ref.se, 8);
        close(model.effects[name].ci95[0], ref.ci95[0], 8);
        close(model.effects[name].ci95[1], ref.ci95[1], 8);
        close(model.effects[name].p, ref.p, 8);
      }
    }
  });

  it('realismSection without a margin stated in advance makes no equivalence claim and says so, whatever the data', () => {
    const none = realismSection({ questionId: 'real', real: f.design.real, margin: null, table: realTable(f), natural: null });
    expect(none.conditions.map((c) => c.equivalence)).toEqual([null, null, null]);
    expect(none.conditions.map((c) => c.verdict)).toEqual(['detected', 'inconclusive', 'inconclusive']);
    expect(none.conditions[1]?.sentence).toContain('no equivalence margin was stated before the batch opened');
    expect(none.two_by_two[0]?.natural).toMatchObject({ reason: 'no answers of this kind in the report (naturalness needs a preference question of the same batch)' });
  });
});

describe('small estimators', () => {
  it('equivalenceTest of 0.5 ± 0.1 with se 0.02 at 0.53 is equivalent (p = Φ(-3.5)), and at 0.57 with se 0.02 is not (p = Φ(-1.5))', () => {
    const inside = equivalenceTest(0.53, 0.02, 0.4, 0.6);
    close(inside.p, 0.000232629079, 9);
    expect(inside.equivalent).toBe(true);
    const outside = equivalenceTest(0.57, 0.02, 0.4, 0.6);
    close(outside.p, 0.0668072013, 9);
    expect(outside.equivalent).toBe(false);
  });

  it('holmAdjust gives the step-down adjusted p-values in the order given, monotone and capped at 1', () => {
    // Holm 1979's procedure by hand: sorted 0.01, 0.02, 0.04, 0.3 times 4, 3, 2, 1, made monotone.
    expect(holmAdjust([0.04, 0.01, 0.3, 0.02])).toEqual([0.08, 0.04, 0.3, 0.06]);
    expect(holmAdjust([0.5, 0.6])).toEqual([1, 1]);
  });
});

describe('the fixed-effects logit, when there are not enough answers', () => {
  it('fixedEffectsLogit with fewer than 5 answers per parameter, or more than 400 parameters, fits nothing and says why', () => {
    const n = 40;
    const base = { error: Float64Array.from({ length: n }, (_, i) => (i * 7) % 3 === 0 ? 1 : 0), condition: Int32Array.from({ length: n }, (_, i) => i % 2), conditions: ['A:m', 'B:m'] };
    const few = fixedEffectsLogit({ ...base, rater: Int32Array.from({ length: n }, (_, i) => i % 10), scenario: Int32Array.from({ length: n }, (_, i) => Math.floor(i / 10)) });
    expect(few).toEqual({ reason: expect.stringMatching(/^too few answers for rater and scenario effects: \d+ answers for \d+ parameters \(needs 5 per parameter\)$/) });
    const big = 3000;
    const many = fixedEffectsLogit({
      error: Float64Array.from({ length: big }, (_, i) => (i % 3 === 0 ? 1 : 0)),
      condition: Int32Array.from({ length: big }, (_, i) => i % 2),
      conditions: ['A:m', 'B:m'],
      rater: Int32Array.from({ length: big }, (_, i) => i % 500),
      scenario: Int32Array.from({ length: big }, (_, i) => i % 7),
    });
    expect(many).toEqual({ reason: expect.stringContaining('parameters (at most 400)') });
  });
});
