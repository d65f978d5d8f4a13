// The comparison page's layout in real Chromium on a desktop and a phone (issue 14, point 1): the question first,
// profiles folded on a phone, one identity per character across both conversations, the phone's 1 | 2 switch, an
// answer bar that stays on screen, the answer kept across a reload, the page's weight, and all of it without scripts.
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
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

const VIEWPORTS = {
  desktop: { width: 1366, height: 768 },
  phone: { width: 390, height: 844 },
} as const;

const QUESTION = 'Which conversation is more believable?';

/** Lengthens every dialogue to 30 turns, so that the page is several screens tall as real comparisons are. */
function lengthenDialogues(db: Db) {
  const insert = db.prepare("INSERT INTO turns (dialogue_id, idx, speaker, action, text) VALUES (?, ?, ?, 'speak', ?)");
  for (const id of db.prepare('SELECT id FROM dialogues').pluck().all() as number[]) {
    const next = (db.prepare('SELECT coalesce(max(idx), -1) + 1 FROM turns WHERE dialogue_id = ?').pluck().get(id) as number) ?? 0;
    for (let i = next; i < 30; i += 1) insert.run(id, i, i % 2 === 0 ? 1 : 2, `Turn ${i} of a long exchange where both people keep talking about the same matter at length.`);
  }
}

async function openComparison(viewport: { width: number; height: number }, javaScriptEnabled = true) {
  const built = buildTestApp();
  const seeded = seedBatch(built.db, { samples: 2, settings: { allowTie: true, reason: 'optional', question: QUESTION } });
  lengthenDialogues(built.db);
  const server = await serve(built.app);
  const context = await browser.newContext({ viewport, javaScriptEnabled });
  const page = await context.newPage();
  const bodies = new Map<string, number>();
  page.on('response', (res) => {
    void res
      .body()
      .then((b) => bodies.set(res.url(), b.length))
      .catch(() => undefined);
  });
  await page.goto(`${server.url}/r/${seeded.publicId}`);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
  await page.waitForLoadState('load');
  return { ...built, page, bodies, close: async () => (await context.close(), await server.close()) };
}

async function expectAccessible(page: Page) {
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
}

async function inViewport(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const height = page.viewportSize()?.height ?? 0;
  return box !== null && box.y >= 0 && box.y + box.height <= height;
}

/** The badge and look of every turn of character `speaker` in one conversation. */
async function identityOf(page: Page, conversation: 1 | 2, speaker: 1 | 2) {
  return page.locator(`#conversation-${conversation} .turn.speaker-${speaker}`).evaluateAll((turns) =>
    turns.map((t) => {
      const style = getComputedStyle(t);
      return { badge: t.querySelector('.badge')?.textContent, background: style.backgroundColor, marginLeft: style.marginLeft, borderLeft: style.borderLeftWidth };
    }),
  );
}

describe.each(Object.entries(VIEWPORTS))('comparison page in Chromium (%s)', (name, viewport) => {
  const phone = name === 'phone';

  it(`GET /r/:batch/c/:assignment, on a ${name}, puts the question above both conversations and again by the answer, ${phone ? 'folds' : 'opens'} the profiles, and labels goals by whom they were given to`, async () => {
    const { page, close } = await openComparison(viewport);
    try {
      expect(await page.locator('#question-top').innerText()).toContain(QUESTION);
      expect(await page.locator('.choices legend').innerText()).toBe(QUESTION);
      const question = await page.locator('#question-top').boundingBox();
      const first = await page.locator('#conversation-1-heading').boundingBox();
      expect(question!.y + question!.height).toBeLessThan(first!.y);
      if (phone) await page.getByRole('link', { name: 'Conversation 2', exact: true }).click();
      const second = await page.locator('#conversation-2-heading').boundingBox();
      await page.evaluate(() => window.scrollTo(0, 0));
      const questionNow = await page.locator('#question-top').boundingBox();
      const secondNow = await page.locator('#conversation-2-heading').boundingBox();
      expect(second).not.toBeNull();
      expect(questionNow!.y + questionNow!.height).toBeLessThan(secondNow!.y);

      const open = await page.locator('details.profile').evaluateAll((all) => all.map((d) => (d as HTMLDetailsElement).open));
      expect(open).toEqual(phone ? [false, false] : [true, true]);
      expect(await page.locator('.goal .term').allInnerTexts()).toEqual(['Goal given to Ana Ito:', 'Goal given to Ben Okoro:']);
      expect(await page.locator('.context').innerText()).not.toMatch(/^Goal:/m);
      await expectAccessible(page);
    } finally {
      await close();
    }
  });

  it(`on a ${name}, each character has the same badge, colour and side in both conversations, shown in a legend, and a different one from the other character`, async () => {
    const { page, close } = await openComparison(viewport);
    try {
      const legend = await page.locator('.speaker-legend li').allInnerTexts();
      expect(legend.map((l) => l.split(/\s+/).slice(0, 3).join(' '))).toEqual(['AI Ana Ito', 'BO Ben Okoro']);
      if (phone) await page.getByRole('link', { name: 'Conversation 2', exact: true }).click();
      for (const speaker of [1, 2] as const) {
        const one = await identityOf(page, 1, speaker);
        const two = await identityOf(page, 2, speaker);
        expect(one.length).toBeGreaterThan(3);
        expect(two.length).toBeGreaterThan(3);
        expect(new Set([...one, ...two].map((t) => JSON.stringify(t))).size).toBe(1);
      }
      const [ana] = await identityOf(page, 1, 1);
      const [ben] = await identityOf(page, 1, 2);
      expect(ana!.badge).toBe('AI');
      expect(ben!.badge).toBe('BO');
      // Not by colour alone: the badge text and the side differ too.
      expect(ana!.background).not.toBe(ben!.background);
      expect(parseFloat(ben!.marginLeft)).toBeGreaterThan(parseFloat(ana!.marginLeft));
      expect(ana!.borderLeft).not.toBe(ben!.borderLeft);
    } finally {
      await close();
    }
  });

  it(`on a ${name}, the answer bar stays on screen while reading, ${phone ? 'its 1 | 2 switch shows the other conversation, ' : ''}and its Answer link brings the form into view`, async () => {
    const { page, close } = await openComparison(viewport);
    try {
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(height).toBeGreaterThan(viewport.height * 2);
      await page.locator('#conversation-1 .turn').nth(20).scrollIntoViewIfNeeded();
      expect(await inViewport(page, '.answer-bar')).toBe(true);
      if (phone) {
        expect(await page.locator('#conversation-2').isVisible()).toBe(false);
        const link2 = page.getByRole('link', { name: 'Conversation 2', exact: true });
        await link2.click();
        expect(await link2.getAttribute('aria-current')).toBe('true');
        expect(await page.locator('#conversation-1').isVisible()).toBe(false);
        expect(await inViewport(page, '#conversation-2-heading')).toBe(true);
        await page.getByRole('link', { name: 'Conversation 1', exact: true }).click();
        expect(await inViewport(page, '#conversation-1-heading')).toBe(true);
        expect(await page.locator('#conversation-2').isVisible()).toBe(false);
        // The end of conversation 1 leads on to conversation 2.
        await page.getByRole('link', { name: 'Now read Conversation 2' }).click();
        expect(await inViewport(page, '#conversation-2-heading')).toBe(true);
        expect(await page.locator('#conversation-1').isVisible()).toBe(false);
      } else {
        expect(await page.locator('.answer-bar .switch').first().isVisible()).toBe(false);
        expect(await page.locator('.next-conversation').isVisible()).toBe(false);
        const first = await page.locator('#conversation-1-heading').boundingBox();
        const second = await page.locator('#conversation-2-heading').boundingBox();
        expect(second!.x).toBeGreaterThan(first!.x + 100);
      }
      await page.getByRole('link', { name: 'Answer' }).click();
      expect(await inViewport(page, '#choice-left')).toBe(true);
      await expectAccessible(page);
    } finally {
      await close();
    }
  });

  it(`on a ${name}, a reload keeps the chosen answer and the typed reason, and the kept answer is the one submitted`, async () => {
    const { db, page, close } = await openComparison(viewport);
    try {
      await page.locator('body').click({ position: { x: 1, y: 1 } });
      await page.keyboard.press('2');
      await page.locator('#reason').fill('Ben sounds like a person');
      const url = page.url();
      await page.reload();
      expect(page.url()).toBe(url);
      expect(await page.locator('#choice-right').isChecked()).toBe(true);
      expect(await page.locator('#reason').inputValue()).toBe('Ben sounds like a person');
      await page.locator('#choice-tie').check();
      await page.reload();
      expect(await page.locator('#choice-tie').isChecked()).toBe(true);
      await Promise.all([page.waitForURL((u) => u.href !== url), page.getByRole('button', { name: 'Submit answer' }).click()]);
      expect(db.prepare('SELECT choice, reason FROM judgments').all()).toEqual([{ choice: 'tie', reason: 'Ben sounds like a person' }]);
      // The next comparison starts empty: the kept answer belongs to its own assignment only.
      expect(await page.locator('input[name="choice"]:checked').count()).toBe(0);
      expect(await page.locator('#reason').inputValue()).toBe('');
    } finally {
      await close();
    }
  });
});

describe('comparison page weight', () => {
  it('GET /r/:batch/c/:assignment, with its style sheets and client file, weighs under 50 KB besides the dialogue text', async () => {
    const { page, bodies, close } = await openComparison(VIEWPORTS.desktop);
    try {
      await page.waitForTimeout(200);
      const pageUrl = page.url();
      const mine = [...bodies.entries()].filter(([u]) => u === pageUrl || u.includes('/static/'));
      expect(mine.map(([u]) => (u === pageUrl ? 'page' : u.replace(/^.*\/static\//, ''))).sort()).toEqual(['css/app.css', 'css/rater.css', 'js/rater.js', 'js/reason-limit.js', 'page']);
      const total = mine.reduce((sum, [, n]) => sum + n, 0);
      const dialogue = await page.locator('.turn .said').evaluateAll((all) => all.reduce((sum, el) => sum + new TextEncoder().encode(el.textContent ?? '').length, 0));
      expect(dialogue).toBeGreaterThan(1000);
      expect(total - dialogue).toBeLessThan(50_000);
    } finally {
      await close();
    }
  });
});

describe('comparison page without JavaScript', () => {
  it('with scripts disabled on a phone, the profiles are open, both conversations are on the page, the 1 | 2 links jump to each, and an answer is stored', async () => {
    const { db, page, close } = await openComparison(VIEWPORTS.phone, false);
    try {
      expect(await page.locator('details.profile').evaluateAll((all) => all.map((d) => (d as HTMLDetailsElement).open))).toEqual([true, true]);
      await page.getByRole('link', { name: 'Conversation 2', exact: true }).click();
      expect(page.url()).toMatch(/#conversation-2$/);
      expect(await inViewport(page, '#conversation-2-heading')).toBe(true);
      expect(await page.locator('#conversation-1').isVisible()).toBe(true);
      await page.getByRole('link', { name: 'Answer' }).click();
      await page.locator('#choice-left').check();
      const before = page.url();
      await Promise.all([page.waitForURL((u) => u.href.split('#')[0] !== before.split('#')[0]), page.getByRole('button', { name: 'Submit answer' }).click()]);
      expect(db.prepare('SELECT choice FROM judgments').pluck().all()).toEqual(['left']);
    } finally {
      await close();
    }
  });
});
