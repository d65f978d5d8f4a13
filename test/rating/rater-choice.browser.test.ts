// The comparison page in real Chromium, beyond the walk of rater.browser.test.ts: how a chosen answer looks, and the
// lease warning appearing by itself while the page stays open (review of issue 4).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { seedBatch } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function openComparison(viewport: { width: number; height: number }, leaseMinutes: number) {
  const built = buildTestApp();
  const seeded = seedBatch(built.db, { samples: 2, settings: { allowTie: true, leaseMinutes } });
  const server = await serve(built.app);
  const context = await browser.newContext({ viewport });
  await context.clock.install();
  const page = await context.newPage();
  await page.goto(`${server.url}/r/${seeded.publicId}`);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
  return { page, close: async () => (await context.close(), await server.close()) };
}

describe('comparison page in Chromium', () => {
  it('pressing 2 on a phone-sized page marks the whole "Conversation 2" row as chosen, with a thicker border, not by colour alone', async () => {
    const { page, close } = await openComparison({ width: 390, height: 844 }, 20);
    try {
      const row = (id: string) => page.locator('.choice', { has: page.locator(`#${id}`) });
      const widthOf = (id: string) => row(id).evaluate((el) => getComputedStyle(el).borderTopWidth);
      expect(await widthOf('choice-right')).toBe('1px');
      await page.keyboard.press('2');
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      expect(await widthOf('choice-right')).toBe('2px');
      expect(await widthOf('choice-left')).toBe('1px');
      // The row is a large target: it spans the question box, and a tap on its text chooses it.
      const box = await row('choice-tie').boundingBox();
      expect(box?.width).toBeGreaterThan(300);
      expect(box?.height).toBeGreaterThanOrEqual(44);
      await page.getByText('Both equally').click();
      expect(await page.locator('#choice-tie').isChecked()).toBe(true);
    } finally {
      await close();
    }
  });

  it('with the page left open until two minutes before the lease ends, the warning appears by itself, and after the end says the answer is still taken', async () => {
    const { page, close } = await openComparison({ width: 1280, height: 900 }, 5);
    try {
      const warning = page.locator('#lease-warning');
      expect(await warning.isHidden()).toBe(true);
      await page.clock.runFor(3.5 * 60_000);
      expect(await warning.isVisible()).toBe(true);
      expect(await warning.textContent()).toContain('Please submit your answer soon');
      await page.clock.runFor(2 * 60_000);
      expect(await warning.textContent()).toContain('You can still submit your answer');
    } finally {
      await close();
    }
  });
});
