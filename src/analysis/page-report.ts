import type { Agreement, AnalysisReport, RaterQuality } from './analysis-report.js';

// What the console's pages read of a stored report, cut out of it by the analysis worker and stored beside it
// (migration 028), so that no page parses the whole report on the request thread: at a million judgments the report
// is 10–14 MB of JSON, 99.8% of it the per-rater array, and its parse held the request thread 54–400 ms (issue 12).
//
// The analysis page reads of `raters` only the Raters table (the first RATERS_TABLE_ROWS raters by judgments, and how
// many there are) and whether the rater-quality plot has anything to draw; the page report keeps exactly what these
// need. The raters and participants pages read each rater's figures by pseudonym: those go into rows of their own
// (`raterFiguresOf`), read a page at a time.

/** The rows of the analysis page's Raters table (src/analysis/report-tables.ts): the raters with the most judgments. */
export const RATERS_TABLE_ROWS = 200;

/** How many raters a report has: `raters_total` in a page report (whose `raters` is cut), else its `raters`' length. */
export const raterCount = (report: AnalysisReport): number => report.raters_total ?? report.raters.length;

/**
 * The raters a page report keeps, in the report's order: the Raters table's (the first RATERS_TABLE_ROWS by judgments,
 * the table's stable sort, so that the kept raters sort to the same first rows), and the first rater with an agreement
 * and the first with an agreement and a time, which decide whether the rater-quality plot has something to draw
 * (src/analysis/plots.ts, emptyPlotReason). Every rater when there are no more than the table shows.
 */
function ratersShown(raters: readonly RaterQuality[]): RaterQuality[] {
  if (raters.length <= RATERS_TABLE_ROWS) return [...raters];
  const kept = new Set(
    raters
      .map((r, index) => ({ judgments: r.judgments, index }))
      .sort((x, y) => y.judgments - x.judgments || x.index - y.index)
      .slice(0, RATERS_TABLE_ROWS)
      .map((r) => r.index),
  );
  const agreeing = raters.findIndex((r) => r.loo_agreement !== null);
  const timed = raters.findIndex((r) => r.loo_agreement !== null && r.median_seconds !== null);
  if (agreeing >= 0) kept.add(agreeing);
  if (timed >= 0) kept.add(timed);
  return raters.filter((_, index) => kept.has(index));
}

/** An agreement without its list of rater pairs' Cohen kappas (the page shows their mean). */
const withoutCohenPairs = (agreement: Agreement): Agreement => ({ ...agreement, cohen_pairs: null });

function cutForPage<R extends AnalysisReport>(report: R): R {
  return {
    ...report,
    agreement: withoutCohenPairs(report.agreement),
    comparisons: report.comparisons.map((c) => ({ ...c, agreement: withoutCohenPairs(c.agreement) })),
    raters: ratersShown(report.raters),
    raters_total: raterCount(report),
  };
}

/**
 * The report as the console's analysis page reads it: every field as it is, but in each question's report `raters`
 * cut to those the page shows (with `raters_total` saying how many there are) and no agreement's `cohen_pairs` (the
 * kappa of every two raters who share pairs, which no page shows: the page shows their mean; it is most of the report
 * for a batch of some thousand raters, and null above the size limit). The analysis page renders the same from it as
 * from the whole report; nothing else (API, exports, bundles) is ever given one.
 */
export function pageReportOf(report: AnalysisReport): AnalysisReport {
  const page = cutForPage(report);
  if (report.questions) page.questions = report.questions.map((q) => cutForPage(q));
  return page;
}

/** One rater's figures as the raters and participants pages show them (src/recruiting/rater-quality-lookup.ts). */
export type RaterFiguresRow = {
  judge: string;
  judgments: number;
  median_seconds: number | null;
  majority_agreement: number | null;
  left_rate: number | null;
  /** Decisive choices with a known side ("one side" counts them: issue 51); null or absent in rows stored before migration 054. */
  decisive?: number | null;
};

/**
 * The per-rater figures the raters and participants pages show, by `judge` pseudonym: the report's top-level raters
 * (its first question's: rater quality is judged on the first question, where attention checks are answered).
 */
export function raterFiguresOf(report: AnalysisReport): RaterFiguresRow[] {
  return report.raters.map((r) => ({
    judge: r.rater,
    judgments: r.judgments,
    median_seconds: r.median_seconds,
    majority_agreement: r.loo_agreement,
    left_rate: r.left_rate,
    decisive: r.decisive ?? null,
  }));
}
