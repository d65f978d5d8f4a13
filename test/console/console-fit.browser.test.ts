// Issue 49, item 8: the console at 1280 px and on a touch screen, checked by measuring element boxes. The raters
// table ran off the right edge (its Include/Exclude column cut), "Sign out" wrapped onto a second header line, and
// the key hints of the rater's page must stay off a touch screen that sends no mobile user agent.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';
import { RATER_VIEWPORTS, launchBrowser, serve, signedInPage } from '../helpers/browser.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { seedBatch } from '../rating/rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const DESKTOP = RATER_VIEWPORTS.desktop;

/** How far the page's first table runs past its box (0 when it fits) and past the window. */
const tableOverflow = (page: Page) =>
  page.evaluate(() => {
    const wrap = document.querySelector('.table-wrap') as HTMLElement;
    const table = wrap.querySelector('table') as HTMLElement;
    return { inBox: wrap.scrollWidth - wrap.clientWidth, pastWindow: Math.max(0, table.getBoundingClientRect().right - window.innerWidth) };
  });

describe('the console at 1280 px in Chromium', () => {
  it('GET /console/batches/:id/raters, with quality figures, fits the raters table (its Exclude control in view, opened too) and keeps "Sign out" on the header\'s one line', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a', 'a'], ['b', 'a', 'a', 'b'], ['a', 'a', 'b', 'a'], ['a', 'b', 'b', 'a']] });
    // Prolific-length participant ids (24 characters), the widest thing a rater's identity holds.
    t.db.prepare("UPDATE raters SET participant_id = printf('5f8d0d55b54764421b71%04d', id), status = 'completed' WHERE batch_id = ?").run(batch.batchId);
    t.db.prepare('UPDATE judgments SET active_ms = 1000 WHERE rater_id = ?').run(batch.raterIds[0]);
    await awaitBatchAnalysis(t.db, batch.batchId, { now: () => new Date(), fresh: true });
    const admin = await makeUser(t.db, 'admin', 'ada.lovelace-research-lab@university.example.ac.uk');
    const server = await serve(t.app);
    try {
      const page = await signedInPage(browser, server.url, admin.email, PASSWORD);
      await page.goto(`${server.url}/console/batches/${batch.batchId}/raters`);
      expect(await page.locator('[data-testid="quality-state"]').count()).toBe(0);
      expect(await page.locator('.flag', { hasText: 'too fast' }).count()).toBe(1);
      expect(await tableOverflow(page)).toEqual({ inBox: 0, pastWindow: 0 });

      const exclude = page.locator('summary', { hasText: 'Exclude…' }).first();
      const closed = await exclude.boundingBox();
      expect(closed && closed.x + closed.width).toBeLessThanOrEqual(DESKTOP.width);
      await exclude.click();
      const button = await page.getByRole('button', { name: 'Exclude', exact: true }).first().boundingBox();
      expect(button && button.x >= 0 && button.x + button.width <= DESKTOP.width).toBe(true);
      expect(await tableOverflow(page)).toEqual({ inBox: 0, pastWindow: 0 });

      // The header is one line: "Sign out" level with the first link, the long address shortened beside it.
      const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
      const batches = await page.locator('.console-nav').getByRole('link', { name: 'Batches', exact: true }).boundingBox();
      if (!signOut || !batches) throw new Error('no header');
      expect(Math.abs(signOut.y + signOut.height / 2 - (batches.y + batches.height / 2))).toBeLessThan(4);
      expect(signOut.x + signOut.width).toBeLessThanOrEqual(DESKTOP.width);
      expect(await page.locator('.nav-user').getAttribute('title')).toBe(`${admin.email} (admin)`);
    } finally {
      await server.close();
    }
  });
});

describe('the rater page on a touch screen in Chromium', () => {
  it('with touch and no mobile user agent (hasTouch, 1280 px), shows no key hints (their boxes have no size), which a mouse and keyboard screen shows', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 2, settings: { allowTie: true } });
    const server = await serve(built.app);
    try {
      const hints = async (options: { hasTouch: boolean }) => {
        const context = await browser.newContext({ viewport: DESKTOP, ...options });
        const page = await context.newPage();
        expect(await page.evaluate(() => navigator.userAgent)).not.toMatch(/Mobile|Android|iPhone/);
        await page.goto(`${server.url}/r/${seeded.publicId}`);
        await page.getByRole('button', { name: 'I agree, continue' }).click();
        const help = await page.locator('.key-help').boundingBox();
        await page.getByRole('button', { name: 'Start' }).click();
        await page.waitForURL(/\/c\//);
        const boxes = await page.locator('.key-hint').evaluateAll((all) => all.map((el) => el.getBoundingClientRect().width));
        await context.close();
        return { help: help?.width ?? 0, boxes };
      };
      const touch = await hints({ hasTouch: true });
      expect(touch).toEqual({ help: 0, boxes: [0, 0, 0] });
      const mouse = await hints({ hasTouch: false });
      expect(mouse.help).toBeGreaterThan(100);
      expect(mouse.boxes.every((w) => w > 20)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
