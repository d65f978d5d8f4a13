// Issue 51, item 10, in Chromium: an honest rater's reason is not "implausible" when it was not typed in the page view
// that sends it: typed, then the page reloaded (the reason restored from the tab's storage); typed, then an answer
// refused and the page sent back with the reason in it (with the tab's storage, and with storage refused, where the
// text on the page when it starts counts as restored); or dictated on a phone (characters with no key pressed).
import type { Browser, Page } from 'playwright-core';
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

// 52 characters, as in the dictated reason.
const REASON = 'The second one sounds like two people really talking';

type Signals = { telemetry: string; problem: string | null; reason_chars: number; keystrokes: number; restored_chars: number | null; inserted_chars: number | null };

/** A one-comparison batch served on a real port, a browser context as `options` says, on its comparison page. */
async function onComparison(options: Parameters<Browser['newContext']>[0], touch = false) {
  const built = buildTestApp();
  const seeded = seedBatch(built.db, { samples: 1, settings: { perRaterCap: 1, reason: 'optional', provider: { kind: 'link', completionCodes: { completed: 'REASON-OK' } } } });
  const server = await serve(built.app);
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto(`${server.url}/r/${seeded.publicId}`);
  const press = (name: string) => (touch ? page.getByRole('button', { name }).tap() : page.getByRole('button', { name }).click());
  await press('I agree, continue');
  await press('Start');
  await page.waitForURL(/\/c\//);
  const signals = () => built.db.prepare('SELECT telemetry, problem, reason_chars, keystrokes, restored_chars, inserted_chars FROM answer_signals').all() as Signals[];
  const done = async () => {
    await context.close();
    await server.close();
  };
  return { page, context, signals, done };
}

async function typeReason(page: Page) {
  await page.locator('#reason').click();
  // At a person's pace: more than 20 keys a second over the time open is implausible in its own right.
  await page.keyboard.type(REASON, { delay: 40 });
}

async function submitAndLeave(page: Page) {
  const before = page.url();
  await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: 'Submit answer' }).click()]);
}

/** Submits with nothing chosen, past the browser's own check: the server refuses and sends the page back. */
async function submitRefused(page: Page) {
  await page.evaluate(() => {
    (document.getElementById('judgment-form') as HTMLFormElement).noValidate = true;
  });
  await Promise.all([page.waitForLoadState('load'), page.waitForResponse((r) => r.request().method() === 'POST' && r.status() === 400), page.getByRole('button', { name: 'Submit answer' }).click()]);
  await expect.poll(() => page.locator('#form-error').isVisible()).toBe(true);
  expect(await page.locator('#reason').inputValue()).toBe(REASON);
}

const WIDE = { viewport: { width: 1280, height: 900 } };

describe('reasons not typed on the page that sends them (issue 51)', () => {
  it('a reason typed, then the page reloaded, keeps its keystrokes and is plausible', async () => {
    const { page, signals, done } = await onComparison(WIDE);
    try {
      await typeReason(page);
      await page.reload();
      await expect.poll(() => page.locator('#reason').inputValue()).toBe(REASON);
      await page.keyboard.press('2');
      await submitAndLeave(page);
      expect(signals()).toEqual([{ telemetry: 'plausible', problem: null, reason_chars: REASON.length, keystrokes: REASON.length, restored_chars: 0, inserted_chars: 0 }]);
    } finally {
      await done();
    }
  });

  it('a reason typed, then sent back with a refused answer, keeps its keystrokes and is plausible', async () => {
    const { page, signals, done } = await onComparison(WIDE);
    try {
      await typeReason(page);
      await submitRefused(page);
      await page.keyboard.press('2');
      await submitAndLeave(page);
      expect(signals()).toEqual([{ telemetry: 'plausible', problem: null, reason_chars: REASON.length, keystrokes: REASON.length, restored_chars: 0, inserted_chars: 0 }]);
    } finally {
      await done();
    }
  });

  it('a reason sent back with a refused answer in a tab that refuses storage counts as restored, not typed, and is plausible', async () => {
    const { page, context, signals, done } = await onComparison(WIDE);
    try {
      await context.addInitScript(() => {
        Object.defineProperty(window, 'sessionStorage', {
          get() {
            throw new DOMException('The operation is insecure.', 'SecurityError');
          },
        });
      });
      await page.reload();
      await typeReason(page);
      await submitRefused(page);
      await page.keyboard.press('2');
      await submitAndLeave(page);
      expect(signals()).toEqual([{ telemetry: 'plausible', problem: null, reason_chars: REASON.length, keystrokes: 0, restored_chars: REASON.length, inserted_chars: 0 }]);
    } finally {
      await done();
    }
  });

  it('a reason dictated on a phone (52 characters, no key pressed) counts as inserted, not typed, and is plausible', async () => {
    const { page, signals, done } = await onComparison({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }, true);
    try {
      await page.locator('label[for="choice-right"]').tap();
      await page.locator('#reason').tap();
      // What dictation does: the text arrives as input with no key event (Input.insertText).
      await page.keyboard.insertText(REASON);
      expect(await page.locator('#reason').inputValue()).toBe(REASON);
      await submitAndLeave(page);
      expect(signals()).toEqual([{ telemetry: 'plausible', problem: null, reason_chars: REASON.length, keystrokes: 0, restored_chars: 0, inserted_chars: REASON.length }]);
    } finally {
      await done();
    }
  });
});
