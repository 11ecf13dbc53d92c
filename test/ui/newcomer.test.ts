/**
 * What a newcomer tripped on, in real Chromium: the delivery log's filters survive a reload (they are in the address),
 * its Event filter lists kinds as the webhook form does, "Live · updated" names its time zone, a failed delivery's
 * result is not cut short, the portal names its instance once, "Webhook added" covers no control (the log's Redeliver
 * all failed was under it), and at 390 px the top bar and the log's date filters fit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  ADMIN_KEY,
  eventually,
  messagePayload,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import { launch, missingChromium, openPage, screenshot, signIn } from './browser.ts';

describe('session page: what a newcomer tripped on', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let browser: Browser;
  let ins: string;

  before(async () => {
    h = await startTestHerald({ RETRY_SCHEDULE: '0.1' });
    browser = await launch();
    ins = await h.createInstance('Front desk');
    // Port 9 on loopback: nothing listens, so each attempt is "Connection refused" and the delivery fails.
    const whk = await h.createWebhook(ins, {
      destination_url: 'http://127.0.0.1:9/hook',
      events: ['message'],
    });
    const published = await h.publish(ins, { event: 'message', payload: messagePayload() });
    await eventually(async () => {
      const r = await h.request('GET', `/instances/${ins}/deliveries?event_id=${published.body.event_id}`);
      return r.body.deliveries[0]?.status === 'failed' ? true : undefined;
    });
    assert.ok(whk);
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function sessionPage(width: number): Promise<Page> {
    const page = await openPage(browser, width);
    await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    await page.locator('.deliveries li').first().waitFor();
    return page;
  }

  it("keeps the log's filters in the address: a reload shows the same filtered log", async () => {
    const page = await sessionPage(1280);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByLabel('Event', { exact: true }).selectOption('message');
    await page.waitForFunction(
      () => location.search.includes('status=failed') && location.search.includes('event=message'),
    );
    await page.reload();
    await page.locator('.deliveries li').first().waitFor();
    assert.equal(await page.getByLabel('Status').inputValue(), 'failed');
    assert.equal(await page.getByLabel('Event', { exact: true }).inputValue(), 'message');
    assert.match(page.url(), /[?&]status=failed/);
    await page.close();
  });

  it('lists event kinds in the Event filter in the order and groups of the webhook form', async () => {
    const page = await sessionPage(1280);
    const filter = await page
      .getByLabel('Event', { exact: true })
      .evaluate((el) =>
        [...(el as HTMLSelectElement).querySelectorAll('optgroup')].map((g) => [
          g.label,
          [...g.querySelectorAll('option')].map((o) => o.value),
        ]),
      );
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const picker = await page
      .locator('.event-group')
      .evaluateAll((groups) =>
        groups.map((g) => [
          g.querySelector('.event-family')?.textContent,
          [...g.querySelectorAll('input')].map((i) => (i as HTMLInputElement).value),
        ]),
      );
    assert.deepEqual(filter, picker);
    await page.close();
  });

  it('says the time zone of "Live · updated", and shows a failed result whole at 1280 px', async () => {
    const page = await sessionPage(1280);
    const live = await page.locator('.live').innerText();
    const zone = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
      .formatToParts(new Date())
      .find((p) => p.type === 'timeZoneName')?.value;
    assert.match(live, new RegExp(`^Live · updated .+ ${zone}$`));
    const result = page.locator('.deliveries li').first().getByText('Connection refused').first();
    await result.waitFor();
    const cut = await result.evaluate((el) => el.scrollWidth > el.clientWidth);
    assert.equal(cut, false, '"Connection refused" is cut short');
    await screenshot(page, 'newcomer-1280');
    await page.close();
  });

  /** Adds a webhook through the form and waits for its card: the moment right after, "Webhook added" showing. */
  async function addWebhook(page: Page, url: string): Promise<void> {
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });
    await dialog.getByLabel('Destination URL').fill(url);
    await dialog.getByRole('checkbox', { name: 'message', exact: true }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('article').filter({ hasText: url }).waitFor();
  }

  /**
   * The controls in view under "Webhook added" (named by their text), read in one task of the page so its 4 s timer
   * cannot remove it halfway; null when it is already gone (the check then fails). With `scrollTo`, Redeliver all failed is first scrolled to the
   * top of the window, as a person scrolling down to the log finds it.
   */
  function underTheNotice(page: Page, scrollTo?: 'the button'): Promise<string[] | null> {
    return page.evaluate((scrollTo) => {
      const notice = [...document.querySelectorAll('.notice')].find((n) =>
        n.textContent?.startsWith('Webhook added'),
      );
      if (!notice) return null;
      if (scrollTo) {
        const button = [...document.querySelectorAll('button')].find((b) =>
          b.textContent?.startsWith('Redeliver all failed'),
        );
        button?.scrollIntoView({ block: 'start' });
      }
      const n = notice.getBoundingClientRect();
      const box = notice.parentElement as Element;
      // A control is under the notice when it is what shows beneath it: the middle of where they meet hits the
      // notice first and the control next (not the top bar, which a control scrolled under it is behind).
      const covered = (el: Element) => {
        const r = el.getBoundingClientRect();
        const [left, right] = [Math.max(r.left, n.left), Math.min(r.right, n.right)];
        const [top, bottom] = [Math.max(r.top, n.top), Math.min(r.bottom, n.bottom)];
        if (r.width <= 1 || r.height <= 1 || right - left <= 0 || bottom - top <= 0) return false;
        const beneath = document
          .elementsFromPoint((left + right) / 2, (top + bottom) / 2)
          .find((e) => !box.contains(e));
        return beneath !== undefined && (beneath === el || el.contains(beneath));
      };
      return [...document.querySelectorAll('button, a[href], input, select, textarea, summary')]
        .filter(covered)
        .map((el) => el.textContent?.trim() || el.getAttribute('placeholder') || el.tagName);
    }, scrollTo);
  }

  it('shows "Webhook added" over no control at 1280 px, whatever the window\'s height', async () => {
    const page = await sessionPage(1280);
    await addWebhook(page, 'http://127.0.0.1:9/second');
    assert.deepEqual(await underTheNotice(page), [], 'controls under "Webhook added", 900 px high');
    await screenshot(page, 'newcomer-toast-1280');
    // A window just tall enough to show the log's toolbar: Redeliver all failed sits at its bottom edge.
    const bottom = await page
      .getByRole('button', { name: /^Redeliver all failed/ })
      .evaluate((el) => el.getBoundingClientRect().bottom);
    await page.setViewportSize({ width: 1280, height: Math.ceil(bottom) + 8 });
    assert.deepEqual(
      await underTheNotice(page),
      [],
      'controls under "Webhook added", the log\'s toolbar at the bottom',
    );
    await screenshot(page, 'newcomer-toast-1280-short');
    assert.deepEqual(
      await underTheNotice(page, 'the button'),
      [],
      'controls under "Webhook added", the log\'s toolbar scrolled to the top',
    );
    await page.close();
  });

  it('shows "Webhook added" over no control at 390 px, right after adding', async () => {
    const page = await sessionPage(390);
    await addWebhook(page, 'http://127.0.0.1:9/third');
    assert.deepEqual(await underTheNotice(page), [], 'controls under "Webhook added"');
    await screenshot(page, 'newcomer-toast-390');
    await page.close();
  });

  it('fits the top bar and the date filters at 390 px: API reference on one line, the key shown, dates whole', async () => {
    const page = await sessionPage(390);
    const link = page.getByRole('banner').getByRole('link', { name: 'API reference' });
    const [height, line] = await link.evaluate((el) => [
      el.getBoundingClientRect().height,
      Number.parseFloat(getComputedStyle(el).lineHeight),
    ]);
    assert.ok(
      Math.abs(height - line) < 1,
      `"API reference" is ${height}px high, its line ${line}px: it wraps`,
    );
    const badge = await page.getByRole('banner').getByText('Admin key', { exact: true }).boundingBox();
    assert.ok(badge && badge.width > 0 && badge.height > 0, 'the key badge is not shown');
    assert.ok(
      badge.x >= 0 && badge.x + badge.width <= 390 && badge.y >= 0,
      'the key badge is outside the screen',
    );
    for (const label of [/^From \(/, /^To \(/]) {
      const input = page.getByLabel(label);
      const fit = await input.evaluate((el) => {
        const box = el.getBoundingClientRect();
        const form = (el.closest('form') as HTMLElement).getBoundingClientRect();
        // The width the input needs for its fields and picker: the same input, sized by its content alone.
        const free = el.cloneNode() as HTMLInputElement;
        free.style.cssText = 'position:absolute;visibility:hidden;width:auto;min-width:0;max-width:none';
        document.body.append(free);
        const needs = free.getBoundingClientRect().width;
        free.remove();
        return {
          cut: box.width + 0.5 < needs ? `${box.width}px wide, needs ${needs}px` : '',
          scrolls: el.scrollWidth > el.clientWidth,
          inForm: box.left >= form.left && box.right <= form.right,
          onScreen: box.left >= 0 && box.right <= window.innerWidth,
        };
      });
      assert.deepEqual(fit, { cut: '', scrolls: false, inForm: true, onScreen: true }, `${label} is clipped`);
    }
    const wide = await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0);
    assert.ok(wide <= 390, `the page scrolls sideways: ${wide}px wide`);
    await screenshot(page, 'newcomer-390');
    await page.close();
  });

  it('names the instance once on a portal link', async () => {
    const link = await h.request('POST', `/instances/${ins}/portal-links`, { body: {} });
    const page = await openPage(browser, 1280);
    await page.goto(link.body.url);
    await page.locator('.session-head h1').getByText('Front desk').waitFor();
    assert.equal(await page.locator('.session-head').getByText('Front desk', { exact: true }).count(), 1);
    await screenshot(page, 'newcomer-portal-1280');
    await page.close();
  });
});
