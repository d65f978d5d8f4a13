// Issue 49 item 6 in real Chromium, as the pilot went: six colleagues on one machine's address (the test
// server's 127.0.0.1) open the study link in their own browser windows before anyone consents. Five see the consent
// form; the sixth is told before consenting that the connection is full, and the five who agree all go on.
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

describe('a pilot behind one address, in Chromium', () => {
  it('GET /r/:batch in six windows from one address, before anyone consents, shows five the consent form and tells the sixth at once; the five agree and reach the instructions', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 12, settings: { perRaterCap: 2, judgmentsPerPair: 10 } });
    const server = await serve(built.app);
    const contexts = await Promise.all(Array.from({ length: 6 }, () => browser.newContext({ viewport: { width: 1280, height: 900 } })));
    try {
      const pages = [];
      for (const context of contexts) {
        const page = await context.newPage();
        await page.goto(`${server.url}/r/${seeded.publicId}`);
        pages.push(page);
      }
      const sixth = pages[5];
      if (!sixth) throw new Error('no sixth window');
      expect(await sixth.getByRole('heading', { level: 1 }).textContent()).toBe('Please try again later');
      expect(await sixth.locator('main').innerText()).toContain('it takes at most 5 at once from one connection');
      expect(await sixth.getByRole('button', { name: 'I agree, continue' }).count()).toBe(0);
      for (const page of pages.slice(0, 5)) {
        await page.getByRole('button', { name: 'I agree, continue' }).click();
        await page.waitForURL(/\/instructions/);
      }
      expect(built.db.prepare("SELECT count(*) FROM raters WHERE status = 'instructions'").pluck().get()).toBe(5);
      expect(built.db.prepare('SELECT count(*) FROM raters').pluck().get()).toBe(5);
    } finally {
      for (const context of contexts) await context.close();
      await server.close();
    }
  });
});
