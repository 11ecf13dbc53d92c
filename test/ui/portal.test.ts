/**
 * The portal in real Chromium, framed by a page of another site (embed.test, mapped to 127.0.0.1 by the browser's
 * host rules) with third-party cookies blocked, at desktop width and at 390 px: the customer sees its instance
 * alone, adds and enables a webhook, sends a test and redelivers a failure; a read-only link shows no write control;
 * an expired or revoked link says so; a page whose origin PORTAL_FRAME_ANCESTORS does not name cannot frame it, and
 * the admin UI cannot be framed at all.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium, openPage, screenshot } from './browser.ts';

/** A page of another site that frames `?src=`, as a platform's dashboard would. */
async function embeddingSite(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="margin:0;font-family:sans-serif"><h1 style="font-size:16px;margin:8px">Acme dashboard</h1>
<iframe title="Webhooks" src="${src.replaceAll('"', '&quot;')}" style="border:0;width:100%;height:1400px"></iframe>
</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

for (const width of [1280, 390]) {
  describe(`the portal framed by another site at ${width} px`, { skip: missingChromium() ?? false }, () => {
    let h: TestHerald;
    let site: { server: Server; port: number };
    let receiver: TestReceiver;
    let browser: Browser;
    let page: Page;
    let ins: string;
    const shot = (name: string) => screenshot(page, `portal-${width}-${name}`);

    before(async () => {
      site = await embeddingSite();
      h = await startTestHerald({
        PORTAL_FRAME_ANCESTORS: `http://embed.test:${site.port}`,
        PORTAL_TITLE: 'Acme webhooks',
        PORTAL_ACCENT: '#0a7c59',
        RETRY_SCHEDULE: '0.05',
      });
      receiver = await TestReceiver.start();
      ins = await h.createInstance('Customer line');
      await h.createInstance('Someone else');
      browser = await launch([
        '--host-resolver-rules=MAP embed.test 127.0.0.1, MAP other.test 127.0.0.1',
        '--test-third-party-cookie-phaseout',
      ]);
      page = await openPage(browser, width);
    });
    after(async () => {
      await browser?.close();
      await receiver?.close();
      await h?.close();
      site?.server.close();
    });

    async function linkUrl(body: Record<string, unknown> = {}): Promise<{ url: string; link_id: string }> {
      const res = await h.request('POST', `/instances/${ins}/portal-links`, { body });
      assert.equal(res.status, 201);
      // The link names PUBLIC_URL; here that is the address Herald listens on.
      return { url: res.body.url, link_id: res.body.link_id };
    }
    /** Opens the embedding page of `host` framing `src`; the portal's frame once it has loaded. */
    async function framed(src: string, host = 'embed.test'): Promise<Frame> {
      await page.goto(`http://${host}:${site.port}/?src=${encodeURIComponent(src)}`);
      const handle = await page.locator('iframe').elementHandle();
      const frame = await handle?.contentFrame();
      assert.ok(frame);
      return frame;
    }
    const portal = (frame: Frame) => frame.locator('main');

    it('shows its instance alone, branded, and needs no cookie while third-party cookies are blocked', async () => {
      const { url } = await linkUrl();
      assert.match(url, /\/portal#hpl_/);
      const frame = await framed(url);
      await frame.getByRole('heading', { name: 'Customer line' }).waitFor();
      assert.equal(await frame.title(), 'Customer line · Acme webhooks');
      assert.equal(await frame.locator('.brand').innerText(), 'Acme webhooks');
      const text = await portal(frame).innerText();
      assert.doesNotMatch(text, /Someone else|Instance keys|Delete instance/);
      assert.equal(await frame.getByRole('link', { name: 'Instances' }).count(), 0);
      // The browser blocks third-party cookies (the phase-out flag), and this frame is cross-site and not a secure
      // context besides: no cookie it sets is kept, so the page works only if it needs none.
      const cookieKept = await frame.evaluate(() => {
        // biome-ignore lint/suspicious/noDocumentCookie: the probe is the very thing blocked
        document.cookie = 'probe=1; SameSite=None; Secure';
        return document.cookie.includes('probe=1');
      });
      assert.equal(cookieKept, false, 'no cookie can be kept in this frame');
      assert.deepEqual(await page.context().cookies(), [], 'the portal set no cookie');
      await shot('01-framed');
    });

    it('adds and enables a webhook, sends a test and redelivers a failed delivery', async () => {
      const { url } = await linkUrl();
      const frame = await framed(url);
      await frame.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = frame.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByLabel('Destination URL').fill(receiver.url);
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      const card = frame.getByRole('article', {
        name: `Webhook ${receiver.url.replace(/^https?:\/\//, '')}`,
      });
      await card.getByRole('button', { name: 'Enable' }).click();
      await card.getByRole('button', { name: 'Disable' }).waitFor();

      receiver.answer = () => ({ status: 500 });
      await card.getByRole('button', { name: 'Send test' }).click();
      const test = frame.getByRole('dialog', { name: 'Send a test delivery' });
      await test.getByRole('button', { name: 'Send test' }).click();
      await receiver.waitFor(2); // the attempt and its one retry
      const failed = await eventually(async () => {
        const d = (await h.request('GET', `/instances/${ins}/deliveries?status=failed`)).body.deliveries[0];
        return d;
      });
      receiver.answer = () => ({ status: 200 });
      const row = frame.locator(`li.delivery[data-delivery-id="${failed.delivery_id}"]`);
      await row.locator('xpath=self::*[@data-status="failed"]').waitFor();
      await row.getByRole('button', { name: 'Redeliver' }).click();
      await row.locator('xpath=self::*[@data-status="delivered"]').waitFor();
      assert.equal(receiver.received.length, 3);
      await shot('02-redelivered');
      const overflow = await frame.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `the portal is ${overflow}px wider than its frame`);
    });

    it('a read-only link shows no control that writes, and its API writes are 403s', async () => {
      await h.publish(ins, { event: 'message', payload: messagePayload() });
      const { url } = await linkUrl({ read_only: true });
      const frame = await framed(url);
      await frame.getByRole('heading', { name: 'Customer line' }).waitFor();
      await frame.locator('body[data-read-only]').waitFor({ state: 'attached' });
      await frame.getByText('View only').waitFor(); // at every width
      await frame.locator('li.delivery').first().waitFor();
      for (const name of ['Add webhook', 'Edit', 'Send test', 'Disable', 'Delete', 'Redeliver']) {
        assert.equal(await frame.getByRole('button', { name, exact: true }).count(), 0, name);
      }
      const token = new URL(url).hash.slice(1);
      const status = await frame.evaluate(
        async ([path, key]) =>
          (await fetch(path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{}' }))
            .status,
        [`/instances/${ins}/webhooks`, token] as const,
      );
      assert.equal(status, 403);
      await shot('03-read-only');
    });

    it('an expired or revoked link says that it no longer works', async () => {
      const revoked = await linkUrl();
      assert.equal(
        (await h.request('DELETE', `/instances/${ins}/portal-links/${revoked.link_id}`)).status,
        200,
      );
      const frame = await framed(revoked.url);
      await frame.getByRole('heading', { name: 'This link no longer works' }).waitFor();
      assert.match(await portal(frame).innerText(), /expired or was revoked/);
      await shot('04-revoked');
    });

    it('refuses to be framed by a site PORTAL_FRAME_ANCESTORS does not name; the admin UI by any', async () => {
      const { url } = await linkUrl();
      for (const [src, host] of [
        [url, 'other.test'],
        [`${h.url}/`, 'embed.test'],
      ] as const) {
        const frame = await framed(src, host);
        await eventually(
          async () => (frame.url().startsWith('chrome-error:') ? true : undefined),
          10_000,
          src,
        );
        assert.equal(await frame.locator('main').count(), 0, `${src} in ${host}`);
      }
    });
  });
}
