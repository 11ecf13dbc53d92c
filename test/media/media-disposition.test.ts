/**
 * Media links are served from Herald's own origin, the session page's: a browser opening one shows pictures,
 * sound and video, and saves everything else (an uploaded HTML page or SVG is never opened as a page of Herald's).
 * A saved file is named `med_<id>.<extension of its type>` (the engine's own name: media-filename.test.ts), however
 * unsafe that name. Checked on the headers and in real Chromium.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { contentDisposition } from '../../src/media/disposition.ts';
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
        assert.equal(download.suggestedFilename(), `${new URL(html).pathname.split('/').pop()}.html`);
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

describe('the name a saved file gets', () => {
  const ID = 'med_01jd5q7h2k9x4m8n3p6r0t1v2w';
  const of = (mimetype: string, filename?: string) =>
    contentDisposition({ media_id: ID, mimetype, ...(filename === undefined ? {} : { filename }) });

  test('without the engine’s name: the media id and the extension its type implies, parameters ignored', () => {
    const cases: [string, string][] = [
      ['image/jpeg', `inline; filename="${ID}.jpg"`],
      ['IMAGE/JPEG', `inline; filename="${ID}.jpg"`],
      ['image/png', `inline; filename="${ID}.png"`],
      ['image/webp', `inline; filename="${ID}.webp"`],
      ['video/mp4', `inline; filename="${ID}.mp4"`],
      ['audio/ogg; codecs=opus', `inline; filename="${ID}.ogg"`],
      ['audio/mpeg', `inline; filename="${ID}.mp3"`],
      ['application/pdf', `attachment; filename="${ID}.pdf"`],
      [
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        `attachment; filename="${ID}.docx"`,
      ],
      ['text/vcard', `attachment; filename="${ID}.vcf"`],
      ['application/x-unheard-of', `attachment; filename="${ID}"`],
    ];
    for (const [type, expected] of cases) assert.equal(of(type), expected, type);
  });

  test('the engine’s name as given; outside plain ASCII also as RFC 5987 UTF-8, with an ASCII fallback', () => {
    assert.equal(of('application/pdf', 'invoice 1042.pdf'), 'attachment; filename="invoice 1042.pdf"');
    assert.equal(
      of('application/pdf', 'Rechnung März.pdf'),
      `attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
    );
    assert.equal(
      of('image/jpeg', '写真 (1).jpg'),
      `inline; filename="__ (1).jpg"; filename*=UTF-8''%E5%86%99%E7%9C%9F%20%281%29.jpg`,
    );
  });

  test('an unsafe name cannot break out of the header or the download folder', () => {
    const cases: [string, string][] = [
      ['say "hi".pdf', `attachment; filename="say _hi_.pdf"; filename*=UTF-8''say%20%22hi%22.pdf`],
      ['a\r\nSet-Cookie: x=1.pdf', 'attachment; filename="aSet-Cookie: x=1.pdf"'],
      ['../../etc/passwd', 'attachment; filename=".._.._etc_passwd"'],
      ['C:\\boot.ini', 'attachment; filename="C:_boot.ini"'],
      ['100%25.pdf', `attachment; filename="100_25.pdf"; filename*=UTF-8''100%2525.pdf`],
      // A right-to-left override would show "evil\u202Efdp.exe" as "evilexe.pdf".
      ['evil\u202Efdp.exe', 'attachment; filename="evilfdp.exe"'],
      ['\r\n\t ', `attachment; filename="${ID}.pdf"`],
      ['', `attachment; filename="${ID}.pdf"`],
      ['\ud800.pdf', `attachment; filename="_.pdf"; filename*=UTF-8''%EF%BF%BD.pdf`],
    ];
    for (const [name, expected] of cases) {
      const header = of('application/pdf', name);
      assert.equal(header, expected, JSON.stringify(name));
      assert.match(header, /^[\x20-\x7e]+$/, 'printable ASCII only');
    }
    // A long name is cut to 200 characters, its extension kept.
    assert.equal(of('application/pdf', 'x'.repeat(1000)), `attachment; filename="${'x'.repeat(200)}"`);
    assert.equal(
      of('application/pdf', `${'y'.repeat(300)}.pdf`),
      `attachment; filename="${'y'.repeat(196)}.pdf"`,
    );
  });
});
