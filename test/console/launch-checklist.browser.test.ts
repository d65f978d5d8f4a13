// In Chromium: the launch checklist on the batch page (a failing item named, its link to the field, Open after the
// fix) and the time a rater is promised at consent once ten raters have completed (issue 14 points 2 and 3).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatch } from '../../src/batches/create-batch.js';
import { launchBrowser, serve } from '../helpers/browser.js';
import { makeDialogue, makeJudgment, makeRater, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';
import { seedBatch } from '../rating/rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
});

async function signInAs(page: Page, url: string, email: string): Promise<void> {
  await page.goto(`${url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL(`${url}/console`), page.getByRole('button', { name: 'Sign in' }).click()]);
}

describe('launch checklist and consent time in Chromium', () => {
  it('the batch page, for a draft without consent, names the failing item with a link to its field; after the fix Open opens the batch', async () => {
    const t = buildTestApp();
    const runId = makeRun(t.db, { name: 'browser-run', modes: ['SCRIPT', 'AGENTS'] });
    for (let i = 0; i < 3; i += 1) {
      const scenario = makeScenario(t.db);
      makeDialogue(t.db, { runId, scenario, mode: 'SCRIPT', turns: makeTurns(4, 8) });
      makeDialogue(t.db, { runId, scenario, mode: 'AGENTS', turns: makeTurns(4, 8) });
    }
    const { batchId } = createBatch(
      t.db,
      { name: 'Checklist batch', runs: ['browser-run'], comparisons: [['SCRIPT:test-model', 'AGENTS:test-model']], instructions: 'Choose one.', pay: '£1.00', estimatedMinutes: 30 },
      { actor: 'test', now: new Date() },
    );
    const admin = await makeUser(t.db, 'admin');
    const server = await serve(t.app);
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    try {
      const page = await context.newPage();
      await signInAs(page, server.url, admin.email);
      await page.goto(`${server.url}/console/batches/${batchId}`);
      const consentItem = page.locator('#launch-checklist [data-check="consent"]');
      expect(await consentItem.textContent()).toMatch(/Consent text\s+\(fails, blocks opening\):\s+Empty/);
      expect(await page.getByRole('button', { name: 'Open', exact: true }).isDisabled()).toBe(true);
      expect(await page.getByTestId('pay-per-hour').textContent()).toBe('£2.00 per hour');
      expect(await page.getByTestId('pay-warning').isVisible()).toBe(true);
      await page.locator('#lifecycle-heading').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(tmpdir(), 'simarena-launch-checklist.png'), fullPage: true });

      await Promise.all([page.waitForURL(/\/edit#consent$/), page.getByRole('link', { name: 'Fix consent text' }).click()]);
      // The anchor lands on the field itself.
      expect(await page.evaluate(() => document.querySelector(':target')?.id)).toBe('consent');
      await page.locator('#consent').fill('You agree to compare conversations for this study.');
      await Promise.all([page.waitForURL(/\/console\/batches\/\d+$/), page.getByRole('button', { name: 'Save settings' }).click()]);
      expect(await page.locator('#launch-checklist [data-check="consent"]').textContent()).toContain('(passes)');
      const open = page.getByRole('button', { name: 'Open', exact: true });
      expect(await open.isDisabled()).toBe(false);
      await Promise.all([page.waitForURL(/\/console\/batches\/\d+$/), open.click()]);
      expect(await page.locator('h1 .state').textContent()).toBe('open');
      expect(t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(batchId)).toBe('open');

      // Closing asks for the typed word: a wrong one is refused by the browser's own check, nothing is sent.
      await page.getByText('Close (final)…').click();
      await page.locator('#close-confirm').fill('stop');
      await page.getByRole('button', { name: 'Close this batch for good' }).click();
      expect(await page.locator('#close-confirm').evaluate((el) => (el as HTMLInputElement).validity.patternMismatch)).toBe(true);
      expect(t.db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(batchId)).toBe('open');
      await page.locator('#close-confirm').fill('close');
      await Promise.all([page.waitForURL(/\/console\/batches\/\d+$/), page.getByRole('button', { name: 'Close this batch for good' }).click()]);
      expect(await page.locator('h1 .state').textContent()).toBe('closed');
    } finally {
      await context.close();
      await server.close();
    }
  });

  it('the consent page on a phone, once ten raters completed in about 4 minutes each, promises 4 minutes instead of the researcher\'s 30 (from figures at most 10 s old)', async () => {
    let now = new Date('2026-03-01T10:00:00.000Z');
    const t = buildTestApp({ clock: () => now });
    const seeded = seedBatch(t.db, { samples: 6, settings: { perRaterCap: 4, judgmentsPerPair: 50, estimatedMinutes: 30 } });
    const server = await serve(t.app);
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/r/${seeded.publicId}`);
      expect(await page.locator('main').textContent()).toContain('About 30 minutes');
      for (let i = 0; i < 10; i += 1) {
        const raterId = makeRater(t.db, { batchId: seeded.batchId, status: 'completed' });
        makeJudgment(t.db, { pairId: seeded.pairIds[i % 6] as number, raterId, winner: 'a', activeMs: 2 * 60_000 });
        makeJudgment(t.db, { pairId: seeded.pairIds[(i + 1) % 6] as number, raterId, winner: 'b', activeMs: 2 * 60_000 - 5_000 });
      }
      const fresh = await context.browser()!.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const other = await fresh.newPage();
        // Rater pages take a batch's timing figures as they were for up to 10 s (issue 12): not yet counted here.
        await other.goto(`${server.url}/r/${seeded.publicId}`);
        expect(await other.locator('main').textContent()).toContain('About 30 minutes');
        now = new Date(now.getTime() + 10_001);
        await other.goto(`${server.url}/r/${seeded.publicId}`);
        const text = (await other.locator('main').textContent()) ?? '';
        expect(text).toContain('About 4 minutes');
        expect(text).not.toContain('About 30 minutes');
      } finally {
        await fresh.close();
      }
    } finally {
      await context.close();
      await server.close();
    }
  });
});
