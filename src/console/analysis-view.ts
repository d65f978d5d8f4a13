import type { AnalysisReport } from '../analysis/analysis-report.js';
import { emptyPlotReason, PLOT_NAMES, PLOT_TITLES } from '../analysis/plots.js';
import { latexTable } from '../analysis/report-latex.js';
import { markdownTable } from '../analysis/report-md.js';
import { crossQuestionTable, questionTables, summarySentences, summaryTitle } from '../analysis/report-tables.js';

// The console's analysis page shows the whole report of the bundle's report.html: the same table builders
// (src/analysis/report-tables.ts), so the page, the Markdown and the HTML report always say the same.

/** Tables longer than this are folded into a <details>, so the page still reads top to bottom. */
const FOLD_ROWS = 15;

const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

export function analysisView(report: AnalysisReport) {
  const summary = summarySentences(report);
  return {
    // A sequential batch's page leads with its design's result (issue 51).
    sequential: report.sequential ?? null,
    summaryTitle: summaryTitle(report),
    summary,
    summaryText: summary.join('\n'),
    tables: questionTables(report, report.question?.index ?? 0).map(({ title, note, table }) => ({
      id: slug(title),
      title,
      note: note ?? null,
      headers: table.headers,
      rows: table.rows,
      folded: table.rows.length > FOLD_ROWS,
      markdown: markdownTable(table),
      // With several questions a pasted table must say which question it is about.
      latex: latexTable(report.question ? `${title} (question ${report.question.id})` : title, table),
    })),
    plots: PLOT_NAMES.map((name) => ({ name, title: PLOT_TITLES[name], empty: emptyPlotReason(report, name) })),
  };
}

/**
 * Issue 16: the batch's questions as links (`?question=ID`), the one shown, and how often the answers agree across
 * questions; no questions (and no switcher) for a one-question batch. `whole` is the stored report (or its page report,
 * which has the same questions and cross-question figures), `shown` the part on the page.
 */
export function questionSwitcher(whole: AnalysisReport, shown: AnalysisReport) {
  const current = shown.question?.id ?? whole.questions?.[0]?.id ?? null;
  const cross = crossQuestionTable(whole);
  return {
    questions: (whole.questions ?? []).map((q, index) => ({ id: q.id, text: q.text, index, current: q.id === current })),
    currentQuestion: shown.question ?? null,
    // The plots' address names the question shown, so each plot is drawn from that question's judgments.
    plotQuery: shown.question ? `?question=${encodeURIComponent(shown.question.id)}` : '',
    crossQuestion: cross ? { ...cross, markdown: markdownTable(cross.table) } : null,
  };
}
