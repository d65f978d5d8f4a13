import { fileURLToPath } from 'node:url';
import ejs from 'ejs';
import type { AnalysisReport } from './analysis-report.js';
import { PLOT_NAMES, PLOT_TITLES, renderAllPlots } from './plots.js';
import { questionHeading, questionSections } from './question-reports.js';
import { crossQuestionTable, exclusionsTable, noJudgmentsHeadline, questionTables, type reportTables, sourceLine, summarySentences, summaryTitle } from './report-tables.js';

const TEMPLATE = fileURLToPath(new URL('../../views/report/analysis.ejs', import.meta.url));

/** One part of the page: the whole report, or one question's report under its heading (issue 16). */
async function section(report: AnalysisReport, tables: ReturnType<typeof reportTables>, question: { id: string; heading: string } | null) {
  const svgs = await renderAllPlots(report);
  const plots = PLOT_NAMES.map((name) => ({
    name,
    // Plot ids stay unique on a page with several questions.
    id: question ? `${question.id}-${name}` : name,
    title: PLOT_TITLES[name],
    svg: svgs[name],
    dataUrl: `data:image/svg+xml;base64,${Buffer.from(svgs[name]).toString('base64')}`,
  }));
  return {
    question,
    source: question ? sourceLine(report) : null,
    h: question ? 'h3' : 'h2',
    sequential: report.sequential ?? null,
    summaryTitle: summaryTitle(report),
    summary: summarySentences(report),
    tables,
    plots,
    notes: report.notes,
  };
}

/** The report as a standalone HTML page (views/report/analysis.ejs: inline CSS and SVG, no external assets); one section per question when there are several. */
export async function renderAnalysisHtml(report: AnalysisReport): Promise<string> {
  const empty = noJudgmentsHeadline(report);
  if (empty) {
    // Only what a report without judgments still says: who was left out, and the notes.
    const left = [exclusionsTable(report)].filter((t) => t.table.rows.length > 0);
    const sections = [{ question: null, source: null, h: 'h2', summary: [], tables: left, plots: [], notes: report.notes }];
    return ejs.renderFile(TEMPLATE, { source: sourceLine(report), empty, shownQuestion: null, questions: [], cross: null, sections });
  }
  const questions = questionSections(report);
  const sections =
    questions.length === 0
      ? [await section(report, questionTables(report, report.question?.index ?? 0), null)]
      : await Promise.all(questions.map((q) => section(q.report, questionTables(q.report, q.index), { id: q.id, heading: questionHeading(q) })));
  return ejs.renderFile(TEMPLATE, {
    source: sourceLine(report),
    empty: null,
    // One question picked out of several (`--question`): its heading under the source line.
    shownQuestion: questions.length === 0 && report.question ? questionHeading(report.question) : null,
    questions: questions.map((q) => ({ id: q.id, text: q.text })),
    cross: crossQuestionTable(report),
    sections,
  });
}
