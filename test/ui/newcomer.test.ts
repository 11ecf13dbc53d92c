/**
 * What a newcomer tripped on, in real Chromium at 1280 px: the delivery log's filters survive a reload (they are in
 * the address), its Event filter lists kinds as the webhook form does, "Live · updated" names its time zone, a failed
 * delivery's result is not cut short, and the portal names its instance once.
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
