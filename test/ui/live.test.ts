/**
 * The session page while it stays open, in real Chromium: it follows the session and the log by itself without
 * losing the reader's place, pages the log, explains a Retry-After, previews media, fits a phone, and loads
 * nothing from anywhere but Herald.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_KEY, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium, screenshot, signIn } from './browser.ts';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

describe('session page: live, paged and portable', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let receiver: TestReceiver;
  let browser: Browser;
  let page: Page;
  let ins: string;
  const requested: string[] = [];

  before(async () => {
    h = await startTestHerald();
    receiver = await TestReceiver.start();
    browser = await launch();
    ins = await h.createInstance('Front desk');
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['message', 'message.ack'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    page.on('request', (r) => requested.push(r.url()));
    await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await h?.close();
  });

  /** Resolves after the page has refreshed itself (its "updated" time moved on) `times` times. */
  async function refreshed(times = 1): Promise<void> {
    const live = page.locator('.live');
    for (let i = 0; i < times; i++) {
      const before = await live.innerText();
      await page.waitForFunction((text) => document.querySelector('.live')?.textContent !== text, before);
    }
  }

  it('follows session.status events: status and phone change without a reload', async () => {
    const status = page.locator('[data-session-status]');
    await status.getByText('stopped').waitFor();
    await h.publish(ins, { event: 'session.status', payload: { status: 'SCAN_QR_CODE' } });
    await status.getByText('scan qr code').waitFor();
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING', phone: '4915112345678' } });
    await status.getByText('working').waitFor();
    await page.locator('[data-session-phone]').getByText('+4915112345678').waitFor();
  });

  it('pages the log newest first and keeps filters, page, open detail, scroll and form input across refreshes', async () => {
    for (let i = 0; i < 30; i++) {
      await h.publish(ins, { event: i % 3 ? 'message' : 'message.ack', payload: ackOrMessage(i) });
    }
    await receiver.waitFor(30);
    await page.getByLabel('Event', { exact: true }).selectOption('message');
    await page.getByLabel('Status', { exact: true }).selectOption('delivered');
    const rows = page.locator('li.delivery');
    await page.waitForFunction(() => document.querySelectorAll('li.delivery').length === 20);
    assert.equal(await rows.count(), 20, '20 message deliveries, one page');
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await page.waitForFunction(() => document.querySelectorAll('li.delivery').length === 25);
    // By webhook: a second one, which received nothing, shows an empty log; the first its deliveries again.
    await h.createWebhook(
      ins,
      { destination_url: 'https://other.example.com/hook', events: ['message'] },
      false,
    );
    const webhook = page.getByLabel('Webhook', { exact: true });
    await webhook.locator('option', { hasText: 'other.example.com/hook' }).waitFor({ state: 'attached' });
    await webhook.selectOption({ label: 'other.example.com/hook' });
    await page.getByText('No delivery matches these filters.').waitFor();
    await webhook.selectOption({ label: receiver.url.replace('http://', '') });
    await page.waitForFunction(() => document.querySelectorAll('li.delivery').length === 25);
    await page.getByRole('button', { name: 'Older →' }).click();
    await page.getByText('Page 2').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('li.delivery').length === 5);
    const oldest = (await h.request('GET', `/instances/${ins}/deliveries?limit=200`)).body.deliveries.at(-1);
    const row = page.locator(`li.delivery[data-delivery-id="${oldest.delivery_id}"]`);
    await row.getByRole('button', { name: /message/ }).click();
    await row.locator('.delivery-detail').getByText('HTTP 200').first().waitFor();
    await row.locator('pre[data-body="pretty"]').scrollIntoViewIfNeeded();
    const scroll = await page.evaluate(() => window.scrollY);
    assert.ok(scroll > 0);

    // Meanwhile: new deliveries arrive, and a person starts typing a new webhook.
    await h.publish(ins, { event: 'message', payload: messagePayload() });
    await refreshed(2);
    assert.equal(await page.evaluate(() => window.scrollY), scroll, 'scroll position kept');
    assert.equal(await row.locator('.delivery-detail').isVisible(), true, 'detail still open');
    assert.equal(await page.getByLabel('Status', { exact: true }).inputValue(), 'delivered');
    assert.equal(await page.getByText('Page 2').count(), 1);

    await page.getByRole('button', { name: 'Add webhook' }).click();
    const url = page.getByRole('dialog').getByLabel('Destination URL');
    await url.fill('https://half-typed.example');
    await refreshed(2);
    assert.equal(await url.inputValue(), 'https://half-typed.example', 'form input kept');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.getByText('Page 1').waitFor();
  });

  it('keeps what the reader looks at in place while new deliveries arrive above it', async () => {
    await page.getByLabel('Status', { exact: true }).selectOption('');
    const ids = (await h.request('GET', `/instances/${ins}/deliveries?limit=10`)).body.deliveries;
    const row = page.locator(`li.delivery[data-delivery-id="${ids[9].delivery_id}"]`);
    await row.getByRole('button', { name: /message/ }).click();
    await row.locator('pre[data-body="pretty"]').waitFor();
    await row.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const top = await row.evaluate((el) => el.getBoundingClientRect().top);
    for (let i = 0; i < 3; i++) await h.publish(ins, { event: 'message', payload: messagePayload() });
    const [newest] = (await h.request('GET', `/instances/${ins}/deliveries?limit=1`)).body.deliveries;
    await page
      .locator(`li.delivery[data-delivery-id="${newest.delivery_id}"]`)
      .waitFor({ state: 'attached' });
    const after = await row.evaluate((el) => el.getBoundingClientRect().top);
    assert.ok(Math.abs(after - top) <= 2, `the open delivery moved from ${top}px to ${after}px`);
    assert.equal(await row.locator('.delivery-detail').isVisible(), true);
    await row.getByRole('button', { name: /message/ }).click();
  });

  it("says when the next attempt is and that the receiver's Retry-After set it", async () => {
    let slowed = false;
    receiver.answer = (req) => {
      if (slowed || req.body?.payload?.body !== 'slow down') return { status: 200 };
      slowed = true;
      return { status: 429, headers: { 'retry-after': '1' } };
    };
    await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'slow down' }) });
    const [d] = (await h.request('GET', `/instances/${ins}/deliveries?limit=1`)).body.deliveries;
    const row = page.locator(`li.delivery[data-delivery-id="${d.delivery_id}"]`);
    await row.getByRole('button', { name: /message/ }).click();
    await row
      .getByText(/HTTP 429/)
      .first()
      .waitFor();
    await row.getByText(/\(receiver's Retry-After\)/).waitFor();
    await row.locator('xpath=self::*[@data-status="delivered"]').waitFor();
    await screenshot(page, '20-retry-after');
    await row.getByRole('button', { name: /message/ }).click();
  });

  it("previews Herald's own media links only; a url from elsewhere is shown, never fetched", async () => {
    // Herald's own: an upload, referenced by media_id, delivered with Herald's signed link.
    const upload = await h.request('POST', `/instances/${ins}/media`, {
      rawBody: PNG,
      contentType: 'image/png',
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    await h.publish(ins, {
      event: 'message',
      payload: messagePayload({ hasMedia: true, media: { media_id: upload.body.media_id }, body: 'own' }),
    });
    // Elsewhere: an address only the admin's network could reach (here a server on 127.0.0.1 that counts asks).
    let asked = 0;
    const intranet = createServer((_req, res) => {
      asked++;
      res.end();
    });
    await new Promise<void>((done) => intranet.listen(0, '127.0.0.1', done));
    const foreign = `http://127.0.0.1:${(intranet.address() as AddressInfo).port}/admin/secret.png`;
    await h.publish(ins, {
      event: 'message',
      payload: messagePayload({
        hasMedia: true,
        media: {
          status: 'ready',
          mimetype: 'image/png',
          media_id: 'med_0123456789abcdef0123',
          url: foreign,
          expires_at: '2099-01-01T00:00:00.000Z',
        },
        body: 'foreign',
      }),
    });
    try {
      const [other, own] = (await h.request('GET', `/instances/${ins}/deliveries?limit=2`)).body.deliveries;
      const ownRow = page.locator(`li.delivery[data-delivery-id="${own.delivery_id}"]`);
      await ownRow.getByRole('button', { name: /message/ }).click();
      await ownRow.getByRole('img', { name: 'Image sent with the message (image/png)' }).waitFor();
      await page.waitForFunction(
        (id) =>
          (document.querySelector(`[data-delivery-id="${id}"] .media img`) as HTMLImageElement)
            ?.naturalWidth > 0,
        own.delivery_id,
      );
      const src = await ownRow.locator('.media img').getAttribute('src');
      assert.match(
        src ?? '',
        new RegExp(`^/media/${upload.body.media_id}\\?expires=\\d+&sig=`),
        'loaded from this origin',
      );
      await screenshot(page, '21-media-preview');

      const otherRow = page.locator(`li.delivery[data-delivery-id="${other.delivery_id}"]`);
      await otherRow.getByRole('button', { name: /message/ }).click();
      await otherRow.getByText('stored elsewhere, not previewed').waitFor();
      assert.equal(await otherRow.locator('.media img, .media a').count(), 0, 'neither an image nor a link');
      assert.match(await otherRow.locator('.media').innerText(), new RegExp(foreign.replaceAll('.', '\\.')));
      // An <img> that slipped through would be refused by the page's CSP too.
      const csp = (await h.request('GET', '/', { key: null })).headers.get('content-security-policy') ?? '';
      assert.match(csp, /img-src 'self' data:(;|$)/);
      assert.doesNotMatch(csp, /http:|https:/);
      await refreshed(2);
      assert.equal(asked, 0, 'the foreign address was never asked');
    } finally {
      intranet.close();
    }
  });

  it('reads on a phone-width screen without sideways scrolling', async () => {
    const phone = await browser.newPage({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    phone.setDefaultTimeout(20_000);
    await signIn(phone, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    const first = phone.locator('li.delivery').first();
    await first.getByRole('button', { name: /message/ }).click();
    await first.locator('pre[data-body="pretty"]').waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
    await phone.screenshot({ path: 'test-output/screenshots/22-phone-top.png' });
    await screenshot(phone, '23-phone-full');
    const wider = () => phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await phone.getByRole('button', { name: 'Add webhook' }).click();
    await phone.getByRole('dialog', { name: 'Add webhook' }).waitFor();
    assert.ok((await wider()) <= 0, 'the webhook form fits');
    await phone.screenshot({ path: 'test-output/screenshots/24-phone-webhook-form.png' });
    await phone.keyboard.press('Escape');
    await phone.goto(h.url);
    await phone.getByRole('link', { name: 'Front desk' }).waitFor();
    assert.ok((await wider()) <= 0, 'the instance list fits');
    await phone.screenshot({ path: 'test-output/screenshots/25-phone-instances.png' });
    await phone.close();
  });

  it('loads nothing from outside Herald and sends a Content-Security-Policy', async () => {
    const origin = new URL(h.url).origin;
    assert.ok(requested.length > 10);
    assert.deepEqual(
      requested.filter((u) => new URL(u).origin !== origin),
      [],
    );
    const res = await fetch(`${h.url}/ui/instances/${ins}`);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.ok(!requested.some((u) => u.includes(ADMIN_KEY)), 'the key never appears in a URL');
  });
});

function ackOrMessage(i: number): Record<string, unknown> {
  if (i % 3) return messagePayload({ body: `message ${i}` });
  return { id: `m${i}`, from: 'a@c.us', to: 'b@c.us', ack: 3, ackName: 'READ' };
}
