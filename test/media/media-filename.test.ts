/**
 * A file Herald downloaded from the engine is saved under the engine's name for it (WAHA's `filename`, sent for
 * documents), else as `med_<id>.<extension of its type>`: checked on the headers of the real media link, and in real
 * Chromium, which must read a name outside ASCII back exactly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium } from '../ui/browser.ts';
import { pngImage } from './files.ts';

let h: TestHerald;
let files: EngineFiles;
let receiver: TestReceiver;
let ins: string;

before(async () => {
  files = await EngineFiles.start();
  h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: files.prefix });
  receiver = await TestReceiver.start();
  ins = await h.createInstance();
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
});
after(async () => {
  await receiver.close();
  await files.close();
  await h.close();
});

let n = 0;
/** Posts a WAHA message whose media the file server holds; returns the ready media object delivered. */
async function delivered(bytes: Buffer, mimetype: string, filename: string | null) {
  n++;
  const url = files.serve(`file-${n}`, { bytes, type: mimetype });
  const payload = {
    id: `false_491701234567@c.us_3EB0${String(n).padStart(16, '0')}`,
    from: '491701234567@c.us',
    fromMe: false,
    body: '',
    hasMedia: true,
    media: { url, mimetype, filename, error: null },
  };
  const seen = receiver.received.length;
  const res = await postWaha(h.url, ins, wahaBody('message', payload));
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const got = await receiver.waitFor(seen + 1);
  const media = got[seen].body.payload.media;
  assert.equal(media.status, 'ready', JSON.stringify(media));
  return media as { url: string; media_id: string; filename?: string };
}

async function disposition(link: string): Promise<string> {
  const res = await fetch(link);
  await res.arrayBuffer();
  assert.equal(res.status, 200);
  return res.headers.get('content-disposition') ?? '';
}

describe('the name of a file from the engine', () => {
  test('a document keeps the engine’s filename; the delivered object is unchanged', async () => {
    const media = await delivered(Buffer.from('%PDF-1.4'), 'application/pdf', 'invoice 1042.pdf');
    assert.equal(media.filename, 'invoice 1042.pdf');
    assert.equal(await disposition(media.url), 'attachment; filename="invoice 1042.pdf"');
  });

  test('without one: the media id and the extension of its type (a voice note is .ogg)', async () => {
    const photo = await delivered(pngImage(8), 'image/jpeg', null);
    assert.equal(await disposition(photo.url), `inline; filename="${photo.media_id}.jpg"`);
    const voice = await delivered(Buffer.from('OggS'), 'audio/ogg; codecs=opus', null);
    assert.equal(await disposition(voice.url), `inline; filename="${voice.media_id}.ogg"`);
  });

  test('an unsafe name: no header injection, no path, the rest of the name kept', async () => {
    const media = await delivered(Buffer.from('x'), 'application/pdf', '../a"\r\nX-Evil: 1.pdf');
    assert.equal(
      await disposition(media.url),
      `attachment; filename=".._a_X-Evil: 1.pdf"; filename*=UTF-8''.._a%22X-Evil%3A%201.pdf`,
    );
    const res = await fetch(media.url);
    assert.equal(res.headers.get('x-evil'), null);
  });

  test('in Chromium, a name outside ASCII is saved exactly', {
    skip: missingChromium() ?? false,
  }, async () => {
    const media = await delivered(
      Buffer.from('%PDF-1.4'),
      'application/pdf',
      'Rechnung März 2026 – 写真.pdf',
    );
    const browser = await launch();
    try {
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: 10_000 }),
        page.goto(media.url).catch(() => {}), // Chromium aborts a navigation that becomes a download
      ]);
      assert.equal(download.suggestedFilename(), 'Rechnung März 2026 – 写真.pdf');
    } finally {
      await browser.close();
    }
  });
});
