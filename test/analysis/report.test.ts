// Reports and plots rendered from a real analysis: Markdown tables, the standalone HTML page, SVG plots by name.
import { describe, expect, it } from 'vitest';
import { analyzeJudgments } from '../../src/analysis/analyze.js';
import { createJudgmentTableBuilder } from '../../src/analysis/judgment-table.js';
import { isPlotName, PLOT_NAMES, renderPlot } from '../../src/analysis/plots.js';
import { renderAnalysisHtml } from '../../src/analysis/report-html.js';
import { renderAnalysisMarkdown } from '../../src/analysis/report-md.js';

function sampleReport(conditionA = 'SCRIPT:gpt-4o-mini') {
  const b = createJudgmentTableBuilder();
  for (let i = 0; i < 30; i++)
    for (const [r, rater] of ['x', 'y', 'z'].entries())
      b.add({
        item: `p${i}`,
        rater,
        conditionA,
        conditionB: 'AGENTS:gpt-4o-mini',
        outcome: ((i + r) % 4 === 0 ? 0 : (i + r) % 7 === 0 ? 2 : 1) as 0 | 1 | 2,
        left: ((i + r) % 2) as 0 | 1,
        seconds: 15 + r,
        aWords: 16,
        bWords: 28 + (i % 5),
        scenario: `s${i % 5}`,
        category: i % 2 ? 'cooperative' : 'competitive',
      });
  return analyzeJudgments(b.build(), { source: { kind: 'file', path: 'memory' }, bootstrap: 100, tiesAllowed: true });
}

describe('renderPlot', () => {
  for (const name of PLOT_NAMES) {
    it(`'${name}', for a report with judgments, returns an SVG document`, async () => {
      const svg = await renderPlot(sampleReport(), name);
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).toContain('</svg>');
    });
  }
  it('for a condition named with markup, escapes it in the SVG text', async () => {
    const svg = await renderPlot(sampleReport('SCRIPT:<img src=x onerror=alert(1)>'), 'forest');
    expect(svg).not.toContain('<img');
    expect(svg).toContain('&lt;img');
  });
  it('isPlotName, for known and unknown names, says which are plots', () => {
    expect(isPlotName('forest')).toBe(true);
    expect(isPlotName('pie')).toBe(false);
  });
});

describe('renderAnalysisMarkdown and renderAnalysisHtml', () => {
  it('for a report, write every section with the win rate as a percentage', async () => {
    const report = sampleReport();
    const md = renderAnalysisMarkdown(report);
    for (const heading of ['Win rates', 'By scenario category', 'Agreement', 'Position bias', 'Length control', 'Sample size', 'Raters', 'Exclusions'])
      expect(md).toContain(`## ${heading}`);
    expect(md).toContain(`${(report.comparisons[0]!.win_rate_a! * 100).toFixed(1)}%`);
    const html = await renderAnalysisHtml(report);
    expect(html).toContain('<h2>Agreement</h2>');
    expect(html.match(/<figure/g)).toHaveLength(PLOT_NAMES.length);
    const link = /<a download="simarena-forest.svg" href="data:image\/svg\+xml;base64,([^"]+)">/.exec(html);
    expect(Buffer.from(link![1]!, 'base64').toString('utf8')).toBe(await renderPlot(report, 'forest'));
  });
  it('for a condition named with markup, escape it in the HTML', async () => {
    const html = await renderAnalysisHtml(sampleReport('SCRIPT:<script>alert(1)</script>'));
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('SCRIPT:&lt;script&gt;');
  });
});
