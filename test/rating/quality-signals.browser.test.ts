// Issue 43 in Chromium: real key events and a real clipboard paste tell a typed reason from a pasted one, in the
// stored signals, the judgments through the API and the rater table; answers faster than the reading floor and two
// raters with the same reason are flagged. Issue 40: on a phone the key hints are hidden and an answer before
// Conversation 2 is nudged and recorded. "One key": a rater answering every comparison with the same key is flagged.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
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

const REASON = 'The second one answers the question that was asked and keeps both goals in view';

async function reachFirstComparison(page: Page, link: string) {
  await page.goto(link);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
}

async function submitAndLeave(page: Page) {
  const before = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: 'Submit answer' }).click()]);
}

/** One rater in a context of their own: choose Conversation 2 with key 2, then give the reason as `how` says. */
async function rate(context: BrowserContext, link: string, how: 'type' | 'paste') {
  const page = await context.newPage();
  await reachFirstComparison(page, link);
  await page.keyboard.press('2');
  const box = page.locator('#reason');
  await box.click();
  // Typed at a person's pace: the server finds more than 20 keys a second over the time open implausible.
  if (how === 'type') await page.keyboard.type(REASON, { delay: 60 });
  else {
    await page.evaluate((text) => navigator.clipboard.writeText(text), REASON);
    await page.keyboard.press('Control+V');
  }
  await expect.poll(() => box.inputValue()).toBe(REASON);
  await submitAndLeave(page);
}

describe('quality signals in Chromium (issue 43)', () => {
  it('a typed and a pasted reason are told apart in the stored signals, the judgments and the rater table; fast answers and a shared reason are flagged', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 1, settings: { perRaterCap: 1, judgmentsPerPair: 3, reason: 'optional', provider: { kind: 'link', completionCodes: { completed: 'SIG-OK' } } } });
    const server = await serve(built.app);
    const link = `${server.url}/r/${seeded.publicId}`;
    const contexts = await Promise.all([0, 1].map(() => browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] })));
    try {
      await rate(contexts[0] as BrowserContext, link, 'type');
      await rate(contexts[1] as BrowserContext, link, 'paste');
      const rows = built.db
        .prepare('SELECT rater_id, telemetry, reason_chars, paste_events, pasted_chars, keystrokes > 0 AS typed, answered_before_second FROM answer_signals ORDER BY rater_id')
        .all() as { rater_id: number; telemetry: string; reason_chars: number; paste_events: number; pasted_chars: number; typed: number; answered_before_second: number | null }[];
      expect(rows.map(({ rater_id: _id, ...r }) => r)).toEqual([
        { telemetry: 'plausible', reason_chars: REASON.length, paste_events: 0, pasted_chars: 0, typed: 1, answered_before_second: null },
        { telemetry: 'plausible', reason_chars: REASON.length, paste_events: 1, pasted_chars: REASON.length, typed: 0, answered_before_second: null },
      ]);
      const [typist, paster] = rows.map((r) => r.rater_id) as [number, number];

      const admin = await signIn(built.app, built.db, 'admin');
      const api = await request(built.app).get(`/api/batches/${seeded.batchId}/judgments`).set('Authorization', `Bearer ${tokenFor(built.db, admin.email)}`).expect(200);
      const shares = (api.body.data as { reason_pasted_share: number | null; keystrokes: number }[]).map((j) => j.reason_pasted_share).sort();
      expect(shares).toEqual([0, 1]);

      // The table shows the signals the analysis worker stored with the batch's analysis: the researcher waits for it.
      await awaitBatchAnalysis(built.db, seeded.batchId, { now: () => new Date(), fresh: true });
      const table = await admin.agent.get(`/console/batches/${seeded.batchId}/raters`).expect(200);
      const rowOf = (id: number) => new RegExp(`data-rater="${id}">([\\s\\S]*?)</tr>`).exec(table.text)?.[1] ?? '';
      expect(rowOf(typist)).toMatch(/data-testid="reasons-typed-pasted">1 \/ 0</);
      expect(rowOf(paster)).toMatch(/data-testid="reasons-typed-pasted">0 \/ 1</);
      expect(rowOf(paster)).toContain('pasted reasons');
      expect(rowOf(typist)).not.toContain('pasted reasons');
      // The two conversations hold about 200 words: at 500 words a minute nobody reads them in the seconds taken.
      for (const id of [typist, paster]) {
        expect(rowOf(id)).toContain('under reading time');
        expect(rowOf(id)).toContain('same reason as another rater');
      }
    } finally {
      await Promise.all(contexts.map((c) => c.close()));
      await server.close();
    }
  });
});

describe('a phone rater in Chromium (issue 40)', () => {
  it('on a touch screen, no key hints show; an answer before Conversation 2 was opened is nudged, not blocked, and recorded', async () => {
    const built = buildTestApp();
    const seeded = seedBatch(built.db, { samples: 1, settings: { perRaterCap: 1, reason: 'optional', provider: { kind: 'link', completionCodes: { completed: 'SIG-OK' } } } });
    const server = await serve(built.app);
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/r/${seeded.publicId}`);
      await page.getByRole('button', { name: 'I agree, continue' }).tap();
      await page.getByRole('button', { name: 'Start' }).waitFor();
      expect(await page.getByText('With a keyboard').count()).toBe(1);
      expect(await page.getByText('With a keyboard').isVisible()).toBe(false);
      await page.getByRole('button', { name: 'Start' }).tap();
      await page.waitForURL(/\/c\//);
      expect(await page.locator('.key-hint').first().isVisible()).toBe(false);
      expect(await page.locator('#second-nudge').isVisible()).toBe(false);
      await page.locator('label[for="choice-left"]').tap();
      await expect.poll(() => page.locator('#second-nudge').isVisible()).toBe(true);
      await submitAndLeave(page);
      expect(built.db.prepare('SELECT answered_before_second FROM answer_signals').pluck().all()).toEqual([1]);
      expect(built.db.prepare('SELECT choice FROM judgments').pluck().all()).toEqual(['left']);
    } finally {
      await context.close();
      await server.close();
    }
  });
});

/** One rater answering every comparison of a batch, each choice made as `how(i)` says; no reason. */
async function answerAll(context: BrowserContext, link: string, comparisons: number, how: (i: number) => 'key 1' | 'key 2' | 'click left' | 'click right') {
  const page = await context.newPage();
  await reachFirstComparison(page, link);
  for (let i = 0; i < comparisons; i += 1) {
    const way = how(i);
    if (way === 'key 1') await page.keyboard.press('1');
    else if (way === 'key 2') await page.keyboard.press('2');
    else await page.locator(`label[for="choice-${way === 'click left' ? 'left' : 'right'}"]`).click();
    await submitAndLeave(page);
  }
}

describe('"one key" in Chromium (issue 43)', () => {
  it('a rater who answers all eight comparisons with key 1 is flagged "one key" on the rater table and the participants page; one answering by mouse and mixed keys is not, nor one who pressed key 2 five times', async () => {
    const built = buildTestApp();
    // Eight: the fewest at which an honest keyboard rater presses one key throughout by chance less than 1% (issue 51).
    const comparisons = 8;
    const seeded = seedBatch(built.db, { samples: comparisons, settings: { perRaterCap: comparisons, judgmentsPerPair: 3, provider: { kind: 'link', completionCodes: { completed: 'KEY-OK' } } } });
    const server = await serve(built.app);
    const link = `${server.url}/r/${seeded.publicId}`;
    const contexts = await Promise.all([0, 1, 2].map(() => browser.newContext({ viewport: { width: 1280, height: 900 } })));
    try {
      await answerAll(contexts[0] as BrowserContext, link, comparisons, () => 'key 1');
      await answerAll(contexts[1] as BrowserContext, link, comparisons, (i) => (['click left', 'key 2', 'click right', 'key 1', 'click left', 'key 1', 'key 1', 'key 1'] as const)[i] ?? 'click left');
      // Five answers with one key happen to an honest keyboard rater one time in 16: no flag (issue 51).
      await answerAll(contexts[2] as BrowserContext, link, 5, () => 'key 2');
      const keysOf = (id: number) => built.db.prepare('SELECT answer_key FROM answer_signals WHERE rater_id = ? ORDER BY assignment_id').pluck().all(id);
      const [keyer, mixer, five] = built.db.prepare('SELECT DISTINCT rater_id FROM answer_signals ORDER BY rater_id').pluck().all() as [number, number, number];
      expect(keysOf(keyer)).toEqual(new Array(8).fill('1'));
      expect(keysOf(mixer)).toEqual(['pointer', '2', 'pointer', '1', 'pointer', '1', '1', '1']);
      expect(keysOf(five)).toEqual(new Array(5).fill('2'));
      expect(built.db.prepare("SELECT count(*) FROM answer_signals WHERE telemetry = 'plausible'").pluck().get()).toBe(21);

      const admin = await signIn(built.app, built.db, 'admin');
      await awaitBatchAnalysis(built.db, seeded.batchId, { now: () => new Date(), fresh: true });
      const table = await admin.agent.get(`/console/batches/${seeded.batchId}/raters`).expect(200);
      const rowOf = (id: number) => new RegExp(`data-rater="${id}">([\\s\\S]*?)</tr>`).exec(table.text)?.[1] ?? '';
      expect(rowOf(keyer)).toContain('one key');
      expect(rowOf(mixer)).not.toContain('one key');
      expect(rowOf(five)).not.toContain('one key');
      const csv = (await admin.agent.get(`/console/batches/${seeded.batchId}/participants.csv?form=full`).expect(200)).text;
      expect(csv.split('\n').filter((l) => l.includes('one key'))).toHaveLength(1);
    } finally {
      await Promise.all(contexts.map((c) => c.close()));
      await server.close();
    }
  });
});
