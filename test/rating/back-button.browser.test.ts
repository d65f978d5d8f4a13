// Issue 49, item 4, in Chromium with the real back button (page.goBack()): after answering, Back showed the next
// comparison under the old page's place in the history, and a "changed my mind" answer there was stored as the answer
// to that next comparison. Back now shows the comparison just answered, whose answer may be changed; two steps back
// (an answer that can no longer change) shows the current comparison and says so.
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { RATER_VIEWPORTS, launchBrowser, openFirstComparison, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { assignmentOf, checkInvariants, seedBatch } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** Clicks the button and waits until the browser is on another page. */
async function submitAndLeave(page: Page, button: string) {
  const before = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: button }).click()]);
}

const choiceOf = (db: Db, url: string) => db.prepare('SELECT choice FROM judgments WHERE assignment_id = ? AND question_index = 0').pluck().get(assignmentOf(db, url)?.id);
const pathOf = (url: string) => new URL(url).pathname;

describe.each(Object.entries(RATER_VIEWPORTS))('the back button in Chromium (%s)', (_name, viewport) => {
  it('Back after an answer shows that comparison with its answer; choosing again changes that answer, never the next comparison\'s', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 3, settings: { perRaterCap: 3, reason: 'optional' } });
    const server = await serve(built.app);
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    try {
      await openFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      const first = page.url();
      await page.locator('label[for="choice-left"]').click();
      await submitAndLeave(page, 'Submit answer');
      const second = page.url();
      expect(await page.locator('#progress-label').textContent()).toBe('Comparison 2 of 3');

      await page.goBack();
      expect(pathOf(page.url())).toBe(pathOf(first));
      expect(await page.locator('#progress-label').textContent()).toBe('Comparison 1 of 3');
      expect(await page.locator('#revise-notice').isVisible()).toBe(true);
      expect(await page.locator('#choice-left').isChecked()).toBe(true);
      const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
      expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
      await page.locator('label[for="choice-right"]').click();
      await page.getByLabel('Why? (optional)').fill('changed my mind');
      await submitAndLeave(page, 'Change my answer');
      expect(pathOf(page.url())).toBe(pathOf(second));
      expect(await page.locator('.notice[role="status"]').first().textContent()).toBe('Your changed answer to the previous comparison is recorded.');
      expect(choiceOf(built.db, first)).toBe('right');
      expect(built.db.prepare('SELECT reason FROM judgments WHERE assignment_id = ?').pluck().get(assignmentOf(built.db, first)?.id)).toBe('changed my mind');
      expect(choiceOf(built.db, second)).toBeUndefined();

      // Comparison 2 answered; two steps back is comparison 1 again, whose answer is no longer the last one.
      await page.locator('label[for="choice-left"]').click();
      await submitAndLeave(page, 'Submit answer');
      const third = page.url();
      await page.goBack();
      expect(pathOf(page.url())).toBe(pathOf(second));
      expect(await page.locator('#revise-notice').isVisible()).toBe(true);
      await page.goBack();
      expect(pathOf(page.url())).toBe(pathOf(third));
      expect(await page.locator('#progress-label').textContent()).toBe('Comparison 3 of 3');
      expect(await page.locator('.notice[role="status"]').first().textContent()).toBe(
        'You went back to a comparison you had already answered. Its answer is recorded and can no longer be changed. This is your next comparison.',
      );
      await page.locator('label[for="choice-right"]').click();
      await submitAndLeave(page, 'Submit answer');
      expect(page.url()).toMatch(/\/done\?/);

      expect([choiceOf(built.db, first), choiceOf(built.db, second), choiceOf(built.db, third)]).toEqual(['right', 'left', 'right']);
      expect(built.db.prepare('SELECT count(*) FROM judgment_revisions').pluck().get()).toBe(1);
      checkInvariants(built.db, seeded.batchId, 3);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
