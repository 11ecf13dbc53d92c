/**
 * The webhook form's destination kinds, in real Chromium at desktop width and at 390 px, against the machine's real
 * Redis, NATS and RabbitMQ: a Redis stream and a NATS subject entered part by part are stored as their URLs and Send
 * test lands in the stream; a RabbitMQ destination with a password reopens as its parts with the password shown as
 * ****, is refused at the password when moved to another host, and moved to another queue of the same server
 * publishes there with that password; a missing part is refused with the API's words next to it, and switching kind
 * keeps what was typed in each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { BrokerClients, type Destination } from '../support/broker-consumers.ts';
import { ADMIN_KEY, eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import {
  assertNoSidewaysScroll,
  errorOf,
  launch,
  missingChromium,
  openPage,
  screenshot,
  signIn,
} from './browser.ts';

/** The queue or stream of a destination the broker clients made, as its URL names it. */
const partOf = (d: Destination, name: string) => new URL(d.url()).searchParams.get(name) ?? '';

for (const width of [1280, 390]) {
  describe(`destination kinds in the webhook form at ${width} px`, {
    skip: missingChromium() ?? false,
  }, () => {
    let h: TestHerald;
    let brokers: BrokerClients;
    let browser: Browser;
    let page: Page;
    let ins: string;
    const shot = (name: string) => screenshot(page, `destination-kinds-${width}-${name}`);

    before(async () => {
      h = await startTestHerald();
      brokers = await BrokerClients.connect();
      browser = await launch();
      ins = await h.createInstance('Support line');
      page = await openPage(browser, width);
      await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    });
    after(async () => {
      await browser?.close();
      await brokers?.close();
      await h?.close();
    });

    const webhooks = async () => (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
    const field = (dialog: Locator, label: string) => dialog.getByLabel(label, { exact: true });
    const noSidewaysScroll = () => assertNoSidewaysScroll(page);
    /** Enables the card's webhook, sends a test `message` and waits until `d` has read its event. */
    async function sendTestTo(card: Locator, d: Destination, webhookId: string): Promise<void> {
      await card.getByRole('button', { name: 'Enable' }).click();
      await card.getByRole('button', { name: 'Disable' }).waitFor();
      await card.getByRole('button', { name: 'Send test' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send a test delivery' });
      await dialog.getByRole('button', { name: 'Send test' }).click();
      await dialog.waitFor({ state: 'detached' });
      const [test] = (await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${webhookId}`)).body
        .deliveries;
      await page
        .locator(`li.delivery[data-delivery-id="${test.delivery_id}"][data-status="delivered"]`)
        .waitFor();
      await eventually(
        async () => ((await d.read()).has(test.event_id) ? true : undefined),
        10_000,
        'the event',
      );
    }

    it('a missing part is refused with the API’s words at that part; switching kind keeps what was typed', async () => {
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByRole('radio', { name: 'Redis stream' }).check();
      await field(dialog, 'Host').fill('127.0.0.1');
      await field(dialog, 'Max length').fill('1000');
      // Another kind and back: the Redis parts are still there.
      await dialog.getByRole('radio', { name: 'HTTPS endpoint' }).check();
      await field(dialog, 'Destination URL').fill('https://hooks.example.com/in');
      await dialog.getByRole('radio', { name: 'Redis stream' }).check();
      assert.equal(await field(dialog, 'Host').inputValue(), '127.0.0.1');
      assert.equal(await field(dialog, 'Max length').inputValue(), '1000');

      await dialog.getByRole('button', { name: 'Save' }).click();
      const stream = field(dialog, 'Stream');
      assert.equal(await errorOf(stream), 'a redis destination needs ?stream=<name>');
      assert.equal(
        await stream.evaluate((el) => el === document.activeElement),
        true,
        'focus is at the part',
      );
      const message = dialog.locator('[data-field="destination_url"] .field-error');
      assert.equal(await message.innerText(), 'a redis destination needs ?stream=<name>');
      assert.equal(await field(dialog, 'Host').getAttribute('aria-invalid'), null);
      await message.scrollIntoViewIfNeeded();
      await shot('01-missing-stream');
      await noSidewaysScroll();

      await dialog.getByRole('radio', { name: 'HTTPS endpoint' }).check();
      assert.equal(await field(dialog, 'Destination URL').inputValue(), 'https://hooks.example.com/in');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(await webhooks(), []);
    });

    it('a Redis stream entered part by part is stored as its URL, and Send test lands in the stream', async () => {
      const d = await brokers.destination('redis');
      const name = partOf(d, 'stream');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByRole('radio', { name: 'Redis stream' }).check();
      assert.equal(await field(dialog, 'Port').getAttribute('placeholder'), '6379');
      await field(dialog, 'Host').fill('127.0.0.1');
      await field(dialog, 'Port').fill('6379');
      await field(dialog, 'Stream').fill(name);
      await field(dialog, 'Max length').fill('1000');
      await dialog
        .getByText('maxlen: trim the stream to about this many entries; empty never trims.')
        .waitFor();
      await shot('02-redis-form');
      await noSidewaysScroll();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });

      const [hook] = await webhooks();
      const url = `redis://127.0.0.1:6379/0?stream=${encodeURIComponent(name)}&maxlen=1000`;
      assert.equal(hook.destination_url, url);
      const card = page.getByRole('article', { name: `Webhook ${url}` });
      await sendTestTo(card, d, hook.webhook_id);
      await shot('03-redis-delivered');
      await noSidewaysScroll();
      await card.getByRole('button', { name: 'Disable' }).click();
      await card.getByRole('button', { name: 'Enable' }).waitFor();
    });

    it('a NATS JetStream subject entered part by part is stored as its URL, and Send test lands in the stream', async () => {
      const d = await brokers.destination('nats');
      const subject = decodeURIComponent(new URL(d.url()).pathname.slice(1));
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByRole('radio', { name: 'NATS JetStream subject' }).check();
      assert.equal(await field(dialog, 'Port').getAttribute('placeholder'), '4222');
      await field(dialog, 'Host').fill('127.0.0.1');
      await field(dialog, 'Subject').fill(subject);
      await dialog.getByText('One subject, no wildcards; a JetStream stream must capture it.').waitFor();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });

      const hook = (await webhooks()).find((w: any) => w.destination_url.startsWith('nats:'));
      const url = `nats://127.0.0.1:4222/${subject}`;
      assert.equal(hook.destination_url, url, 'the default port written out');
      const card = page.getByRole('article', { name: `Webhook ${url}` });
      await sendTestTo(card, d, hook.webhook_id);
      await shot('04-nats-delivered');
      await card.getByRole('button', { name: 'Disable' }).click();
      await card.getByRole('button', { name: 'Enable' }).waitFor();
    });

    it('a RabbitMQ destination reopens as its parts, password ****, kept for another queue of the same server', async () => {
      const d = await brokers.destination('amqp');
      const queue = partOf(d, 'routing_key');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const add = page.getByRole('dialog', { name: 'Add webhook' });
      await add.getByRole('radio', { name: 'RabbitMQ queue or exchange' }).check();
      await field(add, 'Host').fill('127.0.0.1');
      await field(add, 'Port').fill('5672');
      await field(add, 'Username').fill('guest');
      await field(add, 'Password').fill('guest');
      await field(add, 'Routing key').fill(queue);
      await add.getByText('With no exchange, the routing key is the queue’s name.').waitFor();
      await add.getByRole('button', { name: 'Save' }).click();
      await add.waitFor({ state: 'detached' });
      const url = `amqp://guest:****@127.0.0.1:5672/?routing_key=${queue}`;
      const hook = (await webhooks()).find((w: any) => w.destination_url.startsWith('amqp:'));
      assert.equal(hook.destination_url, url);

      const card = page.getByRole('article', { name: `Webhook ${url}` });
      await card.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit webhook' });
      assert.equal(await edit.getByRole('radio', { name: 'RabbitMQ queue or exchange' }).isChecked(), true);
      assert.equal(await edit.getByRole('checkbox', { name: /^TLS/ }).isChecked(), false);
      const shown = {
        host: await field(edit, 'Host').inputValue(),
        port: await field(edit, 'Port').inputValue(),
        username: await field(edit, 'Username').inputValue(),
        password: await field(edit, 'Password').inputValue(),
        vhost: await field(edit, 'Vhost').inputValue(),
        exchange: await field(edit, 'Exchange').inputValue(),
        routingKey: await field(edit, 'Routing key').inputValue(),
      };
      assert.deepEqual(shown, {
        host: '127.0.0.1',
        port: '5672',
        username: 'guest',
        password: '****',
        vhost: '',
        exchange: '',
        routingKey: queue,
      });
      await edit.getByText(/\*\*\*\* keeps the saved password/).waitFor();
      await shot('05-rabbitmq-edit');
      await noSidewaysScroll();
      // **** stands for the saved password on the same server only: another host is refused, at the password.
      await field(edit, 'Host').fill('localhost');
      await edit.getByRole('button', { name: 'Save' }).click();
      assert.match(await errorOf(field(edit, 'Password')), /same server and user/);
      // Another queue on the same server keeps it.
      const moved = await brokers.destination('amqp');
      const other = partOf(moved, 'routing_key');
      await field(edit, 'Host').fill('127.0.0.1');
      await field(edit, 'Routing key').fill(other);
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      const movedUrl = `amqp://guest:****@127.0.0.1:5672/?routing_key=${other}`;
      assert.equal(
        (await webhooks()).find((w: any) => w.webhook_id === hook.webhook_id).destination_url,
        movedUrl,
      );

      // Published with the password kept: RabbitMQ takes guest's password only, so the test reaches the new queue.
      await sendTestTo(page.getByRole('article', { name: `Webhook ${movedUrl}` }), moved, hook.webhook_id);
      await shot('06-rabbitmq-delivered');
    });
  });
}
