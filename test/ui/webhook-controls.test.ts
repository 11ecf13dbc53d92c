/**
 * The webhook controls on the session page, in real Chromium at desktop width and at 390 px: filter, headers and
 * rate limit in the form (every refusal shown at its field), header values masked once saved, a secret rotation
 * whose deliveries then carry both signatures, and the health of each webhook on its card after Send test.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { sign } from '../../src/domain/signature.ts';
import { ADMIN_KEY, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import {
  assertNoSidewaysScroll,
  errorOf,
  launch,
  missingChromium,
  openPage,
  screenshot,
  signIn,
} from './browser.ts';

for (const width of [1280, 390]) {
  describe(`webhook controls on the session page at ${width} px`, {
    skip: missingChromium() ?? false,
  }, () => {
    let h: TestHerald;
    let receiver: TestReceiver;
    let browser: Browser;
    let page: Page;
    let ins: string;
    const shot = (name: string) => screenshot(page, `controls-${width}-${name}`);

    before(async () => {
      h = await startTestHerald({ RETRY_SCHEDULE: '0.05' });
      receiver = await TestReceiver.start();
      browser = await launch();
      ins = await h.createInstance('Support line');
      page = await openPage(browser, width);
      await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    });
    after(async () => {
      await browser?.close();
      await receiver?.close();
      await h?.close();
    });

    const card = () =>
      page.getByRole('article', { name: `Webhook ${receiver.url.replace(/^https?:\/\//, '')}` });
    const webhook = async () => (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks[0];
    const noSidewaysScroll = () => assertNoSidewaysScroll(page);

    it('adds a webhook with a filter, a header and a rate limit, refusing each bad value at its field', async () => {
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByLabel('Destination URL').fill(receiver.url);
      await dialog.getByText('Filter, headers and rate limit').click();
      const filter = dialog.getByLabel('Filter (optional)');
      const rate = dialog.getByLabel('Deliveries per second at most (optional)');

      await filter.fill('{ "payload.fromMe": false,');
      await dialog.getByRole('button', { name: 'Save' }).click();
      assert.match(await errorOf(filter), /is not valid JSON/);

      await filter.fill('{ "payload.from": { "$regex": "^49" } }');
      await dialog.getByRole('button', { name: 'Add header' }).click();
      await dialog.getByLabel('Header 1 name').fill('Host');
      await dialog.getByLabel('Header 1 value').fill('evil.example');
      await dialog.getByRole('button', { name: 'Save' }).click();
      // Both come back from the API in one answer, each at its own field.
      assert.match(await errorOf(filter), /filter.payload.from: has "\$regex", which is not an operator/);
      assert.match(await errorOf(dialog.getByLabel('Header 1 name')), /headers\.Host: .*cannot be replaced/);
      await shot('01-refused');
      await noSidewaysScroll();

      await filter.fill('{ "payload.fromMe": false }');
      await dialog.getByLabel('Header 1 name').fill('Authorization');
      await dialog.getByLabel('Header 1 value').fill('Bearer rcv_token_1');
      for (const bad of ['0', 'fast']) {
        await rate.fill(bad);
        await dialog.getByRole('button', { name: 'Save' }).click();
        assert.match(await errorOf(rate), /per_second/, bad);
      }
      await rate.fill('5');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      const saved = await webhook();
      assert.deepEqual(saved.filter, { 'payload.fromMe': false });
      assert.deepEqual(saved.headers, { Authorization: '****' }, 'the value is write-only');
      assert.deepEqual(saved.rate_limit, { per_second: 5 });
      await card()
        .getByText(/Filtered · 1 own header · At most 5\/s/)
        .waitFor();
    });

    it('shows a saved header by its name alone, and keeps its value on a save that does not touch it', async () => {
      await card().getByRole('button', { name: 'Edit' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
      assert.equal(await dialog.getByLabel('Header 1 name').inputValue(), 'Authorization');
      const value = dialog.getByLabel('Header 1 value');
      assert.equal(await value.inputValue(), '', 'the saved value never reaches the page');
      assert.match((await value.getAttribute('placeholder')) ?? '', /saved/);
      assert.ok(!(await page.content()).includes('rcv_token_1'), 'nowhere in the page');
      await value.scrollIntoViewIfNeeded();
      await shot('01b-saved-header');
      await noSidewaysScroll();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.deepEqual((await webhook()).headers, { Authorization: '****' });
      // The next test's delivery carries the value saved in the first one: the save above kept it.
    });

    it('Send test delivers with the header, and the card shows the health that follows', async () => {
      const hook = await webhook();
      await h.request('POST', `/instances/${ins}/webhooks/${hook.webhook_id}/enabled`, {
        body: { enabled: true },
      });
      await card().getByRole('button', { name: 'Send test' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send a test delivery' });
      await dialog.getByRole('button', { name: 'Send test' }).click();
      const [got] = await receiver.waitFor(1);
      assert.equal(got.headers.authorization, 'Bearer rcv_token_1');
      const health = card().getByLabel('Health');
      await health.getByText('1 of 1 delivered in 24 h').waitFor();
      assert.match(await health.innerText(), /last delivery [A-Z][a-z]{2} \d+, \d\d:\d\d:\d\d/);
      await shot('02-health');
      await noSidewaysScroll();
    });

    it('rotates the secret from the form: both signatures arrive until the grace ends', async () => {
      const hook = await webhook();
      await h.request('PATCH', `/instances/${ins}/webhooks/${hook.webhook_id}`, {
        body: { ...pick(hook), client_sign_secret: 'whsec_first' },
      });
      await card()
        .getByText(/^Signed · /)
        .waitFor();
      await card().getByRole('button', { name: 'Edit' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
      await dialog.getByLabel(/^Rotate: a new secret/).check();
      await dialog.getByRole('button', { name: 'Save' }).click();
      assert.match(
        await errorOf(dialog.getByLabel('New secret', { exact: true })),
        /Enter a secret, press Generate/,
      );
      await dialog.getByRole('button', { name: 'Generate' }).click();
      const secret = await dialog.getByLabel('New secret', { exact: true }).inputValue();
      await dialog.getByLabel('The current secret keeps signing for').selectOption({ label: '1 hour' });
      await shot('03-rotate');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await card()
        .getByText(/Rotating secret until/)
        .waitFor();
      const rotated = await webhook();
      const graceLeft = Date.parse(rotated.previous_secret_until) - Date.now();
      assert.ok(graceLeft > 3500_000 && graceLeft <= 3600_000, `grace of about an hour, got ${graceLeft} ms`);

      await h.publish(ins, { event: 'message', payload: messagePayload() });
      const [, second] = await receiver.waitFor(2);
      const signatures = String(second.headers['x-service-signature']).split(' ');
      assert.equal(signatures.length, 2, 'new and old signature during the grace');
      const ts = String(second.headers['x-service-timestamp']);
      assert.deepEqual(signatures, [
        sign(secret, ts, second.rawBody),
        sign('whsec_first', ts, second.rawBody),
      ]);
    });

    it('turns on Standard Webhooks with a generated secret: the delivery verifies with the standardwebhooks library', async () => {
      await card().getByRole('button', { name: 'Edit' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
      await dialog.getByRole('checkbox', { name: 'Standard Webhooks headers too' }).check();
      await dialog.getByLabel('Replace at once').check();
      await dialog.getByRole('button', { name: 'Generate' }).click();
      const secret = await dialog.getByLabel('New secret', { exact: true }).inputValue();
      await shot('04-standard-webhooks');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await card()
        .getByText(/Signed · Standard Webhooks · /)
        .waitFor();
      assert.equal((await webhook()).standard_webhooks, true);
      const before = receiver.received.length;
      await h.publish(ins, { event: 'message', payload: messagePayload() });
      const [got] = (await receiver.waitFor(before + 1)).slice(before);
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      assert.doesNotThrow(() => new StandardWebhook(secret).verify(got.rawBody.toString('utf8'), headers));
    });
  });
}

/** The configuration fields of a webhook view, as a PATCH body. */
function pick(w: Record<string, unknown>) {
  const { destination_url, events, ignore_status, filter, headers, rate_limit } = w;
  return { destination_url, events, ignore_status, filter, headers, rate_limit };
}
