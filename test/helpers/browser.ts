// Real Chromium for end-to-end tests (Debian's package, driven by playwright-core). Launch one per test file in
// beforeAll and close it in afterAll; starting a browser per test would dominate the suite's time.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { type Browser, type Page, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Serves the app on 127.0.0.1 at a free port. */
export async function serve(app: Express): Promise<{ url: string; close: () => Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The two screens the rater's pages are checked on. */
export const RATER_VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** From a study link, through consent and the instructions, to the first comparison page. */
export async function openFirstComparison(page: Page, link: string): Promise<void> {
  await page.goto(link);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/c\//);
}

/** A page of a new context signed in to the console through its login form. */
export async function signedInPage(browser: Browser, url: string, email: string, password: string, viewport = RATER_VIEWPORTS.desktop): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${url}/console/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForURL(`${url}/console`), page.getByRole('button', { name: 'Sign in' }).click()]);
  return page;
}

/** Width in pixels of a PNG image, from its header. */
export function pngWidth(png: Buffer): number {
  return png.readUInt32BE(16);
}
