// Does the result depend on the raters the quality signals flag (issue 43)? Each comparison's win rate and agreement
// with those raters left out, next to the full result: the same analysis run again on the judgments without them, so
// the section equals the analysis of the batch with those raters excluded.
import type { AnalysisReport, ComparisonReport, SensitivitySection } from './analysis-report.js';
import { createJudgmentTableBuilder, type JudgmentTable } from './judgment-table.js';

/** The judgments of `t` whose rater is not in `drop`, in the same order (as a batch with them excluded is read). */
export function withoutRaters(t: JudgmentTable, drop: ReadonlySet<string>): JudgmentTable {
  const builder = createJudgmentTableBuilder();
  for (let j = 0; j < t.n; j++) {
    const rater = t.raterNames[t.rater[j] as number] as string;
    if (drop.has(rater)) continue;
    const i = t.item[j] as number;
    const cmp = t.comparisons[t.itemComparison[i] as number] as { a: string; b: string };
    const scenario = t.itemScenario[i] as number;
    const category = t.itemCategory[i] as number;
    builder.add({
      item: t.itemNames[i] as string,
      rater,
      conditionA: cmp.a,
      conditionB: cmp.b,
      outcome: t.outcome[j] as 0 | 1 | 2,
      left: t.left[j] as -1 | 0 | 1,
      seconds: t.seconds[j] as number,
      confidence: t.confidence?.[j] ?? 0,
      aWords: t.itemWordsA[i] as number,
      bWords: t.itemWordsB[i] as number,
      scenario: scenario < 0 ? null : (t.scenarioNames[scenario] as string),
      category: category < 0 ? null : (t.categoryNames[category] as string),
    });
  }
  return builder.build();
}

/** What a comparison's Wilson interval says: a preferred, b preferred, or no clear winner at 95%. */
export function conclusionOf(c: Pick<ComparisonReport, 'a' | 'b' | 'ci95'> | undefined): string {
  if (!c?.ci95) return 'no win rate';
  if (c.ci95[0] > 0.5) return `${c.a} preferred`;
  if (c.ci95[1] < 0.5) return `${c.b} preferred`;
  return 'no clear winner';
}

/** The section from the full report and the report of the same judgments without the flagged raters. */
export function sensitivitySection(full: AnalysisReport, without: AnalysisReport, flagged: string[], flaggedJudgments: number): SensitivitySection {
  const comparisons = full.comparisons.map((c) => {
    const w = without.comparisons.find((x) => x.a === c.a && x.b === c.b);
    return {
      a: c.a,
      b: c.b,
      n: c.n,
      win_rate_a: c.win_rate_a,
      ci95: c.ci95,
      krippendorff_alpha: c.agreement.krippendorff_alpha,
      without: { n: w?.n ?? 0, win_rate_a: w?.win_rate_a ?? null, ci95: w?.ci95 ?? null, krippendorff_alpha: w?.agreement.krippendorff_alpha ?? null },
      conclusion: conclusionOf(c),
      conclusion_without: conclusionOf(w),
    };
  });
  const changed = comparisons.filter((c) => c.conclusion !== c.conclusion_without);
  const who = `Leaving out the ${flagged.length} rater(s) flagged by the quality signals (${flaggedJudgments} judgments)`;
  const sentence =
    flagged.length === 0
      ? 'No rater is flagged by the quality signals: the result does not depend on flagged raters.'
      : changed.length === 0
        ? `${who} does not change the conclusion of any comparison (Wilson 95% interval against 50%).`
        : `${who} changes the conclusion of ${changed.map((c) => `${c.a} vs ${c.b} (${c.conclusion} → ${c.conclusion_without})`).join('; ')}: report it.`;
  return { flagged_raters: flagged, flagged_judgments: flaggedJudgments, comparisons, sentence };
}
