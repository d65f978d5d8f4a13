import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { cli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/test-db.js';

/**
 * The end of a collecting study (role-play, writing): a plain-link rating batch of what was accepted, made, opened and
 * linked with the CLI, and one rater in Chromium who answers its two pairs (each page checked by `checkPage`) and gets
 * the code. Returns the rating batch's id.
 */
export async function rateTwoPairs(
  env: Record<string, string>,
  context: BrowserContext,
  batch: { name: string; runs: string[]; comparisons: [string, string][] },
  checkPage: (html: string) => void,
): Promise<string> {
  const ratingFile = join(tempDir('simarena-e2e-rate-'), 'rating.json');
  writeFileSync(
    ratingFile,
    JSON.stringify({
      ...batch,
      judgmentsPerPair: 1,
      perRaterCap: 2,
      allowSameSample: true,
      consent: 'You compare conversations.',
      instructions: 'Choose the more natural one.',
      pay: '£1.00',
      provider: { kind: 'link', completionCodes: { completed: 'RATE-DONE' } },
    }),
  );
  const rating = await cli(['batches', 'create', '--from', ratingFile], env);
  expect(rating.stdout).toContain('with 2 pair(s)');
  const ratingId = /Created batch (\d+)/.exec(rating.stdout)?.[1] ?? '';
  await cli(['batches', 'open', ratingId], env);
  const raterLink = (await cli(['batches', 'link', ratingId], env)).stdout.trim();
  const rater = await context.newPage();
  await rater.goto(raterLink);
  await rater.getByRole('button', { name: 'I agree, continue' }).click();
  await rater.getByRole('button', { name: 'Start' }).click();
  for (let i = 0; i < 2; i++) {
    await rater.waitForURL(/\/c\//);
    checkPage(await rater.content());
    await rater.locator('#choice-left').check();
    await rater.getByRole('button', { name: 'Submit answer' }).click();
  }
  await rater.locator('.completion-code', { hasText: 'RATE-DONE' }).waitFor();
  return ratingId;
}

/**
 * Accepts the first dialogue of the review list open in `page` (its `?review=pending` view) and waits for the list the
 * review returns to. That list's URL is the same as before, so the wait is for its flash, which names the dialogue.
 */
export async function acceptFirstPending(page: Page): Promise<void> {
  const accept = page.getByRole('button', { name: 'Accept' }).first();
  const action = (await accept.locator('xpath=ancestor::form').getAttribute('action')) ?? '';
  const dialogueId = /\/collected\/(\d+)\?review=pending$/.exec(action)?.[1];
  expect(dialogueId).toBeDefined();
  await accept.click();
  await page.getByText(`Dialogue ${dialogueId} accepted`).waitFor();
  expect(page.url()).toMatch(/\/collected\?review=pending$/);
}
