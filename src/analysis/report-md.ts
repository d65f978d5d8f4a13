import type { AnalysisReport } from './analysis-report.js';
import type { Table } from './report-format.js';
import { questionHeading, questionSections } from './question-reports.js';
import { crossQuestionTable, exclusionsTable, noJudgmentsHeadline, questionTables, type reportTables, sourceLine, summarySentences, summaryTitle } from './report-tables.js';

const cell = (v: string | number) => String(v).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** One table as a GitHub-flavoured Markdown table (the console's "copy as Markdown" gives the same text). */
export function markdownTable(table: Table): string {
  return [`| ${table.headers.map(cell).join(' | ')} |`, `|${table.headers.map(() => ' --- ').join('|')}|`, ...table.rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}

/** The report as Markdown: every table, the notes, and the exclusions; one section per question when there are several. */
export function renderAnalysisMarkdown(report: AnalysisReport): string {
  const lines = ['# simarena analysis', '', sourceLine(report), ''];
  const empty = noJudgmentsHeadline(report);
  if (empty) return [...lines, `**${empty}**`, '', ...exclusionLines(report)].join('\n');
  const sections = questionSections(report);
  if (sections.length === 0) {
    // One question picked out of several (`--question`): say which.
    if (report.question) lines.push(`**${questionHeading(report.question)}**`, '');
    lines.push(...bodyLines(report, '##', questionTables(report, report.question?.index ?? 0)));
    return lines.join('\n');
  }
  lines.push('## Questions', '', ...sections.map((q) => `${q.index + 1}. ${q.id}: ${q.text}`), '');
  const cross = crossQuestionTable(report);
  if (cross) lines.push(`## ${cross.title}`, '', cross.note, '', markdownTable(cross.table), '');
  for (const q of sections) {
    lines.push(`## ${questionHeading(q)}`, '', sourceLine(q.report), '');
    lines.push(...bodyLines(q.report, '###', questionTables(q.report, q.index)));
  }
  return lines.join('\n');
}

/** The exclusions table alone: what a report without judgments still has to say. */
function exclusionLines(report: AnalysisReport): string[] {
  const { title, table } = exclusionsTable(report);
  return table.rows.length > 0 ? [`## ${title}`, '', markdownTable(table), ''] : [];
}

function bodyLines(report: AnalysisReport, h: string, tables: ReturnType<typeof reportTables>): string[] {
  const lines: string[] = [];
  // A sequential batch leads with its design's result (issue 51); the summary below ignores the design.
  if (report.sequential) lines.push(`${h} Sequential result`, '', ...report.sequential.lines.map((l) => `- ${l}`), '', report.sequential.methods, '');
  const summary = summarySentences(report);
  if (summary.length > 0) lines.push(`${h} ${summaryTitle(report)}`, '', ...summary.map((s) => `- ${s}`), '');
  for (const { title, note, table } of tables) {
    lines.push(`${h} ${title}`, '');
    if (note) lines.push(note, '');
    if (table.rows.length === 0) {
      lines.push('(none)', '');
      continue;
    }
    lines.push(markdownTable(table), '');
  }
  if (report.notes.length > 0) lines.push(`${h} Notes`, '', ...report.notes.map((n) => `- ${n}`), '');
  return lines;
}
