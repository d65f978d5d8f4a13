import type { AnalysisReport } from './analysis-report.js';
import { reportTables, sourceLine, summarySentences } from './report-tables.js';

const cell = (v: string | number) => String(v).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** The report as Markdown: every table, the notes, and the exclusions. */
export function renderAnalysisMarkdown(report: AnalysisReport): string {
  const lines = ['# simarena analysis', '', sourceLine(report), ''];
  const summary = summarySentences(report);
  if (summary.length > 0) lines.push('## Summary', '', ...summary.map((s) => `- ${s}`), '');
  for (const { title, note, table } of reportTables(report)) {
    lines.push(`## ${title}`, '');
    if (note) lines.push(note, '');
    if (table.rows.length === 0) {
      lines.push('(none)', '');
      continue;
    }
    lines.push(`| ${table.headers.map(cell).join(' | ')} |`, `|${table.headers.map(() => ' --- ').join('|')}|`);
    for (const row of table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
    lines.push('');
  }
  if (report.notes.length > 0) lines.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}
