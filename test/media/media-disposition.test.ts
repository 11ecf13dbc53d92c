/**
 * Media links are served from Herald's own origin, the session page's: a browser opening one shows pictures,
 * sound and video, and saves everything else (an uploaded HTML page or SVG is never opened as a page of Herald's).
 * Checked on the headers and in real Chromium.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium } from '../ui/browser.ts';
import { pngImage, upload } from './files.ts';

let h: TestHerald;
let receiver: TestReceiver;
let ins: string;

before(async () => {
  h = await startTestHerald();
  receiver = await TestReceiver.start();
  ins = await h.createInstance();
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
});
after(async () => {
  await receiver.close();
  await h.close();
});

/** Uploads `bytes` as `type` and returns the signed link a receiver is delivered. */
async function linkFor(bytes: Uint8Array, type: string): Promise<string> {
  const up = await upload(h.url, ins, bytes, type);
  assert.equal(up.status, 201, JSON.stringify(up.body));
  const seen = receiver.received.length;
  const sent = await h.publish(ins, {
    event: 'message',
    payload: messagePayload({ hasMedia: true, media: { media_id: up.body.media_id } }),
  });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  const got = await receiver.waitFor(seen + 1);
  return got[seen].body.payload.media.url;
}

const HTML = Buffer.from(
  '<!doctype html><title>x</title><script>document.title = "ran"</script><p>uploaded page',
);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

describe('how a media link is opened', () => {
  test('pictures, sound and video are shown; HTML, SVG, PDF and unknown types are downloads', async () => {
    const cases: [Uint8Array, string, 'inline' | 'attachment'][] = [
      [pngImage(8), 'image/png', 'inline'],
      [Buffer.from('jpeg'), 'image/jpeg', 'inline'],
      [Buffer.from('OggS'), 'audio/ogg; codecs=opus', 'inline'],
      [Buffer.from('mp4'), 'video/mp4', 'inline'],
      [HTML, 'text/html', 'attachment'],
      [HTML, 'text/html; charset=utf-8', 'attachment'],
      [SVG, 'image/svg+xml', 'attachment'],
      [Buffer.from('%PDF-1.4'), 'application/pdf', 'attachment'],
      [Buffer.from('x'), 'application/octet-stream', 'attachment'],
      [Buffer.from('<x/>'), 'text/xml', 'attachment'],
    ];
    for (const [bytes, type, expected] of cases) {
      const link = await linkFor(bytes, type);
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(link, { method });
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        const disposition = res.headers.get('content-disposition') ?? '';
        assert.equal(disposition.split(';')[0], expected, `${method} ${type}: ${disposition}`);
        // The content itself stays inert wherever it ends up.
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox");
        assert.equal(res.headers.get('content-type'), type);
      }
    }
  });

  describe('in Chromium', { skip: missingChromium() ?? false }, () => {
    let browser: Browser;
    before(async () => {
      browser = await launch();
    });
    after(() => browser?.close());

    test('an uploaded HTML page is saved, not opened; an image is shown', async () => {
      const context = await browser.newContext({ acceptDownloads: true });
      try {
        const page = await context.newPage();
        const html = await linkFor(HTML, 'text/html');
        const [download] = await Promise.all([
          page.waitForEvent('download', { timeout: 10_000 }),
          page.goto(html).catch(() => {}), // Chromium aborts a navigation that becomes a download
        ]);
        assert.equal(download.suggestedFilename(), new URL(html).pathname.split('/').pop());
        assert.notEqual(await page.title(), 'ran');

        const png = await linkFor(pngImage(8), 'image/png');
        const shown = await page.goto(png);
        assert.equal(shown?.status(), 200);
        const width = await page.evaluate(() => document.querySelector('img')?.naturalWidth);
        assert.equal(width, 8, 'the image is displayed by the browser');
      } finally {
        await context.close();
      }
    });
  });
});
