import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, serve } from '../helpers/browser.js';
import { makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { makeUser, PASSWORD } from '../auth/session-helpers.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('the role-play batch form in Chromium', () => {
  it('an admin, from the batch list, fills the role-play form, is shown a bad minimum beside its field with the rest kept, fixes it and lands on the new draft batch', async () => {
    const t = buildTestApp();
    makeScenario(t.db);
    const admin = await makeUser(t.db, 'admin');
    const server = await serve(t.app);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/console/login`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${server.url}/console`), page.getByRole('button', { name: 'Sign in' }).click()]);
      await page.goto(`${server.url}/console/batches`);
      await Promise.all([page.waitForURL(`${server.url}/console/batches/new/roleplay`), page.getByRole('link', { name: 'New role-play batch' }).click()]);
      await page.getByLabel('Name', { exact: true }).fill('Browser pilot');
      await page.getByLabel(/^Run the conversations land in/).fill('browser-live');
      await page.getByLabel(/^Fallback model/).fill('gpt-4o-mini');
      await page.getByLabel(/^Spoken turns below which/).fill('30');
      await page.getByLabel(/^Consent text/).fill('You agree to chat.');
      await page.getByLabel(/^Instructions/).fill('Play your part.');
      await page.getByLabel(/^Pay/).fill('£3.00');
      await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create draft role-play batch' }).click()]);

      const minimum = page.getByLabel(/^Spoken turns below which/);
      expect(await page.getByRole('alert').first().textContent()).toContain('Nothing was saved');
      expect(await minimum.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#turnsMin-error').textContent()).toBe('min must not exceed max');
      expect(await page.locator('#turnsMin-error').isVisible()).toBe(true);
      expect(await page.getByLabel(/^Fallback model/).inputValue()).toBe('gpt-4o-mini');
      expect(await page.getByLabel(/^Consent text/).inputValue()).toBe('You agree to chat.');
      expect((await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21aa']).analyze()).violations.map((v) => v.id)).toEqual([]);
      expect(t.db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(0);

      await minimum.fill('4');
      await Promise.all([page.waitForURL(/\/console\/batches\/\d+$/), page.getByRole('button', { name: 'Create draft role-play batch' }).click()]);
      expect(await page.locator('body').textContent()).toContain('Role-play batch created as a draft, collecting into run "browser-live"');
      const row = t.db.prepare('SELECT name, state, settings FROM batches').get() as { name: string; state: string; settings: string };
      expect(row).toMatchObject({ name: 'Browser pilot', state: 'draft' });
      expect(JSON.parse(row.settings)).toMatchObject({ task: 'roleplay', run: 'browser-live', partner: { fallback: { model: 'gpt-4o-mini' } }, turns: { min: 4, max: 20 } });
    } finally {
      await context.close();
      await server.close();
    }
  });
});
