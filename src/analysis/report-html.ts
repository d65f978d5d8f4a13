import type { AnalysisReport } from './analysis-report.js';
import { PLOT_NAMES, PLOT_TITLES, renderAllPlots } from './plots.js';
import { reportTables, sourceLine, summarySentences } from './report-tables.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:0.5rem 0 1.5rem;font-size:0.9rem}th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left}
th{background:#f3f3f3}figure{margin:1rem 0}figcaption{font-size:0.9rem;color:#555}.note{color:#555;font-size:0.9rem}`;

/** The report as a standalone HTML page (inline CSS and SVG, no external assets) for a paper's supplement. */
export async function renderAnalysisHtml(report: AnalysisReport): Promise<string> {
  const plots = await renderAllPlots(report);
  const parts = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>simarena analysis</title>',
    `<style>${STYLE}</style></head><body><main>`,
    '<h1>simarena analysis</h1>',
    `<p>${escapeHtml(sourceLine(report))}</p>`,
  ];
  const summary = summarySentences(report);
  if (summary.length > 0) parts.push('<h2>Summary</h2><ul>', ...summary.map((s) => `<li>${escapeHtml(s)}</li>`), '</ul>');
  for (const { title, note, table } of reportTables(report)) {
    parts.push(`<h2>${escapeHtml(title)}</h2>`);
    if (note) parts.push(`<p class="note">${escapeHtml(note)}</p>`);
    if (table.rows.length === 0) {
      parts.push('<p>(none)</p>');
      continue;
    }
    parts.push('<table><thead><tr>', ...table.headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`), '</tr></thead><tbody>');
    for (const row of table.rows) parts.push(`<tr>${row.map((v) => `<td>${escapeHtml(String(v))}</td>`).join('')}</tr>`);
    parts.push('</tbody></table>');
  }
  parts.push('<h2>Plots</h2>');
  for (const name of PLOT_NAMES)
    parts.push(
      // role="img" goes on the plot alone: on the figure it would hide the download link from assistive technology.
      `<figure id="plot-${name}"><div role="img" aria-label="${escapeHtml(PLOT_TITLES[name])}">${plots[name]}</div><figcaption>${escapeHtml(PLOT_TITLES[name])} ` +
        // The SVG is also offered as a file, inline (a data URL), so the page still needs nothing from outside.
        `<a download="simarena-${name}.svg" href="data:image/svg+xml;base64,${Buffer.from(plots[name]).toString('base64')}">download SVG</a></figcaption></figure>`,
    );
  if (report.notes.length > 0) parts.push('<h2>Notes</h2><ul>', ...report.notes.map((n) => `<li>${escapeHtml(n)}</li>`), '</ul>');
  parts.push('</main></body></html>');
  return parts.join('\n');
}
