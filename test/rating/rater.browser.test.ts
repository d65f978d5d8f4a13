import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import type { Db } from '../../src/db/connection.js';
import { launchBrowser, pngWidth, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { internalIds, leaks, padInternalIds, recordExchanges } from './leak-check.js';
import { MODEL, seedBatch, threadedApp } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** Nothing sticks out sideways: the document is no wider than the window, and a full-page screenshot neither. */
async function expectNoHorizontalOverflow(page: Page, width: number) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  expect(pngWidth(await page.screenshot({ fullPage: true }))).toBe(width);
}

async function expectAccessible(page: Page) {
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  expect(axe.violations.map((v) => `${page.url().split('?')[0]} ${v.id}: ${v.help}`)).toEqual([]);
}

async function setUp(options: { pad?: boolean } = {}) {
  const built = buildTestApp();
  if (options.pad) padInternalIds(built.db);
  const seeded = seedBatch(built.db, {
    samples: 3,
    settings: {
      perRaterCap: 2,
      allowTie: true,
      reason: 'optional',
      provider: { kind: 'link', completionCodes: { completed: 'BROWSER-OK' } },
      consent: 'You are invited to compare **short conversations**.',
    },
  });
  const server = await serve(built.app);
  return { ...built, seeded, server };
}

/** From a study link, through consent and the instructions, to the first comparison page. */
async function reachFirstComparison(page: Page, link: string) {
  await page.goto(link);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
}

/** Submits the answer on screen and waits until the browser is on another page (one `andTo` accepts, when given). */
async function submitAndLeave(page: Page, andTo: (url: URL) => boolean = () => true) {
  const before = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== before && andTo(u)), page.getByRole('button', { name: 'Submit answer' }).click()]);
}

function lastJudgment(db: Db) {
  return db.prepare('SELECT choice, active_ms, reason FROM judgments ORDER BY id DESC LIMIT 1').get() as { choice: string; active_ms: number | null; reason: string | null };
}

describe.each(Object.entries(VIEWPORTS))('rater flow in Chromium (%s)', (name, viewport) => {
  it(`the whole flow on a ${name} viewport, by keyboard, stores the answers with active time, passes axe WCAG 2.2 AA and never overflows`, async () => {
    const { db, seeded, server } = await setUp();
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    try {
      await page.goto(`${server.url}/r/${seeded.publicId}`);
      expect(await page.locator('h1').textContent()).toBe('Consent');
      expect(await page.locator('.markdown strong').textContent()).toBe('short conversations');
      await expectNoHorizontalOverflow(page, viewport.width);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'I agree, continue' }).click();
      await page.waitForURL(/\/instructions\?/);
      await expectNoHorizontalOverflow(page, viewport.width);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Start' }).click();
      await page.waitForURL(/\/c\//);

      // The comparison page: accessible, no sideways scrolling, two conversations side by side, or on a phone one at
      // a time behind the 1 | 2 switch (issue 14; comparison-page.browser.test.ts tests the layout in detail).
      await expectAccessible(page);
      await expectNoHorizontalOverflow(page, viewport.width);
      const first = await page.locator('#conversation-1-heading').boundingBox();
      if (name === 'desktop') {
        const second = await page.locator('#conversation-2-heading').boundingBox();
        expect(second?.x).toBeGreaterThan((first?.x ?? 0) + 100);
      } else {
        expect(await page.locator('#conversation-2').isVisible()).toBe(false);
        await page.getByRole('link', { name: 'Conversation 2', exact: true }).click();
        expect(await page.locator('#conversation-2-heading').isVisible()).toBe(true);
        await expectNoHorizontalOverflow(page, viewport.width);
      }

      // Keyboard shortcuts choose; the keyboard alone submits.
      await page.locator('body').click({ position: { x: 1, y: 1 } });
      await page.keyboard.press('2');
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      await page.keyboard.press('0');
      expect(await page.locator('#choice-tie').isChecked()).toBe(true);
      await page.keyboard.press('1');
      expect(await page.locator('#choice-left').isChecked()).toBe(true);
      await page.waitForTimeout(300);
      await page.locator('#reason').focus();
      await page.keyboard.type('More natural 2');
      // Typing digits in the reason must not change the choice.
      expect(await page.locator('#choice-left').isChecked()).toBe(true);
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Submit answer');
      const before = page.url();
      await Promise.all([page.waitForURL((u) => u.href !== before && u.pathname.includes('/c/')), page.keyboard.press('Enter')]);
      const stored = lastJudgment(db);
      expect(stored.choice).toBe('left');
      expect(stored.reason).toBe('More natural 2');
      expect(stored.active_ms).toBeGreaterThan(0);
      expect(await page.locator('.progress-text').textContent()).toMatch(/^Comparison 2 of 2/);

      await page.keyboard.press('2');
      await page.getByRole('button', { name: 'Submit answer' }).click();
      await page.waitForURL(/\/done\?/);
      expect(await page.locator('.completion-code strong').textContent()).toBe('BROWSER-OK');
      await expectNoHorizontalOverflow(page, viewport.width);
      await expectAccessible(page);
      expect(db.prepare('SELECT choice FROM judgments ORDER BY id').pluck().all()).toEqual(['left', 'right']);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

describe('rater flow in Chromium with the answer thread, as the server runs it', () => {
  it('a rater goes from the link to the completion code; every write of the session is made by the thread, none by the app\'s own connection', async () => {
    const { app, db, thread } = await threadedApp();
    const seeded = seedBatch(db, { samples: 3, settings: { perRaterCap: 2, provider: { kind: 'link', completionCodes: { completed: 'THREAD-OK' } } } });
    const changedHere = () => db.prepare('SELECT total_changes()').pluck().get() as number;
    const before = changedHere();
    const server = await serve(app);
    const context = await browser.newContext({ viewport: VIEWPORTS.phone });
    const page = await context.newPage();
    try {
      await reachFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      await page.locator('#choice-left').check();
      await submitAndLeave(page, (u) => u.pathname.includes('/c/'));
      expect(await page.locator('.progress-text').textContent()).toMatch(/^Comparison 2 of 2/);
      await page.locator('#choice-right').check();
      await page.getByRole('button', { name: 'Submit answer' }).click();
      await page.waitForURL(/\/done\?/);
      expect(await page.locator('.completion-code strong').textContent()).toBe('THREAD-OK');
      expect(db.prepare('SELECT choice FROM judgments ORDER BY id').pluck().all()).toEqual(['left', 'right']);
      expect(db.prepare("SELECT status FROM raters").pluck().all()).toEqual(['completed']);
      expect(thread.running()).toBe(true);
      expect(changedHere()).toBe(before);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

describe('rater flow in Chromium without JavaScript', () => {
  it('with scripts disabled, the forms alone carry a rater from entry to a stored judgment', async () => {
    const { db, seeded, server } = await setUp();
    const context = await browser.newContext({ viewport: VIEWPORTS.phone, javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await reachFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      await page.locator('#choice-right').check();
      await submitAndLeave(page);
      // No script, no page timing: the server's own shown and submitted times time the answer (issue 40), and no signals row.
      expect(db.prepare('SELECT choice, active_ms >= 0 AS timed FROM judgments').all()).toEqual([{ choice: 'right', timed: 1 }]);
      expect(db.prepare('SELECT count(*) FROM answer_signals').pluck().get()).toBe(0);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

describe('the rater pool in Chromium (issue 10)', () => {
  it('a rater whose batch is paused after an answer, with a promised comparison still to do, finishes with the partial code through a plain form; a late arrival meets the full page before consent; the pages pass axe', async () => {
    const built = buildTestApp();
    // Two pairs, both promised to the one rater: paused after the first answer, they have not done all they were
    // promised (one who has done it all finishes with the completed code: issue 44).
    const seeded = seedBatch(built.db, {
      samples: 2,
      settings: { judgmentsPerPair: 1, provider: { kind: 'link', completionCodes: { completed: 'FULL-OK', partial: 'PART-OK' } } },
    });
    const server = await serve(built.app);
    const context = await browser.newContext({ viewport: VIEWPORTS.phone });
    const page = await context.newPage();
    try {
      await reachFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      // The one place is this rater's: someone arriving now is told so before any consent form.
      const late = await context.newPage();
      await late.goto(`${server.url}/r/${seeded.publicId}`);
      expect(await late.getByRole('heading', { name: 'This study is full' }).count()).toBe(1);
      expect(await late.locator('form[method="post"]').count()).toBe(0);
      await expectAccessible(late);
      await late.close();

      transitionBatch(built.db, seeded.batchId, 'pause', 'test', new Date());
      // The answer to the comparison on screen is still taken; the rater is offered to wait or to finish now.
      await page.locator('#choice-left').check();
      await page.getByRole('button', { name: 'Submit answer' }).click();
      expect(await page.getByRole('heading', { name: 'This study is paused' }).count()).toBe(1);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'Finish now and get my code' }).click();
      await page.waitForURL(/\/done\?/);
      expect(await page.locator('.completion-code').innerText()).toContain('PART-OK');
      await expectAccessible(page);
      expect(built.db.prepare('SELECT count(*) FROM judgments').pluck().get()).toBe(1);
      expect(built.db.prepare('SELECT count(*) FROM raters').pluck().get()).toBe(1);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

describe('blinding in Chromium', () => {
  it('everything the browser receives on the whole flow (documents, script, styles, headers, URLs) is free of mode, model, run and internal ids', async () => {
    const { db, seeded, server } = await setUp({ pad: true });
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    const exchanges = recordExchanges(page);
    try {
      await reachFirstComparison(page, `${server.url}/r/${seeded.publicId}`);
      for (let i = 0; i < 2; i += 1) {
        await page.keyboard.press(i === 0 ? '1' : '0');
        await submitAndLeave(page);
      }
      await page.waitForURL(/\/done\?/);
      const all = await Promise.all(exchanges);
      expect(all.some((e) => e.url.includes('/static/js/rater.js'))).toBe(true);
      expect(leaks(all, [MODEL, seeded.runName], internalIds(db))).toEqual([]);
      expect(await context.cookies()).toEqual([]);
    } finally {
      await context.close();
      await server.close();
    }
  });
});
