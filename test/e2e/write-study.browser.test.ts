// Issue 53's "done means" for the writing task, in real Chromium against the real app: a writing batch made, opened and
// linked with the CLI; a participant on a desktop writes an eight-turn conversation for both characters (reloading
// half-way, trying to paste once, settling a second tab's edit) and gets their code; another does the same on a phone's screen. Both conversations
// are accepted in the console and rated in a rating batch beside SCRIPT dialogues of the same samples.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createRun } from '../../src/generation/create-run.js';
import { executeRun } from '../../src/generation/execute-run.js';
import { createLlmClient } from '../../src/generation/llm-client.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';
import { launchBrowser, RATER_VIEWPORTS, serve, signedInPage } from '../helpers/browser.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { acceptFirstPending, rateTwoPairs } from './rate-collected.js';

const SECRETS = ['E2E-WRITE-SECRET-ONE', 'E2E-WRITE-SECRET-TWO'] as const;
const GOALS = ['E2E-WRITE-GOAL-ONE borrow', 'E2E-WRITE-GOAL-TWO keep'] as const;

let fake: FakeLlm;
let t: TestApp;
let server: { url: string; close: () => Promise<void> };
let browser: Browser;
let link: string;
let env: Record<string, string>;
const contexts: BrowserContext[] = [];

async function setUp(): Promise<void> {
  fake = await startFakeLlm();
  t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'k' } });
  makeScenario(t.db, { id: 'e2e-write-loan', relationship: 'acquaintance', secrets: [...SECRETS], goals: [...GOALS] });
  server = await serve(t.app);
  browser = await launchBrowser();
  env = { DATABASE_PATH: t.dbPath, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'k', PUBLIC_URL: server.url };
  const file = join(tempDir('simarena-e2e-write-'), 'write.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'E2E writing',
      task: 'write',
      run: 'e2e-written',
      scenarios: ['e2e-write-loan'],
      consent: 'You take part in a study of conversations.',
      instructions: 'Write the conversation of the two people.',
      pay: '£3.00',
      estimatedMinutes: 20,
      provider: { kind: 'link', completionCodes: { completed: 'E2E-WROTE' } },
      writing: { minTurns: 8, maxTurns: 12 },
    }),
  );
  const created = await cli(['batches', 'create', '--from', file], env);
  expect(created.stdout).toContain('collecting into run "e2e-written": its participants write 1 scenario cast(s).');
  const id = /Created batch (\d+)/.exec(created.stdout)?.[1] ?? '';
  expect((await cli(['batches', 'open', id], env)).code).toBe(0);
  link = (await cli(['batches', 'link', id], env)).stdout.trim();
}

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  (t?.app.locals.liveHub as LiveHub | undefined)?.stop();
  await server?.close();
  await fake?.close();
});

async function writer(options: Parameters<Browser['newContext']>[0]): Promise<Page> {
  const context = await browser.newContext(options);
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(link);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start writing' }).click();
  await page.waitForURL(/\/write\?rt=/);
  return page;
}

const turn = (page: Page, i: number) => page.locator('li.write-turn').nth(i);

/** Types turn i (adding it when it is not there yet), key by key as a person does. */
async function writeTurn(page: Page, i: number, text: string): Promise<void> {
  if ((await page.locator('li.write-turn').count()) <= i) await page.locator('#add-turn').click();
  await turn(page, i).locator('.turn-text').pressSequentially(text);
}

async function waitSaved(page: Page): Promise<void> {
  await page.locator('#save-status', { hasText: 'Saved.' }).waitFor({ timeout: 10_000 });
}

async function handIn(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Hand in the conversation' }).click();
  return (await page.locator('.completion-code strong').textContent()) ?? '';
}

const storedTexts = () => (JSON.parse(t.db.prepare('SELECT draft FROM write_drafts ORDER BY rater_id DESC').pluck().get() as string) as { text: string }[]).map((x) => x.text);

/**
 * The same writer in a second tab changes a turn; the first tab's next save is refused and the page asks which version
 * to keep (it never says "Saved." over the other's turns). The first keeps its own; the second, now behind, is refused
 * in turn and shows the other version when asked, with nothing of either lost before its writer chose.
 */
async function twoTabs(page: Page): Promise<void> {
  const other = await page.context().newPage();
  await other.goto(page.url());
  await turn(other, 3).locator('.turn-text').press('End');
  await turn(other, 3).locator('.turn-text').pressSequentially(' From the other tab.');
  await waitSaved(other);
  await writeTurn(page, 4, 'Desk line 5.');
  await page.locator('#save-conflict').waitFor({ timeout: 10_000 });
  expect(await page.locator('#save-status').textContent()).not.toContain('Saved.');
  expect(storedTexts()).toEqual(['Desk line 1.', 'Desk line 2.', 'Desk line 3.', 'Desk line 4. From the other tab.']);
  await page.getByRole('button', { name: "Keep this page's version" }).click();
  await waitSaved(page);
  expect(await page.locator('#save-conflict').isHidden()).toBe(true);
  expect(storedTexts()).toEqual(['Desk line 1.', 'Desk line 2.', 'Desk line 3.', 'Desk line 4.', 'Desk line 5.']);
  await turn(other, 0).locator('.turn-text').press('End');
  await turn(other, 0).locator('.turn-text').pressSequentially(' Again.');
  await other.locator('#save-conflict').waitFor({ timeout: 10_000 });
  await other.getByRole('button', { name: 'Show the other version' }).click();
  await other.locator('li.write-turn').nth(4).waitFor();
  expect(await other.locator('li.write-turn .turn-text').evaluateAll((boxes) => boxes.map((b) => (b as HTMLTextAreaElement).value))).toEqual(storedTexts());
  await other.close();
}

/** On a desktop: both characters' secrets shown; four turns, a reload that loses nothing, four more; a paste refused. */
async function desktopWriter(): Promise<void> {
  const page = await writer({ viewport: RATER_VIEWPORTS.desktop });
  const content = await page.content();
  for (const marker of [...SECRETS, ...GOALS]) expect(content).toContain(marker);
  for (let i = 0; i < 4; i++) await writeTurn(page, i, `Desk line ${i + 1}.`);
  await turn(page, 2).locator('.turn-text').dispatchEvent('paste');
  await page.locator('#paste-note').waitFor();
  await waitSaved(page);
  await page.reload();
  expect(await page.locator('li.write-turn .turn-text').evaluateAll((boxes) => boxes.map((b) => (b as HTMLTextAreaElement).value))).toEqual(['Desk line 1.', 'Desk line 2.', 'Desk line 3.', 'Desk line 4.']);
  await twoTabs(page);
  for (let i = 5; i < 8; i++) await writeTurn(page, i, `Desk line ${i + 1}.`);
  await turn(page, 5).locator('.turn-action').selectOption('non-verbal');
  expect(await turn(page, 7).locator('.turn-speaker').inputValue()).toBe('2');
  expect(await handIn(page)).toBe('E2E-WROTE');
  const dialogue = t.db.prepare("SELECT id, state, mode, model, sample_index FROM dialogues WHERE mode = 'HUMAN_SCRIPT' ORDER BY id").get() as { id: number };
  expect(dialogue).toMatchObject({ state: 'complete', mode: 'HUMAN_SCRIPT', model: 'human', sample_index: 0 });
  const turns = t.db.prepare('SELECT t.speaker, t.action, t.text, lt.keystrokes, lt.paste_attempts FROM turns t JOIN live_turns lt USING (dialogue_id, idx) WHERE t.dialogue_id = ? ORDER BY t.idx').all(dialogue.id) as { speaker: number; action: string; text: string; keystrokes: number; paste_attempts: number }[];
  expect(turns.map((x) => [x.speaker, x.action, x.text])).toEqual(Array.from({ length: 8 }, (_, i) => [i % 2 === 0 ? 1 : 2, i === 5 ? 'non-verbal' : 'speak', `Desk line ${i + 1}.`]));
  expect(turns.map((x) => x.keystrokes)).toEqual(Array.from({ length: 8 }, (_, i) => `Desk line ${i + 1}.`.length));
  expect(turns.map((x) => x.paste_attempts)).toEqual([0, 0, 1, 0, 0, 0, 0, 0]);
}

/**
 * A save lost to the network while another tab saved: the reload brings the lost turns back and asks which version to
 * keep (the copy is not saved over the other tab's in silence); kept, they are stored.
 */
async function lostSaveAfterAnotherTab(page: Page): Promise<void> {
  await waitSaved(page);
  const other = await page.context().newPage();
  await other.goto(page.url());
  await turn(other, 7).locator('.turn-text').press('End');
  await turn(other, 7).locator('.turn-text').pressSequentially(' (other)');
  await waitSaved(other);
  await page.route('**/write/draft', (route) => route.abort());
  await turn(page, 0).locator('.turn-text').press('End');
  await turn(page, 0).locator('.turn-text').pressSequentially(' (lost)');
  await page.locator('#save-status', { hasText: 'It is kept in this tab' }).waitFor({ timeout: 10_000 });
  await page.unroute('**/write/draft');
  await page.reload();
  await page.locator('#save-conflict').waitFor({ timeout: 10_000 });
  expect(await turn(page, 0).locator('.turn-text').inputValue()).toBe('Phone 1. (lost)');
  expect(storedTexts()[0]).toBe('Phone 1.');
  expect(storedTexts()[7]).toBe('Phone 8. (other)');
  await page.getByRole('button', { name: "Keep this page's version" }).click();
  await waitSaved(page);
  expect(storedTexts()[0]).toBe('Phone 1. (lost)');
  expect(storedTexts()[7]).toBe('Phone 8.');
  await other.close();
}

/** On a phone's screen: nothing wider than the screen, eight turns written and handed in. */
async function phoneWriter(): Promise<void> {
  const page = await writer({ viewport: RATER_VIEWPORTS.phone, isMobile: true, hasTouch: true });
  for (let i = 0; i < 8; i++) await writeTurn(page, i, `Phone ${i + 1}.`);
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.client);
  const box = await turn(page, 7).locator('.turn-text').boundingBox();
  expect(box?.width ?? 0).toBeGreaterThan(250);
  await lostSaveAfterAnotherTab(page);
  expect(await handIn(page)).toBe('E2E-WROTE');
  expect(t.db.prepare("SELECT sample_index FROM dialogues WHERE mode = 'HUMAN_SCRIPT' ORDER BY id").pluck().all()).toEqual([0, 1]);
}

/** Both accepted in the console, then rated beside SCRIPT dialogues of the same samples, blinded. */
async function reviewAndRate(): Promise<void> {
  const admin = await makeUser(t.db, 'admin');
  const page = await signedInPage(browser, server.url, admin.email, PASSWORD);
  contexts.push(page.context());
  const batchId = t.db.prepare("SELECT id FROM batches WHERE name = 'E2E writing'").pluck().get() as number;
  // Each review comes back to the list it was made from: the pending ones.
  await page.goto(`${server.url}/console/batches/${batchId}/collected?review=pending`);
  for (let i = 0; i < 2; i++) await acceptFirstPending(page);
  expect(t.db.prepare("SELECT review, count(*) AS n FROM collected_dialogues WHERE task = 'write' GROUP BY review").all()).toEqual([{ review: 'accepted', n: 2 }]);

  const scriptRun = createRun(t.db, { scenarios: 'e2e-write-loan', modes: ['script'], model: 'e2e-script', baseUrl: fake.baseUrl, maxTurns: 8, samples: 2 }, new Date());
  await executeRun(t.db, scriptRun, { llm: createLlmClient({ baseUrl: fake.baseUrl, apiKey: 'k' }) });
  const scriptName = t.db.prepare('SELECT name FROM runs WHERE id = ?').pluck().get(scriptRun) as string;
  const ratingId = await rateTwoPairs(env, page.context(), { name: 'E2E written vs script', runs: ['e2e-written', scriptName], comparisons: [['HUMAN_SCRIPT:human', 'SCRIPT:e2e-script']] }, (html) => {
    expect(html).not.toMatch(/HUMAN|SCRIPT:|e2e-written|e2e-script|E2E writing/);
    expect(html).toMatch(/Desk line 1\.|Phone 1\./);
  });
  expect(
    t.db
      .prepare("SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN dialogues d ON d.id IN (p.dialogue_a_id, p.dialogue_b_id) WHERE p.batch_id = ? AND d.mode = 'HUMAN_SCRIPT'")
      .pluck()
      .get(Number(ratingId)),
  ).toBe(2);
}

describe('a writing study, end to end in Chromium', () => {
  // One test: the database of buildTestApp is the test's own and closed after it, and each step needs the one before.
  it('collects an eight-turn conversation written on a desktop and one on a phone; accepts and rates them beside SCRIPT', async () => {
    await setUp();
    await desktopWriter();
    await phoneWriter();
    await reviewAndRate();
  }, 600_000);
});
