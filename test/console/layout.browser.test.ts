import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeBatchWithJudgments, makeDialogue, makeJudgment, makeRater, makeScenario } from '../helpers/factories.js';
import { launchBrowser, serve } from '../helpers/browser.js';
import { buildTestApp } from '../helpers/test-app.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function signInPage(url: string, email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL(`${url}/console`), page.getByRole('button', { name: 'Sign in' }).click()]);
  return page;
}

/** Header cells of one word that the browser broke over two or more lines. */
const brokenOneWordHeaders = (page: Page) =>
  page.$$eval('table th', (cells) =>
    cells
      .filter((th) => (th.textContent ?? '').trim() !== '' && !/\s/.test((th.textContent ?? '').trim()))
      .filter((th) => {
        const range = document.createRange();
        range.selectNodeContents(th);
        const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
        return lines.size > 1;
      })
      .map((th) => th.textContent?.trim()),
  );

describe('console layout in Chromium', () => {
  it('GET /console/batches/:id/analysis, with judgments, shows each plot at its natural width (up to the page), not squeezed into columns', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['b', 'a', 'a'], ['a', 'b', 'a'], ['a', 'a', 'a']] });
    const admin = await makeUser(t.db, 'admin');
    const server = await serve(t.app);
    try {
      const page = await signInPage(server.url, admin.email);
      await page.goto(`${server.url}/console/batches/${batch.batchId}/analysis`);
      await page.locator('.plots img').first().scrollIntoViewIfNeeded();
      await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.plots img')).every((i) => i.complete && i.naturalWidth > 0));
      const widths = await page.$$eval('.plots img', (imgs) =>
        imgs.map((i) => ({ natural: (i as HTMLImageElement).naturalWidth, shown: i.getBoundingClientRect().width, room: i.closest('.plots')?.parentElement?.getBoundingClientRect().width ?? 0 })),
      );
      expect(widths.length).toBeGreaterThan(3);
      for (const w of widths) expect(w.shown).toBeGreaterThanOrEqual(Math.min(w.natural, w.room) - 1);
    } finally {
      await server.close();
    }
  });

  it('GET /console/batches/:id, as judgments arrive, moves the win-rate dot and its interval band on the 0–100% track without a reload', async () => {
    const t = buildTestApp();
    // 4 of 4 decisive judgments for a: the dot starts at 100%.
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a'], ['a', 'a']] });
    const admin = await makeUser(t.db, 'admin');
    const server = await serve(t.app);
    try {
      const page = await signInPage(server.url, admin.email);
      await page.goto(`${server.url}/console/batches/${batch.batchId}`);
      const bar = page.locator('[data-ci-bar="comparisons.0"]');
      expect(await bar.getAttribute('aria-label')).toMatch(/^win rate of a 100\.0%, 95% interval 51\.0% to 100\.0%$/);
      const position = () =>
        bar.evaluate((el) => {
          const track = el.getBoundingClientRect();
          const dot = el.querySelector('.ci-point')?.getBoundingClientRect();
          const band = el.querySelector('.ci-band')?.getBoundingClientRect();
          return { dot: dot ? (dot.left + dot.width / 2 - track.left) / track.width : -1, bandLeft: band ? (band.left - track.left) / track.width : -1 };
        });
      const before = await position();
      expect(before.dot).toBeCloseTo(1, 1);
      expect(before.bandLeft).toBeCloseTo(0.51, 1);
      await page.evaluate(() => {
        (window as unknown as { notReloaded: boolean }).notReloaded = true;
      });
      // Four more for b from two new raters: 4 of 8, the dot moves to the 50% line.
      for (const _ of [0, 1]) {
        const raterId = makeRater(t.db, { batchId: batch.batchId });
        for (const pairId of batch.pairIds) makeJudgment(t.db, { pairId, raterId, winner: 'b' });
      }
      await page.waitForFunction(() => document.querySelector('[data-ci-bar="comparisons.0"]')?.getAttribute('aria-label')?.startsWith('win rate of a 50.0%'), null, { timeout: 10_000 });
      const after = await position();
      expect(after.dot).toBeCloseTo(0.5, 1);
      expect(after.bandLeft).toBeLessThan(0.5);
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('GET /console/runs/:id and /console/batches/:id/raters, with long cells beside short ones, never break a one-word header or an id over lines', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['b', 'a', 'a']] });
    const scenario = makeScenario(t.db);
    for (let i = 0; i < 3; i++) {
      const id = makeDialogue(t.db, { runId: batch.runId, scenario, mode: 'SCRIPT', sampleIndex: i + 1, state: 'failed' });
      t.db.prepare('UPDATE dialogues SET failure_reason = ? WHERE id = ?').run('invalid model output after 3 attempt(s): turns: Invalid input: expected array, received undefined', id);
    }
    const admin = await makeUser(t.db, 'admin');
    const server = await serve(t.app);
    try {
      const page = await signInPage(server.url, admin.email);
      await page.goto(`${server.url}/console/runs/${batch.runId}`);
      expect(await brokenOneWordHeaders(page)).toEqual([]);
      const brokenIds = await page.$$eval('table td a[href^="/console/dialogues/"]', (links) => links.filter((a) => a.getClientRects().length > 1).map((a) => a.textContent));
      expect(brokenIds).toEqual([]);
      await page.goto(`${server.url}/console/batches/${batch.batchId}/raters`);
      expect(await brokenOneWordHeaders(page)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
