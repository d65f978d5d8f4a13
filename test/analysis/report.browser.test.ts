// The standalone HTML report opened in real Chromium: accessible (axe, every rule) and with every plot drawn.
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeJudgments } from '../../src/analysis/analyze.js';
import { createJudgmentTableBuilder } from '../../src/analysis/judgment-table.js';
import { PLOT_NAMES } from '../../src/analysis/plots.js';
import { renderAnalysisHtml } from '../../src/analysis/report-html.js';
import { launchBrowser } from '../helpers/browser.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Two comparisons (one per model), 40 pairs x 3 raters, sides and verbosity known. */
function twoModelReport() {
  const b = createJudgmentTableBuilder();
  for (const [m, model] of ['gpt-4o-mini', 'llama-3-70b'].entries())
    for (let i = 0; i < 40; i++)
      for (const [r, rater] of ['x', 'y', 'z'].entries())
        b.add({
          item: `${model}-${i}`,
          rater,
          conditionA: `SCRIPT:${model}`,
          conditionB: `AGENTS:${model}`,
          outcome: ((i + r + m) % 5 === 0 ? 2 : (i * 7 + r) % 3 === 0 ? 0 : 1) as 0 | 1 | 2,
          left: ((i + r) % 2) as 0 | 1,
          seconds: 30 + ((i * 13 + r) % 50),
          aWords: 14 + (i % 5),
          bWords: 26 + (i % 9),
          scenario: `s${i % 8}`,
          category: ['cooperative', 'competitive', 'mixed'][i % 3] as string,
        });
  return analyzeJudgments(b.build(), { source: { kind: 'file', path: 'memory' }, bootstrap: 200, tiesAllowed: true });
}

describe('renderAnalysisHtml in Chromium', () => {
  it('for a batch of two comparisons, has no accessibility violation under every axe rule and draws every plot', async () => {
    // AxeBuilder needs a page from an explicit context.
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.setContent(await renderAnalysisHtml(twoModelReport()));
    const axe = await new AxeBuilder({ page }).analyze();
    expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
    for (const name of PLOT_NAMES) {
      const box = await page.locator(`#plot-${name} svg`).first().boundingBox();
      expect(box!.width).toBeGreaterThan(200);
      expect(box!.height).toBeGreaterThan(80);
    }
    await context.close();
  });
});
