/**
 * The session page's tools beyond the log, in real Chromium at desktop width and at 390 px: Send test per webhook,
 * instance keys (list, create shown once with a copy button, revoke), deleting the instance, finding a delivery by
 * event id or by dates, times with their day and zone, the instance's name in the breadcrumb, the reason a button
 * is disabled in text, the stories setting in words, and a failed delivery's reason in full.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Lookup } from '../../src/net/destination.ts';
import {
  ADMIN_KEY,
  eventually,
  messagePayload,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { assertNoSidewaysScroll, launch, missingChromium, openPage, screenshot, signIn } from './browser.ts';

/** The first answer for rebind.test (when the webhook is saved) is public, every later one private. */
let asked = 0;
const rebinding: Lookup = async (host) =>
  host === 'rebind.test' && asked++ > 0 ? ['10.0.0.7'] : ['93.184.215.14'];

for (const width of [1280, 390]) {
  describe(`session page tools at ${width} px`, { skip: missingChromium() ?? false }, () => {
    let h: TestHerald;
    let receiver: TestReceiver;
    let browser: Browser;
    let page: Page;
    let ins: string;
    let hook: string;
    const shot = (name: string) => screenshot(page, `tools-${width}-${name}`);

    before(async () => {
      asked = 0;
      h = await startTestHerald(
        {
          ALLOW_PRIVATE_DESTINATIONS: 'false',
          ALLOWED_DESTINATION_CIDRS: '127.0.0.1',
          RETRY_SCHEDULE: '0.05',
        },
        { resolve: rebinding },
      );
      receiver = await TestReceiver.start();
      browser = await launch();
      ins = await h.createInstance('Support line');
      hook = await h.createWebhook(ins, {
        destination_url: receiver.url,
        events: ['message', 'message.ack'],
      });
      await h.createWebhook(ins, { destination_url: 'http://rebind.test/hook', events: ['session.status'] });
      page = await openPage(browser, width, { permissions: ['clipboard-read', 'clipboard-write'] });
      await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    });
    after(async () => {
      await browser?.close();
      await receiver?.close();
      await h?.close();
    });

    const card = (url: string) =>
      page.getByRole('article', { name: `Webhook ${url.replace(/^https?:\/\//, '')}` });
    const row = (id: string) => page.locator(`li.delivery[data-delivery-id="${id}"]`);
    const noSidewaysScroll = () => assertNoSidewaysScroll(page);

    it('names the instance in the breadcrumb and the stories setting in words', async () => {
      const crumb = page.getByRole('navigation', { name: 'Breadcrumb' });
      await crumb.getByText('Support line').waitFor();
      assert.equal((await crumb.innerText()).replace(/\s+/g, ' ').trim(), 'Instances / Support line');
      assert.match(await card(receiver.url).innerText(), /Skips stories \(status@broadcast\)/);
      await card(receiver.url).getByRole('button', { name: 'Edit' }).click();
      const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
      assert.equal(
        await dialog.getByRole('checkbox', { name: 'Skip stories (status@broadcast)' }).isChecked(),
        true,
      );
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    });

    it('sends a test delivery from a webhook; a disabled one says in text why it cannot', async () => {
      const enabled = card(receiver.url);
      await enabled.getByRole('button', { name: 'Send test' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send a test delivery' });
      await dialog.getByLabel('Event kind').selectOption('message.ack');
      await dialog.getByRole('button', { name: 'Send test' }).click();
      await page.getByText(/Test message\.ack queued \(dlv_/).waitFor();
      const [got] = await receiver.waitFor(1);
      assert.equal(got.body.event, 'message.ack');
      const test = (await h.request('GET', `/instances/${ins}/deliveries?event=message.ack`)).body
        .deliveries[0];
      await row(test.delivery_id).locator('xpath=self::*[@data-status="delivered"]').waitFor();
      await shot('01-test-sent');

      await h.request('POST', `/instances/${ins}/webhooks/${hook}/enabled`, { body: { enabled: false } });
      const send = enabled.getByRole('button', { name: 'Send test' });
      await eventually(
        async () => ((await send.isDisabled()) ? true : undefined),
        10_000,
        'Send test disabled',
      );
      const why = enabled.getByText('Send test needs the webhook enabled');
      assert.ok(await why.isVisible(), 'the reason is on screen, not in a tooltip');
      assert.equal(await send.getAttribute('aria-describedby'), await why.getAttribute('id'));
      await h.request('POST', `/instances/${ins}/webhooks/${hook}/enabled`, { body: { enabled: true } });
    });

    it('shows a failed delivery’s reason whole, and why Redeliver is disabled', async () => {
      const published = await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
      const failed = await eventually(async () => {
        const r = await h.request('GET', `/instances/${ins}/deliveries?event_id=${published.body.event_id}`);
        const d = r.body.deliveries[0];
        return d?.status === 'failed' ? d : undefined;
      });
      // Refused at connect time: failed at once, with that reason, not after the whole retry schedule.
      assert.deepEqual(
        [failed.failure_reason, failed.attempt_count, failed.last_error],
        ['destination_not_allowed', 1, 'destination_not_allowed'],
      );
      const line = row(failed.delivery_id).locator('.failure');
      await line.getByText('(destination_not_allowed)').waitFor();
      const text = await line.innerText();
      assert.equal(
        text.replace(/\s+/g, ' '),
        'Failed: the destination is not allowed: its address is not globally reachable, so nothing was sent. ' +
          'Change the webhook’s URL, or allow the address with ALLOW_PRIVATE_DESTINATIONS or ' +
          'ALLOWED_DESTINATION_CIDRS. Last result: Destination not allowed (destination_not_allowed).',
      );
      // Whole: the line is cut neither by an ellipsis nor by its box (it holds all of its text).
      const whole = (el: Element) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight;
      assert.ok(await line.evaluate(whole));
      // The detail's state says the same, whole, above its one attempt.
      await row(failed.delivery_id)
        .getByRole('button', { name: /session\.status/ })
        .click();
      const detail = row(failed.delivery_id).locator('.delivery-detail');
      const state = detail.locator('dd', { hasText: 'Failed: the destination is not allowed' });
      await state.waitFor();
      assert.equal((await state.innerText()).replace(/\s+/g, ' '), text.replace(/\s+/g, ' '));
      assert.ok(await state.evaluate(whole));
      assert.equal(await detail.locator('table.attempts tbody tr').count(), 1);
      await row(failed.delivery_id)
        .getByRole('button', { name: /session\.status/ })
        .click(); // closed again

      const rebindHook = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks.find(
        (w: any) => w.destination_url === 'http://rebind.test/hook',
      );
      await h.request('POST', `/instances/${ins}/webhooks/${rebindHook.webhook_id}/enabled`, {
        body: { enabled: false },
      });
      const redeliver = row(failed.delivery_id).getByRole('button', { name: 'Redeliver' });
      await eventually(
        async () => ((await redeliver.isDisabled()) ? true : undefined),
        10_000,
        'Redeliver disabled',
      );
      assert.ok(await row(failed.delivery_id).getByText('Enable the webhook to redeliver').isVisible());
      const all = page.getByRole('button', { name: /Redeliver all failed/ });
      assert.equal(await all.isDisabled(), true);
      assert.ok(
        await page
          .getByText('The failed deliveries belong to disabled webhooks: enable them first')
          .isVisible(),
      );
      await shot('02-failure-reasons');
      await noSidewaysScroll();
    });

    it('shows times with their day and time zone', async () => {
      const first = page.locator('li.delivery time').first();
      const shown = await first.innerText();
      const zone = await page.evaluate(
        () =>
          new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
            .formatToParts(new Date())
            .find((p) => p.type === 'timeZoneName')?.value,
      );
      assert.ok(zone && shown.includes(zone), `"${shown}" names the zone ${zone}`);
      const day = await page.evaluate(
        (iso) => new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' }).format(new Date(iso)),
        (await first.getAttribute('datetime')) ?? '',
      );
      assert.ok(shown.includes(day), `"${shown}" names the day ${day}`);
    });

    it('finds the deliveries of one event id, and of a date range', async () => {
      const target = await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'find me' }) });
      await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'not me' }) });
      const target_id = target.body.event_id as string;
      await page.getByLabel('Event id').fill(target_id);
      await page.getByLabel('Event id').press('Enter');
      await eventually(
        async () => {
          const events = await page
            .locator('li.delivery')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery-id')));
          const wanted = (await h.request('GET', `/instances/${ins}/deliveries?event_id=${target_id}`)).body
            .deliveries;
          return events.length === 1 && events[0] === wanted[0].delivery_id ? true : undefined;
        },
        10_000,
        'only the event searched for',
      );
      await shot('03-by-event-id');
      await page.getByLabel('Event id').fill('');
      await page.getByLabel('Event id').press('Enter');

      // From tomorrow: nothing; from yesterday: everything.
      const local = (offsetDays: number) => {
        const d = new Date(Date.now() + offsetDays * 86_400_000);
        const pad = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:00`;
      };
      const from = page.getByLabel(/^From/);
      await from.fill(local(1));
      await from.dispatchEvent('change');
      await page.getByText('No delivery matches these filters.').waitFor();
      await from.fill(local(-1));
      await from.dispatchEvent('change');
      const total = (await h.request('GET', `/instances/${ins}/deliveries`)).body.deliveries.length;
      await eventually(async () =>
        (await page.locator('li.delivery').count()) === total ? true : undefined,
      );
      const to = page.getByLabel(/^To/);
      await to.fill(local(-1));
      await to.dispatchEvent('change');
      await page.getByText('No delivery matches these filters.').waitFor();
      await to.fill('');
      await to.dispatchEvent('change');
      await from.fill('');
      await from.dispatchEvent('change');
      await noSidewaysScroll();
    });

    it('lists, creates (shown once, copied, of a scope) and revokes instance keys', async () => {
      const keys = page.getByRole('region', { name: 'Instance keys' });
      await keys.getByText('No instance keys').waitFor();
      await keys.getByRole('button', { name: 'Create key' }).click();
      const dialog = page.getByRole('dialog', { name: 'New instance key' });
      const key = await dialog.getByLabel('New key').inputValue();
      assert.match(key, /^hk_/);
      await dialog.getByRole('button', { name: 'Copy key' }).click();
      await page.getByText('Key copied').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
      await shot('04-new-key');
      await dialog.getByRole('button', { name: 'Done' }).click();
      // The key works, for this instance; the list shows its id, never the key.
      assert.equal((await h.request('GET', `/instances/${ins}/webhooks`, { key })).status, 200);
      const listed = keys.locator('li.key-row');
      await listed.first().waitFor();
      assert.equal(await listed.count(), 1);
      assert.doesNotMatch(await keys.innerText(), new RegExp(key));
      assert.match(await listed.innerText(), /manage/i);

      // A publish key, for the engine: it publishes, and reads no webhook.
      await keys.getByLabel('Scope').selectOption('publish');
      await keys.getByRole('button', { name: 'Create key' }).click();
      const second = page.getByRole('dialog', { name: 'New instance key' });
      assert.match(await second.innerText(), /only publishes this instance’s events/);
      const publishKey = await second.getByLabel('New key').inputValue();
      await second.getByRole('button', { name: 'Done' }).click();
      const event = { event: 'message', payload: { id: 'false_1@c.us_UI', fromMe: false } };
      const published = await h.request('POST', `/instances/${ins}/events`, { key: publishKey, body: event });
      assert.equal(published.status, 202);
      assert.equal((await h.request('GET', `/instances/${ins}/webhooks`, { key: publishKey })).status, 403);
      await keys.locator('li.key-row', { hasText: 'publish' }).waitFor();
      assert.equal(await listed.count(), 2);
      await noSidewaysScroll();

      for (const left of [1, 0]) {
        await listed.first().getByRole('button', { name: 'Revoke' }).click();
        await page
          .getByRole('dialog', { name: 'Revoke key?' })
          .getByRole('button', { name: 'Revoke key' })
          .click();
        await eventually(async () => ((await listed.count()) === left ? true : undefined));
      }
      await keys.getByText('No instance keys').waitFor();
      for (const k of [key, publishKey])
        assert.equal((await h.request('GET', `/instances/${ins}`, { key: k })).status, 401);
      await noSidewaysScroll();
    });

    it('deletes the instance after a confirmation that says what goes with it', async () => {
      await page.getByRole('button', { name: 'Delete instance' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete Support line?' });
      assert.match(await dialog.innerText(), /webhooks .*instance keys and its delivery log are deleted/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await h.request('GET', `/instances/${ins}`)).status, 200, 'cancel keeps it');
      await page.getByRole('button', { name: 'Delete instance' }).click();
      await page
        .getByRole('dialog', { name: 'Delete Support line?' })
        .getByRole('button', { name: 'Delete instance' })
        .click();
      await page.waitForURL(`${h.url}/`);
      assert.equal((await h.request('GET', `/instances/${ins}`)).status, 404);
    });
  });
}
