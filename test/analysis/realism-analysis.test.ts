// Issue 53 (and issue 52, item 6): a realism batch's analysis, read from the database as every report is: the
// which-is-real question's realism section equals statsmodels on the same answers (scripts/realism-reference.py), the
// naturalness question gains each condition's win rate against HUMANS:human, and the paper table its two columns.
import { describe, expect, it } from 'vitest';
import { computeBatchAnalysis } from '../../src/analysis/analysis-cache.js';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { selectQuestionReport } from '../../src/analysis/question-reports.js';
import { renderAnalysisHtml } from '../../src/analysis/report-html.js';
import { renderAnalysisMarkdown } from '../../src/analysis/report-md.js';
import { createTestDb } from '../helpers/test-db.js';
import { seedFixtureBatch } from './realism-batch.js';
import { REALISM_FIXTURE as f } from './realism-fixture.js';

const NOW = new Date('2026-04-02T10:00:00.000Z');

function analysed() {
  const { db } = createTestDb();
  const { batchId } = seedFixtureBatch(db, f);
  const report = computeBatchAnalysis(db, batchId, { now: NOW, bootstrap: 200 });
  if (!report) throw new Error('no report');
  return { db, batchId, report };
}

describe('a realism batch analysed from the database', () => {
  const { report } = analysed();
  const real = selectQuestionReport(report, 'real');
  const natural = selectQuestionReport(report, 'natural');

  it('computeBatchAnalysis, for the which-is-real question, gives each condition the detection accuracy, clustered interval and equivalence verdict statsmodels gives on the same answers', () => {
    const section = real.realism;
    if (!section) throw new Error('no realism section');
    expect(section).toMatchObject({ question_id: 'real', real: 'HUMANS:human', margin: f.design.margin, alpha: 0.05 });
    expect(section.conditions.map((c) => c.condition)).toEqual(Object.keys(f.detection));
    for (const row of section.conditions) {
      const ref = f.detection[row.condition]!;
      expect(row.n).toBe(ref.n);
      expect(row.accuracy).toBeCloseTo(ref.accuracy, 12);
      expect(row.se).toBeCloseTo(ref.se, 12);
      expect(row.ci95?.[0]).toBeCloseTo(ref.ci95[0], 10);
      expect(row.ci95?.[1]).toBeCloseTo(ref.ci95[1], 10);
      expect(row.equivalence?.p).toBeCloseTo(ref.tost.p, 10);
      expect(row.equivalence?.equivalent).toBe(ref.tost.equivalent);
    }
    expect(section.conditions.map((c) => c.verdict)).toEqual(['detected', 'equivalent', 'equivalent']);
    expect(section.calibration?.n).toBe(f.calibration.n);
  });

  it('computeBatchAnalysis gives the 2×2 of writer and knowledge, on naturalness and on detection error, with the effects statsmodels fits on the same rows', () => {
    const [table] = real.realism?.two_by_two ?? [];
    for (const outcome of ['natural', 'detection_error'] as const) {
      const model = table?.[outcome];
      if (!model || 'reason' in model) throw new Error(`no ${outcome} model`);
      for (const name of ['writer', 'knowledge', 'interaction'] as const) {
        expect(model.effects[name].estimate).toBeCloseTo(f.two_by_two[outcome].effects[name].estimate, 8);
        expect(model.effects[name].se).toBeCloseTo(f.two_by_two[outcome].effects[name].se, 8);
      }
    }
  });

  it('computeBatchAnalysis gives the naturalness question each condition\'s win rate against HUMANS:human, turned round where HUMANS:human is condition a', () => {
    expect(natural.against_humans?.reference).toBe('HUMANS:human');
    const rows = natural.against_humans?.rows ?? [];
    expect(rows.map((r) => r.condition)).toEqual(['SCRIPT:gpt-test', 'AGENTS:gpt-test', 'HUMAN_SCRIPT:human']);
    for (const row of rows) {
      const chosen = f.rows.filter((r) => r.synthetic === row.condition);
      expect(row.wins).toBe(chosen.filter((r) => r.natural_synthetic === 1).length);
      expect(row.win_rate).toBeCloseTo(row.wins / chosen.length, 12);
      expect(row.ci95?.[0]).toBeLessThan(row.win_rate ?? 0);
    }
    // The which-is-real question's report has none: its shares are detection, in its realism section.
    expect(real.against_humans).toBeUndefined();
  });

  it('computeBatchAnalysis adds to the naturalness question\'s paper table each condition\'s win rate against HUMANS:human and its judged-real share; the which-is-real question has no paper table', () => {
    const rows = natural.paper?.rows.filter((r) => r.scope === 'all') ?? [];
    const row = (c: string) => rows.find((r) => r.condition === c);
    const script = f.rows.filter((r) => r.synthetic === 'SCRIPT:gpt-test');
    expect(row('SCRIPT:gpt-test')?.judged_real).toMatchObject({ n: script.length, rate: script.filter((r) => r.correct === 0).length / script.length });
    expect(row('SCRIPT:gpt-test')?.win_rate_vs_humans).toMatchObject({ n: script.length, rate: script.filter((r) => r.natural_synthetic === 1).length / script.length });
    expect(row('HUMANS:human')?.judged_real).toMatchObject({ n: f.rows.length, rate: f.rows.filter((r) => r.correct === 1).length / f.rows.length });
    expect(row('HUMANS:human')?.win_rate_vs_humans).toMatchObject({ n: 0, rate: null });
    expect(real.paper).toBeUndefined();
  });

  it('renderAnalysisMarkdown and renderAnalysisHtml show the realism rows (detection with its verdict, the 2×2 effects, confidence), the win rates against HUMANS:human and the paper table\'s two columns', async () => {
    const md = renderAnalysisMarkdown(report);
    const script = f.detection['SCRIPT:gpt-test']!;
    const pctOf = (x: number) => `${(x * 100).toFixed(1)}%`;
    expect(md).toContain('### Which is real: detection per condition');
    const raters = new Set(f.rows.filter((r) => r.synthetic === 'SCRIPT:gpt-test').map((r) => r.rater)).size;
    expect(md).toContain(`| SCRIPT:gpt-test | ${script.n} | ${raters} | 24 | ${pctOf(script.accuracy)} | [${pctOf(script.ci95[0])}, ${pctOf(script.ci95[1])}] | ${pctOf(script.error_rate)} |`);
    expect(md).toMatch(/\| AGENTS:gpt-test \|[^\n]*\| equivalent \|/);
    expect(md).toContain('### 2×2 of writer and knowledge (gpt-test): effects');
    const knowledge = f.two_by_two.natural.effects.knowledge;
    expect(md).toContain(`| knowledge: omniscient − own side | +${knowledge.estimate.toFixed(2)} [+${knowledge.ci95[0].toFixed(2)}, +${knowledge.ci95[1].toFixed(2)}]`);
    expect(md).toContain('### Which is real: confidence');
    expect(md).toContain('### Win rates against HUMANS:human');
    expect(md).toMatch(/\| condition \| scope \| dialogues \| human win rate \| vs HUMANS:human \| judged real \|/);
    expect(md).toContain('indistinguishable from HUMANS:human within ±15.0%');
    // The which-is-real question's summary is its realism: its comparisons count the one taken for real, no preference.
    const realPart = md.slice(md.indexOf('## Question 2 (real)'));
    expect(md.slice(0, md.indexOf('## Question 2 (real)'))).toContain('HUMANS:human was preferred over SCRIPT:gpt-test');
    expect(realPart).not.toContain('was preferred over');
    const html = await renderAnalysisHtml(report);
    expect(html).toContain('Which is real: detection per condition');
    expect(html).toContain('2×2 of writer and knowledge (gpt-test): cells');
    expect(html).toContain('<th scope="col">judged real</th>');
  });

  it('renderAnalysisMarkdown, for a stored report whose fits on few answers gave non-finite estimates (null in its JSON), shows them as – instead of failing', () => {
    const stored = JSON.parse(JSON.stringify(report)) as AnalysisReport;
    const realism = stored.questions?.find((q) => q.realism)?.realism ?? stored.realism;
    if (!realism || 'reason' in realism.fixed_effects) throw new Error('the fixture fits the fixed effects');
    const fe = realism.fixed_effects.pairwise[0] as { log_odds_ratio: number | null };
    fe.log_odds_ratio = null;
    const diff = realism.pairwise[0] as { error_difference: number | null; ci95: [number | null, number | null] };
    diff.error_difference = null;
    diff.ci95 = [null, null];
    const model = realism.two_by_two[0]?.natural;
    if (model && !('reason' in model)) (model.effects.knowledge as { estimate: number | null; ci95: [number | null, number | null] }) = { ...model.effects.knowledge, estimate: null, ci95: [null, null] };
    const md = renderAnalysisMarkdown(stored);
    expect(md).toContain('### Which is real: rater and scenario effects');
    expect(md).toMatch(/\| – points \| \[–, –\] \|/);
    expect(md).toMatch(/\| knowledge: omniscient − own side \| – \[–, –\]/);
  });
});
