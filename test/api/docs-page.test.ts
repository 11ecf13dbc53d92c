/**
 * /docs in real Chromium: Swagger UI renders every operation of /openapi.json from Herald's own origin, reuses the
 * key the session page keeps in the tab (no second sign-in), asks with the same sign-in when there is none, and
 * "Try it out" calls the API with that key.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { launch, missingChromium, screenshot, signIn } from '../ui/browser.ts';

const skip = missingChromium() ?? false;
let h: TestHerald;
let browser: Browser;

before(async () => {
  if (skip) return;
  h = await startTestHerald();
  await h.createInstance('Docs line');
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

async function newPage(): Promise<{ page: Page; offOrigin: string[]; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(20_000);
  const offOrigin: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(h.url)) offOrigin.push(r.url());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  return { page, offOrigin, problems };
}

async function operationCount(): Promise<number> {
  const spec = (await h.request('GET', '/openapi.json')).body;
  return Object.values(spec.paths as Record<string, object>).reduce(
    (n, ops) => n + Object.keys(ops).length,
    0,
  );
}

test('signed in on the session page, /docs renders every operation without asking for the key again', {
  skip,
}, async () => {
  const { page, offOrigin, problems } = await newPage();
  await signIn(page, h.url, ADMIN_KEY);
  await page.getByRole('link', { name: 'API reference' }).click();
  await page.waitForURL('**/docs');
  await page.locator('.opblock').first().waitFor();
  assert.equal(await page.getByLabel('API key').count(), 0, 'no second sign-in');
  assert.equal(await page.locator('.opblock-tag-section .opblock').count(), await operationCount());
  const summaries = await page.locator('.opblock-summary-path').allInnerTexts();
  assert.ok(
    summaries.some((s) => s.replace(/\u200b/g, '') === '/instances/{instance_id}/webhooks/{webhook_id}/test'),
  );
  // The deliveries Herald sends are described too (OpenAPI webhooks).
  await page.getByText('A delivery, as your endpoint receives it').waitFor();
  await screenshot(page, 'docs-01-reference');

  // Try it out: GET /instances with the session's key, answered 200 with the instance.
  const list = page.locator('.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/instances"]'),
  });
  await list.locator('.opblock-summary').click();
  await list.getByRole('button', { name: 'Try it out' }).click();
  await list.getByRole('button', { name: 'Execute' }).click();
  const live = list.locator('.live-responses-table tbody .response-col_status').first();
  await live.waitFor();
  assert.equal((await live.innerText()).trim(), '200');
  assert.match(
    await list.locator('.live-responses-table tbody .microlight').first().innerText(),
    /Docs line/,
  );
  await screenshot(page, 'docs-02-try-it-out');

  assert.deepEqual(offOrigin, [], 'nothing requested from another origin');
  assert.deepEqual(problems, [], 'no script error and no CSP violation');
  await page.close();
});

test('without a key /docs asks with the sign-in; a wrong key is refused, a right one shows the reference', {
  skip,
}, async () => {
  const { page } = await newPage();
  await page.goto(`${h.url}/docs`);
  await page.getByLabel('API key').fill('not-a-key-at-all');
  await page.getByLabel('API key').press('Enter');
  await page.getByText('This key is unknown or has been revoked').waitFor();
  await page.getByLabel('API key').fill(ADMIN_KEY);
  await page.getByLabel('API key').press('Enter');
  await page.locator('.opblock').first().waitFor();
  assert.equal(await page.locator('.opblock-tag-section .opblock').count(), await operationCount());
  await page.close();
});

test('the page and Swagger UI come from this origin, with a CSP and without a key', { skip }, async () => {
  const r = await h.request('GET', '/docs', { key: null });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-security-policy') ?? '', /^default-src 'self'; img-src 'self' data:;/);
  assert.doesNotMatch(r.body, /(src|href)\s*=\s*["']?(https?:)?\/\//i, 'nothing from another origin');
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    assert.equal((await h.request('GET', `/docs/vendor/${file}`, { key: null })).status, 200, file);
  }
  assert.equal((await h.request('GET', '/docs/vendor/package.json', { key: null })).status, 404);
  assert.equal((await h.request('GET', '/docs/vendor/..%2Fpackage.json', { key: null })).status, 404);
});

test('at a phone’s width (390 px) the page does not scroll sideways and Sign out is on screen', {
  skip,
}, async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await signIn(page, h.url, ADMIN_KEY, '/docs');
  await page.locator('.opblock').first().waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `the page is ${width} px wide`);
  const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
  assert.ok(signOut && signOut.x >= 0 && signOut.x + signOut.width <= 390, JSON.stringify(signOut));
  await screenshot(page, 'docs-03-phone');
  await page.close();
});
