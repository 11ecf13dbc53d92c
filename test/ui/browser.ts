/**
 * Real Chromium for the session page tests: Debian's /usr/bin/chromium driven by playwright-core (never a
 * downloaded browser). Missing Chromium fails the run in CI (CI=true) and skips with a message elsewhere. Also
 * what the page tests ask of any page: one at a width (a phone's below 500 px), a control's error, no sideways scroll.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContextOptions, chromium, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = resolve(import.meta.dirname, '../../test-output/screenshots');

/** Why the browser tests cannot run here, or null when they can. Throws in CI: a skipped UI suite is no pass. */
export function missingChromium(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const why = `Chromium not found at ${CHROMIUM}: install it with "apt-get install -y chromium" (.ci/run does)`;
  if (process.env.CI) throw new Error(why);
  console.warn(`SKIPPING browser tests: ${why}`);
  return why;
}

/** Chromium as the tests run it; `args` adds flags (host rules, cookie blocking). */
export function launch(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}

/** Saves the page as test-output/screenshots/<name>.png, for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs in through the form, with the keyboard: type the key, press Enter. */
export async function signIn(page: Page, baseUrl: string, key: string, path = '/'): Promise<void> {
  await page.goto(baseUrl + path);
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A page `width` px wide (900 high), touch and mobile below 500 px, waiting up to 20 s for what it is asked. */
export async function openPage(
  browser: Browser,
  width: number,
  options: BrowserContextOptions = {},
): Promise<Page> {
  const page = await browser.newPage({
    viewport: { width, height: 900 },
    isMobile: width < 500,
    hasTouch: width < 500,
    ...options,
  });
  page.setDefaultTimeout(20_000);
  return page;
}

/** The text of the error a control points at with aria-describedby (waits for it). */
export async function errorOf(control: Locator): Promise<string> {
  await control.locator('xpath=self::*[contains(@aria-describedby, "err-")]').waitFor();
  const ids = (await control.getAttribute('aria-describedby')) ?? '';
  const id = ids.split(' ').find((x) => x.startsWith('err-'));
  assert.ok(id, `no error described for the control (aria-describedby="${ids}")`);
  return control.page().locator(`#${id}`).innerText();
}

/** The page is no wider than the screen. */
export async function assertNoSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
}
