// Issue 49, item 5, in Chromium: a paste of 11,200 characters into the reason box was cut to 2,000 without a word, and
// an over-long reason that came back (after Back, from the tab's storage) was refused again with a message at the top
// of a long page. The box now has its limit and a live count just under it; a paste that does not fit is stopped at
// the limit with the count saying how much was left out; an over-long reason is said to be too long beside the box
// and is not sent until it is shortened.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATER_VIEWPORTS, launchBrowser, openFirstComparison, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { seedBatch } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function openComparison(viewport: { width: number; height: number }) {
  const built = buildTestApp();
  const seeded = seedBatch(built.db, { samples: 2, settings: { reason: 'optional' } });
  const server = await serve(built.app);
  const context = await browser.newContext({ viewport });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const page = await context.newPage();
  await openFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
  return { ...built, page, close: async () => (await context.close(), await server.close()) };
}

/** The count's line sits just under the box, inside its width: beside it, not at the top of the page. */
async function expectUnderTheBox(page: Page) {
  const box = await page.locator('#reason').boundingBox();
  const line = await page.locator('#reason-limit').boundingBox();
  if (!box || !line) throw new Error('no reason box or count on the page');
  expect(line.y).toBeGreaterThanOrEqual(box.y + box.height - 1);
  expect(line.y).toBeLessThan(box.y + box.height + 24);
  expect(line.x).toBeGreaterThanOrEqual(box.x - 1);
  expect(line.x).toBeLessThan(box.x + box.width);
}

describe.each(Object.entries(RATER_VIEWPORTS))('the reason box in Chromium (%s)', (_name, viewport) => {
  it('a paste of 11,200 characters stops at 2,000, and the count beside the box (and its live region) says how much was left out', async () => {
    const { page, close } = await openComparison(viewport);
    try {
      const box = page.locator('#reason');
      await box.click();
      await page.keyboard.type('Short.');
      expect(await page.locator('#reason-count').textContent()).toBe('6 of 2,000 characters.');
      await page.keyboard.press('Control+A');
      await page.evaluate(() => navigator.clipboard.writeText('Natural. '.repeat(1244) + 'Abcd'));
      await page.keyboard.press('Control+V');
      expect((await box.inputValue()).length).toBe(2000);
      const said = '2,000 of 2,000 characters: the limit. The last 9,200 characters you pasted did not fit and were left out.';
      expect(await page.locator('#reason-count').textContent()).toBe(said);
      await page.waitForFunction((text) => document.getElementById('reason-status')?.textContent === text, said);
      expect(await box.getAttribute('aria-describedby')).toBe('reason-limit');
      await expectUnderTheBox(page);
      // Typing on stops at the limit too (the count still says so); taking a character out counts again.
      await page.keyboard.type('more');
      expect((await box.inputValue()).length).toBe(2000);
      expect(await page.locator('#reason-count').textContent()).toBe(said);
      await page.keyboard.press('Backspace');
      expect(await page.locator('#reason-count').textContent()).toBe('1,999 of 2,000 characters.');
    } finally {
      await close();
    }
  });

  it('an over-long reason that comes back after a reload is counted as too long beside the box and not sent until shortened; then it is stored', async () => {
    const { db, page, close } = await openComparison(viewport);
    try {
      // What the tab kept of an earlier visit (rater.js restores it on the way back).
      await page.evaluate(() => {
        const action = document.getElementById('judgment-form')?.getAttribute('action') ?? '';
        sessionStorage.setItem(`answer:${action}`, JSON.stringify({ choices: { choice: 'left' }, reasons: { reason: 'x'.repeat(2345) } }));
      });
      await page.reload();
      expect((await page.locator('#reason').inputValue()).length).toBe(2345);
      expect(await page.locator('#reason-count').textContent()).toBe('2,345 of 2,000 characters: 345 too many. Please shorten your reason.');
      const url = page.url();
      await page.getByRole('button', { name: 'Submit answer' }).click();
      expect(page.url()).toBe(url);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('reason');
      await expectUnderTheBox(page);
      expect(db.prepare('SELECT count(*) FROM judgments').pluck().get()).toBe(0);
      await page.locator('#reason').fill('y'.repeat(2000));
      expect(await page.locator('#reason-count').textContent()).toBe('2,000 of 2,000 characters: the limit.');
      await Promise.all([page.waitForURL((u) => u.href !== url), page.getByRole('button', { name: 'Submit answer' }).click()]);
      expect(db.prepare('SELECT choice, length(reason) AS n FROM judgments').get()).toEqual({ choice: 'left', n: 2000 });
    } finally {
      await close();
    }
  });
});

describe('the reason box in Chromium without JavaScript', () => {
  it('an over-long reason is refused with the message beside the box, the whole text kept for editing, and nothing stored', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 2, settings: { reason: 'optional' } });
    const server = await serve(built.app);
    const context = await browser.newContext({ viewport: RATER_VIEWPORTS.desktop, javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await openFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      await page.locator('label[for="choice-left"]').click();
      const long = 'z'.repeat(11_200);
      await page.locator('#reason').fill(long);
      await Promise.all([page.waitForLoadState(), page.getByRole('button', { name: 'Submit answer' }).click()]);
      const error = page.locator('#reason-error');
      expect(await error.textContent()).toBe('This reason is 11,200 characters long; the limit is 2,000. Please shorten it by 9,200 characters.');
      const box = await page.locator('#reason').boundingBox();
      const message = await error.boundingBox();
      expect(message && box && box.y - (message.y + message.height)).toBeLessThan(16);
      expect(message && box && message.y).toBeLessThan(box?.y ?? 0);
      expect(await page.locator('#reason').inputValue()).toBe(long);
      expect(built.db.prepare('SELECT count(*) FROM judgments').pluck().get()).toBe(0);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
