/**
 * The session page's delivery detail says why the engine's media was not stored, in real Chromium: WAHA's file
 * server (a real one on 127.0.0.1) answers 401 because Herald sends no key; a message without media says nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium, screenshot, signIn } from './browser.ts';

describe('session page: why engine media was not stored', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let files: EngineFiles;
  let receiver: TestReceiver;
  let browser: Browser;
  let page: Page;
  let ins: string;

  before(async () => {
    files = await EngineFiles.start();
    h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: files.prefix });
    receiver = await TestReceiver.start();
    browser = await launch();
    ins = await h.createInstance('Front desk');
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await files?.close();
    await h?.close();
  });

  /** Posts a WAHA message and opens its delivery in the log; returns the opened detail. */
  async function opened(media: unknown) {
    const payload = {
      id: `false_491701234567@c.us_3EB0${Date.now()}`,
      from: '491701234567@c.us',
      fromMe: false,
      body: 'see attached',
      hasMedia: media !== null,
      ...(media === null ? {} : { media }),
    };
    const res = await postWaha(h.url, ins, wahaBody('message', payload));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const list = await h.request('GET', `/instances/${ins}/deliveries?event_id=${res.body.event_id}`);
    const row = page.locator(`li.delivery[data-delivery-id="${list.body.deliveries[0].delivery_id}"]`);
    await row.getByText('delivered').waitFor();
    await row.getByRole('button', { name: /message/ }).click();
    const detail = row.locator('.delivery-detail');
    await detail.getByText('HTTP 200').first().waitFor();
    return detail;
  }

  it('shows the reason beside the state, in words', async () => {
    const url = files.serve('true_x.jpeg?session=default', { status: 401 });
    const detail = await opened({ url, mimetype: 'image/jpeg', filename: null, error: null });
    const shown = detail.locator('[data-media-failure]');
    assert.equal(
      await shown.innerText(),
      'Not stored: the engine answered 401: set ENGINE_MEDIA_HEADERS, e.g. X-Api-Key: <WAHA_API_KEY>',
    );
    assert.equal(await detail.locator('dt', { hasText: 'Media' }).count(), 1);
    await screenshot(page, 'media-failure');
  });

  it('says nothing of media for a message without any', async () => {
    const detail = await opened(null);
    assert.equal(await detail.locator('[data-media-failure]').count(), 0);
    assert.equal(await detail.locator('dt', { hasText: 'Media' }).count(), 0);
  });
});
