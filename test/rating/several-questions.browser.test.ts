// Issue 16, point 1: a two-question batch walked in Chromium: on a phone by touch, on a desktop by keyboard, and the
// blinding check over everything the browser receives.
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, pngWidth, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { internalIds, leaks, padInternalIds, recordExchanges } from './leak-check.js';
import { MODEL, seedBatch, TWO_QUESTIONS } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 900 } };

async function setUp(options: { pad?: boolean; questions?: typeof TWO_QUESTIONS } = {}) {
  const built = buildTestApp();
  if (options.pad) padInternalIds(built.db);
  const seeded = seedBatch(built.db, {
    samples: 3,
    settings: { questions: options.questions ?? TWO_QUESTIONS, perRaterCap: 2, provider: { kind: 'link', completionCodes: { completed: 'TWO-Q-OK' } } },
  });
  const server = await serve(built.app);
  return { ...built, seeded, server };
}

async function startRating(page: Page, url: string) {
  await page.goto(url);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.waitForURL(/\/instructions\?/);
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
}

async function expectAccessible(page: Page) {
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  expect(axe.violations.map((v) => `${page.url().split('?')[0]} ${v.id}: ${v.help}`)).toEqual([]);
}

const rowsOf = (db: ReturnType<typeof buildTestApp>['db']) =>
  db.prepare('SELECT assignment_id, question_id, question_index, choice FROM judgments ORDER BY assignment_id, question_index').all() as {
    assignment_id: number;
    question_id: string;
    question_index: number;
    choice: string;
  }[];

describe('several questions in Chromium', () => {
  it('on a phone (390×844, touch), both questions are shown stacked and answered by tap with one submit; leaving the second out is refused, with the error linking to it and the first answer kept', async () => {
    const { db, seeded, server } = await setUp();
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    try {
      await startRating(page, `${server.url}/r/${seeded.publicId}`);
      const q1 = page.getByRole('group', { name: /Question 1 of 2: Which conversation sounds more natural\?/ });
      const q2 = page.getByRole('group', { name: /Question 2 of 2: Which conversation better pursues its goals\?/ });
      await q1.scrollIntoViewIfNeeded();
      expect(await q1.isVisible()).toBe(true);
      await q2.scrollIntoViewIfNeeded();
      expect(await q2.isVisible()).toBe(true);
      // Stacked: question 2 below question 1, each as wide as the screen allows; nothing sticks out sideways.
      const [box1, box2] = [await q1.boundingBox(), await q2.boundingBox()];
      expect(box2?.y ?? 0).toBeGreaterThan((box1?.y ?? 0) + (box1?.height ?? 0) - 1);
      expect(Math.abs((box1?.x ?? 0) - (box2?.x ?? 1))).toBeLessThan(2);
      expect(pngWidth(await page.screenshot({ fullPage: true }))).toBe(390);
      expect(await page.getByRole('button', { name: /^Submit/ }).count()).toBe(1);
      await expectAccessible(page);

      await page.locator('label[for="choice-right"]').tap();
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      // The browser itself refuses the form while question 2 is unanswered.
      const url = page.url();
      await page.getByRole('button', { name: 'Submit answers' }).tap();
      expect(page.url()).toBe(url);
      expect(await page.locator('#choice-2-left').evaluate((el) => (el as HTMLInputElement).validity.valueMissing)).toBe(true);
      expect(rowsOf(db)).toEqual([]);
      // A browser that does not check forms sends it anyway: the server names question 2 and keeps question 1's answer.
      await Promise.all([page.waitForLoadState('load'), page.locator('#judgment-form').evaluate((form) => (form as HTMLFormElement).submit())]);
      await page.locator('#form-error').waitFor();
      expect(await page.locator('#form-error').innerText()).toBe('Please answer question 2.');
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      await page.getByRole('link', { name: 'Please answer question 2.' }).tap();
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('question-2');
      await expectAccessible(page);
      expect(rowsOf(db)).toEqual([]);

      await page.locator('label[for="choice-2-tie"]').tap();
      const refusedAt = page.url();
      await Promise.all([page.waitForURL((u) => u.href !== refusedAt && u.pathname.includes('/c/')), page.getByRole('button', { name: 'Submit answers' }).tap()]);
      const rows = rowsOf(db);
      expect(rows.map((r) => [r.question_id, r.question_index, r.choice])).toEqual([
        ['natural', 0, 'right'],
        ['goals', 1, 'tie'],
      ]);
      expect(await page.locator('.progress-text').textContent()).toMatch(/^Comparison 2 of 2/);
    } finally {
      await context.close();
      await server.close();
    }
  });

  it('on a desktop, the keys 1, 2 and 0 answer the question at hand and move on to the next; focusing a question again lets the keys change its answer', async () => {
    const { db, seeded, server } = await setUp();
    const context = await browser.newContext(DESKTOP);
    const page = await context.newPage();
    try {
      await startRating(page, `${server.url}/r/${seeded.publicId}`);
      expect(await page.locator('#key-help').isVisible()).toBe(true);
      await page.locator('body').click({ position: { x: 1, y: 1 } });
      await page.keyboard.press('2');
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.closest('fieldset')?.id)).toBe('question-2');
      await page.keyboard.press('0');
      expect(await page.locator('#choice-2-tie').isChecked()).toBe(true);
      // Question 1 offers no tie: 0 there changes nothing.
      await page.locator('#question-1 legend').click();
      await page.keyboard.press('0');
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      await page.locator('#question-1 legend').click();
      await page.keyboard.press('1');
      expect(await page.locator('#choice-left').isChecked()).toBe(true);
      expect(await page.locator('#choice-2-tie').isChecked()).toBe(true);
      const before = page.url();
      await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: 'Submit answers' }).click()]);
      expect(rowsOf(db).map((r) => r.choice)).toEqual(['left', 'tie']);
    } finally {
      await context.close();
      await server.close();
    }
  });

  it('everything the browser receives walking a two-question batch (documents, script, styles, headers, URLs) is free of mode, model, run, question ids and internal ids', async () => {
    // Question ids a page must never carry (they are the researcher's words, in the analysis and exports only).
    const ids = ['qid-natural-7', 'qid-pursuit-9'];
    const questions = TWO_QUESTIONS.map((q, i) => ({ ...q, id: ids[i] ?? 'qid-extra' }));
    const { db, seeded, server } = await setUp({ pad: true, questions });
    const context = await browser.newContext(DESKTOP);
    const page = await context.newPage();
    const exchanges = recordExchanges(page);
    try {
      await startRating(page, `${server.url}/r/${seeded.publicId}`);
      for (let i = 0; i < 2; i += 1) {
        await page.locator('body').click({ position: { x: 1, y: 1 } });
        await page.keyboard.press('1');
        await page.keyboard.press('2');
        const before = page.url();
        await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: 'Submit answers' }).click()]);
      }
      await page.waitForURL(/\/done\?/);
      expect(await page.locator('.completion-code strong').textContent()).toBe('TWO-Q-OK');
      const all = await Promise.all(exchanges);
      expect(rowsOf(db).filter((r) => r.question_id.startsWith('qid-'))).toHaveLength(4);
      // The page names its fields by position, so the ids never reach the browser.
      expect(leaks(all, [MODEL, seeded.runName, ...ids], internalIds(db))).toEqual([]);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
