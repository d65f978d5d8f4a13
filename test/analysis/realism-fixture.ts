// The realism batch made for the tests by scripts/realism-reference.py, with what statsmodels gives on it
// (test/fixtures/realism/realism-batch.json), and its answers as a judgment table.
import { readFileSync } from 'node:fs';
import { createJudgmentTableBuilder, type JudgmentTable } from '../../src/analysis/judgment-table.js';

export type RealismRow = { scenario: string; rater: string; comparison: number; synthetic: string; left: 'a' | 'b'; correct: number; confidence: number; natural_synthetic: number };
type Effect = { estimate: number; se: number; ci95: [number, number]; p: number };
export type RealismFixture = {
  source: string;
  design: { real: string; comparisons: [string, string][]; margin: number; alpha: number; judgments_per_pair: number };
  rows: RealismRow[];
  detection: Record<string, { n: number; accuracy: number; se: number; ci95: [number, number]; error_rate: number; tost: { p_lower: number; p_upper: number; p: number; ci90: [number, number]; equivalent: boolean } }>;
  pairwise: { a: string; b: string; difference: number; se: number; p: number; p_holm: number }[];
  fixed_effects_logit: { rows: number; raters: number; scenarios: number; parameters: number; dropped_rows: number; pairwise: { a: string; b: string; log_odds_ratio: number; se: number; p: number; p_holm: number }[] };
  calibration: { n: number; slope: number; slope_se: number; levels: { confidence: number; n: number; correct: number }[] };
  two_by_two: Record<'natural' | 'detection_error', { effects: Record<'writer' | 'knowledge' | 'interaction', Effect> }>;
};

export const REALISM_FIXTURE = JSON.parse(readFileSync(new URL('../fixtures/realism/realism-batch.json', import.meta.url), 'utf8')) as RealismFixture;

/** One question's judgment table from the fixture's rows: `chose` says which side (0 = a, 1 = b) the rater chose. */
export function fixtureTable(f: RealismFixture, chose: (r: RealismRow, realSide: 0 | 1) => 0 | 1): JudgmentTable {
  const builder = createJudgmentTableBuilder();
  for (const r of f.rows) {
    const [a, b] = f.design.comparisons[r.comparison] as [string, string];
    const realSide = a === f.design.real ? 0 : 1;
    const problem = builder.add({
      item: `${r.scenario}|${r.comparison}`,
      rater: r.rater,
      conditionA: a,
      conditionB: b,
      outcome: chose(r, realSide),
      left: r.left === 'a' ? 0 : 1,
      seconds: 10,
      confidence: r.confidence,
      aWords: 10,
      bWords: 10,
      scenario: r.scenario,
      category: 'cooperative',
    });
    if (problem) throw new Error(problem);
  }
  return builder.build();
}

