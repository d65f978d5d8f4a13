// Issue 52's "done means", in real Chromium against the real app: a role-play batch made, opened and linked with the CLI;
// two participants matched, chatting ten turns, each seeing only their own secret, answering the partner question and
// getting their codes; a third waiting out the wait and playing the fallback agent (the suite's fake model) to the end;
// a fourth told and paid when their partner closes the tab. Then the collected dialogues accepted in the console,
// evaluated, rated in a rating batch beside AGENTS dialogues of the same samples, and the analysis page showing the
// participants' partner guesses and goal self-reports.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { createRun } from '../../src/generation/create-run.js';
import { executeRun } from '../../src/generation/execute-run.js';
import { createLlmClient } from '../../src/generation/llm-client.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';
import { launchBrowser, serve } from '../helpers/browser.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { acceptFirstPending, rateTwoPairs } from './rate-collected.js';

const SECRETS = ['E2E-SECRET-OF-ONE', 'E2E-SECRET-OF-TWO'] as const;
const AGENT_MODEL = 'e2e-fallback-model';

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
  makeScenario(t.db, { id: 'e2e-loan', relationship: 'acquaintance', secrets: [...SECRETS], goals: ['E2E-GOAL-ONE borrow', 'E2E-GOAL-TWO keep'] });
  server = await serve(t.app);
  browser = await launchBrowser();
  env = { DATABASE_PATH: t.dbPath, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'k', PUBLIC_URL: server.url };
  const file = join(tempDir('simarena-e2e-rp-'), 'roleplay.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'E2E role-play',
      task: 'roleplay',
      run: 'e2e-live',
      scenarios: ['e2e-loan'],
      consent: 'You take part in a study of conversations.',
      instructions: 'Play your character.',
      pay: '£2.00',
      estimatedMinutes: 10,
      provider: { kind: 'link', completionCodes: { completed: 'E2E-DONE', noPartner: 'E2E-NOBODY' } },
      partner: { waitSeconds: 5, awaySeconds: 3, sameAddress: true, fallback: { model: AGENT_MODEL, wordsPerMinute: 400 } },
      turns: { max: 10, min: 4, turnSeconds: 30 },
    }),
  );
  const created = await cli(['batches', 'create', '--from', file], env);
  expect(created.stdout).toContain('collecting into run "e2e-live"');
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

async function participant(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(link);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'I am ready: find me a partner' }).click();
  await page.waitForURL(/\/live\?rt=/);
  return page;
}

const characterOf = async (page: Page) => Number(await page.locator('main.live').getAttribute('data-character'));

async function send(page: Page, text: string): Promise<void> {
  await page.locator('#send-turn:not([disabled])').waitFor({ timeout: 40_000 });
  await page.locator('#turn-text').fill(text);
  await page.locator('#send-turn').click();
}

async function finish(page: Page, guess: 'A person' | 'An AI', goal: string): Promise<string> {
  await page.getByRole('link', { name: 'Continue to the questions' }).click();
  await page.getByLabel(guess).check();
  await page.locator('#goal-score').selectOption(goal);
  await page.getByRole('button', { name: 'Finish and get my code' }).click();
  return (await page.locator('.completion-code strong').textContent()) ?? '';
}

/** Two participants are matched, chat ten turns seeing only their own secrets, answer and get their codes. */
async function twoPeople(): Promise<void> {
  const pages = [await participant(), await participant()];
  for (const page of pages) await page.locator('#chat-heading').waitFor({ timeout: 15_000 });
  const byCharacter = (await characterOf(pages[0] as Page)) === 1 ? pages : [pages[1], pages[0]];
  const [one, two] = byCharacter as [Page, Page];
  expect(await one.content()).toContain(SECRETS[0]);
  expect(await one.content()).not.toContain(SECRETS[1]);
  expect(await two.content()).toContain(SECRETS[1]);
  expect(await two.content()).not.toContain(SECRETS[0]);
  for (let i = 0; i < 10; i++) {
    const [speaker, listener] = i % 2 === 0 ? [one, two] : [two, one];
    await send(speaker, `Line ${i + 1} of our talk.`);
    await listener.locator('#chat-log li', { hasText: `Line ${i + 1} of our talk.` }).waitFor({ timeout: 10_000 });
  }
  for (const page of [one, two]) await page.locator('#ended-message', { hasText: 'The conversation is over.' }).waitFor();
  expect(await finish(one, 'A person', '7')).toBe('E2E-DONE');
  expect(await finish(two, 'An AI', '5')).toBe('E2E-DONE');
  expect(t.db.prepare("SELECT state, end_reason, mode FROM dialogues WHERE origin = 'collected'").get()).toEqual({ state: 'complete', end_reason: 'max_turns', mode: 'HUMANS' });
}

/** A third waits out the wait, plays the fallback agent to the end, and gets the code. */
async function personAndAgent(): Promise<void> {
  const page = await participant();
  await page.locator('#waited').waitFor();
  await page.locator('#chat-heading').waitFor({ timeout: 20_000 });
  const me = await characterOf(page);
  for (let spoken = 0; spoken < 3; spoken++) {
    if (me === 2 || spoken > 0) await page.locator('#chat-log li.speaker-' + (me === 1 ? 2 : 1)).nth(me === 2 ? spoken : spoken - 1).waitFor({ timeout: 30_000 });
    await send(page, `My turn number ${spoken + 1}.`);
  }
  await page.locator('#chat-log li.speaker-' + (me === 1 ? 2 : 1)).nth(2).waitFor({ timeout: 30_000 });
  await page.locator('#turn-action').selectOption('leave');
  await page.locator('#send-turn').click();
  await page.locator('#ended-message', { hasText: 'The conversation is over.' }).waitFor({ timeout: 15_000 });
  expect(await finish(page, 'A person', '8')).toBe('E2E-DONE');
  const dialogue = t.db.prepare("SELECT id, mode, model, state, end_reason FROM dialogues WHERE mode = 'HUMAN_AGENT'").get() as { id: number };
  expect(dialogue).toMatchObject({ mode: 'HUMAN_AGENT', model: AGENT_MODEL, state: 'complete', end_reason: 'left' });
  expect(t.db.prepare("SELECT count(*) FROM llm_calls WHERE dialogue_id = ? AND status = 'ok'").pluck().get(dialogue.id)).toBeGreaterThanOrEqual(3);
}

/** A fourth, whose partner closes the tab mid-chat, is told at once and paid. */
async function partnerLeaves(): Promise<void> {
  const pages = [await participant(), await participant()];
  for (const page of pages) await page.locator('#chat-heading').waitFor({ timeout: 15_000 });
  const [stays, leaves] = (await characterOf(pages[0] as Page)) === 1 ? (pages as [Page, Page]) : ([pages[1], pages[0]] as [Page, Page]);
  await send(stays, 'Hello, shall we begin?');
  await leaves.locator('#chat-log li', { hasText: 'Hello, shall we begin?' }).waitFor();
  await leaves.context().close();
  await stays.locator('#ended-message', { hasText: 'your partner is no longer in it. This is not your fault, and you will be paid in full' }).waitFor({ timeout: 15_000 });
  expect(await finish(stays, 'A person', '3')).toBe('E2E-DONE');
  const outcomes = t.db.prepare("SELECT p.outcome, r.status FROM live_players p JOIN raters r ON r.id = p.rater_id WHERE p.dialogue_id = (SELECT max(dialogue_id) FROM live_players) ORDER BY p.outcome").all();
  expect(outcomes).toEqual([
    { outcome: 'away', status: 'rating' },
    { outcome: 'partner_left', status: 'completed' },
  ]);
}

/** The transcripts, accepted in the console, are rated beside AGENTS dialogues; the analysis shows the participants' answers. */
async function reviewRateAnalyse(): Promise<void> {
  const admin = await makeUser(t.db, 'admin');
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${server.url}/console/login`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: /sign in/i }).click();
  const batchId = t.db.prepare("SELECT id FROM batches WHERE name = 'E2E role-play'").pluck().get() as number;
  await page.goto(`${server.url}/console/batches/${batchId}/collected?review=pending`);
  // The incomplete one (one spoken turn) offers only Reject; the two complete ones are accepted.
  // Each review comes back to the list it was made from: the pending ones.
  for (let i = 0; i < 2; i++) await acceptFirstPending(page);
  await page.getByRole('button', { name: 'Reject' }).click();
  expect(t.db.prepare('SELECT review, count(*) AS n FROM collected_dialogues GROUP BY review ORDER BY review').all()).toEqual([
    { review: 'accepted', n: 2 },
    { review: 'rejected', n: 1 },
  ]);

  expect((await cli(['evaluate', '--run', 'e2e-live', '--judge-model', 'e2e-judge'], env)).code).toBe(0);
  const agentsRun = createRun(t.db, { scenarios: 'e2e-loan', modes: ['agents'], model: 'e2e-agents', baseUrl: fake.baseUrl, maxTurns: 6 }, new Date());
  await executeRun(t.db, agentsRun, { llm: createLlmClient({ baseUrl: fake.baseUrl, apiKey: 'k' }) });
  const agentsName = t.db.prepare('SELECT name FROM runs WHERE id = ?').pluck().get(agentsRun) as string;
  const ratingId = await rateTwoPairs(
    env,
    context,
    { name: 'E2E real life vs agents', runs: ['e2e-live', agentsName], comparisons: [['HUMANS:human', 'AGENTS:e2e-agents'], [`HUMAN_AGENT:${AGENT_MODEL}`, 'AGENTS:e2e-agents']] },
    (html) => expect(html).not.toMatch(/HUMAN|AGENT|e2e-live|e2e-agents/),
  );

  await page.goto(`${server.url}/console/batches/${ratingId}/analysis`);
  const outcomes = page.getByTestId('roleplay-outcomes');
  await outcomes.waitFor({ timeout: 60_000 });
  const text = (await outcomes.textContent()) ?? '';
  expect(text).toContain('Partner guesses');
  expect(text).toMatch(/HUMANS:human\s*a person\s*2\s*1\s*50\.0%/);
  expect(text).toMatch(new RegExp(`HUMAN_AGENT:${AGENT_MODEL}\\s*the model\\s*1\\s*1\\s*100\\.0%`));
  expect(text).toContain('Goal completion: self-report and Sotopia-Eval');
  expect(await page.locator('body').textContent()).toContain('HUMANS:human');
}

describe('a role-play study, end to end in Chromium', () => {
  // One test: the database of buildTestApp is the test's own and closed after it, and each step needs the one before.
  it('collects two people, a person and the agent, and a dropped partner; accepts, rates and analyses what was collected', async () => {
    await setUp();
    await twoPeople();
    await personAndAgent();
    await partnerLeaves();
    await reviewRateAnalyse();
  }, 600_000);
});
