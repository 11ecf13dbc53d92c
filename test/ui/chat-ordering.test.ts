/**
 * Ordering per chat on the session page, in real Chromium at desktop width and at 390 px: the webhook form sends
 * `ordering: "chat"` (and shows the API's refusal of the field next to it), the card says "Ordered per chat"; with the
 * receiver holding a chat's first delivery, the log shows the chat of each delivery and, for the waiting ones, the
 * delivery they wait for (which opens it); a click on a chat filters the log to it, its queue a click further; once
 * the receiver answers, the chat's deliveries arrive in order and the log shows them delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
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

const CHAT = '4917000000001@c.us';
const OTHER = '4917000000002@c.us';
/** A WAHA message of a chat: Herald takes the chat from the message id. */
const message = (chat: string, n: number) => ({
  event: 'message',
  payload: { id: `false_${chat}_M${n}`, from: chat, fromMe: false, body: `x${n}`, hasMedia: false },
});

for (const width of [1280, 390]) {
  describe(`ordering per chat on the session page at ${width} px`, {
    skip: missingChromium() ?? false,
  }, () => {
    let h: TestHerald;
    let receiver: TestReceiver;
    let browser: Browser;
    let page: Page;
    let ins: string;
    /** Lets the receiver answer the chat's first request, held until then. */
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const shot = (name: string) => screenshot(page, `chat-ordering-${width}-${name}`);

    before(async () => {
      // The chat's first delivery stays in flight for as long as the test holds it (no timeout, no retry).
      h = await startTestHerald({ DELIVERY_TIMEOUT_MS: '120000' });
      receiver = await TestReceiver.start();
      receiver.answer = (req) =>
        req.body?.payload?.from === CHAT ? held.then(() => ({ status: 200 })) : { status: 200 };
      browser = await launch();
      ins = await h.createInstance('Support line');
      page = await openPage(browser, width);
      await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    });
    after(async () => {
      release();
      await browser?.close();
      await receiver?.close();
      await h?.close();
    });

    const card = () =>
      page.getByRole('article', { name: `Webhook ${receiver.url.replace(/^https?:\/\//, '')}` });
    const row = (deliveryId: string) => page.locator(`li.delivery[data-delivery-id="${deliveryId}"]`);
    const rows = () => page.locator('li.delivery');
    /** The chat's deliveries from the API, newest first. */
    const chatDeliveries = async () =>
      (await h.request('GET', `/instances/${ins}/deliveries?chat=${encodeURIComponent(CHAT)}`)).body
        .deliveries as { delivery_id: string; event_id: string; waiting_for: string | null }[];
    const noSidewaysScroll = () => assertNoSidewaysScroll(page);
    /** Waits until the log shows exactly these deliveries, in this order. */
    async function logShows(ids: string[]): Promise<void> {
      await page.waitForFunction(
        (want) =>
          JSON.stringify(
            [...document.querySelectorAll('li.delivery')].map((li) => li.getAttribute('data-delivery-id')),
          ) === JSON.stringify(want),
        ids,
      );
    }

    it('adds a webhook ordered per chat through the form; a refusal of the field is shown next to it', async () => {
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook' });
      await dialog.getByLabel('Destination URL').fill(receiver.url);
      const ordered = dialog.getByRole('checkbox', { name: /^Deliver each chat.s events in order$/ });
      assert.equal(await ordered.isChecked(), false, 'a new webhook starts unordered');
      await ordered.check();
      await dialog.getByText(/One delivery of a chat at a time/).waitFor();

      // The API's answer about the field is shown at the field: the value is bent on its way to be refused.
      const bend = '**/instances/*/webhooks';
      await page.route(bend, (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const body = JSON.parse(route.request().postData() ?? '{}');
        return route.continue({ postData: JSON.stringify({ ...body, ordering: 'sideways' }) });
      });
      await dialog.getByRole('button', { name: 'Save' }).click();
      assert.match(await errorOf(ordered), /must be one of none, chat/);
      await page.unroute(bend);
      await shot('01-form');
      await noSidewaysScroll();

      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'hidden' });
      const [hook] = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
      assert.equal(hook.ordering, 'chat');
      await card()
        .getByText(/Ordered per chat/)
        .waitFor();
      await card().getByRole('button', { name: 'Enable' }).click();
      await card().getByText('Enabled', { exact: true }).waitFor();

      // Edit shows it ticked, and saving keeps it.
      await card().getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit webhook' });
      assert.equal(
        await edit.getByRole('checkbox', { name: /^Deliver each chat.s events in order$/ }).isChecked(),
        true,
      );
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'hidden' });
      assert.equal((await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks[0].ordering, 'chat');
    });

    it("shows each delivery's chat, and for a waiting one the delivery it waits for", async () => {
      for (const n of [1, 2, 3]) assert.equal((await h.publish(ins, message(CHAT, n))).status, 202);
      assert.equal((await h.publish(ins, message(OTHER, 1))).status, 202);
      // The chat's first is in flight (held by the receiver); the other chat is not held up.
      const got = await receiver.waitFor(2);
      assert.deepEqual(got.map((r) => r.body.payload.id).sort(), [`false_${CHAT}_M1`, `false_${OTHER}_M1`]);
      const [third, second, head] = await chatDeliveries();
      assert.deepEqual(
        [third.waiting_for, second.waiting_for, head.waiting_for],
        [head.delivery_id, head.delivery_id, null],
      );

      for (const waiting of [third, second]) {
        await row(waiting.delivery_id).getByText(`Waits for ${head.delivery_id}`).waitFor();
      }
      assert.equal(
        await row(head.delivery_id)
          .getByText(/Waits for/)
          .count(),
        0,
      );
      assert.equal(
        await row(head.delivery_id)
          .getByRole('button', { name: `Chat ${CHAT}: show only its deliveries` })
          .innerText(),
        CHAT,
      );
      await rows().filter({ hasText: OTHER }).getByText('Delivered').waitFor();
      await shot('02-waiting');
      await noSidewaysScroll();

      // A waiting delivery's detail says so, and names the one it waits for.
      await row(second.delivery_id).getByRole('button', { name: 'message', exact: true }).click();
      const detail = row(second.delivery_id).locator('.delivery-detail');
      await detail.getByText(/Waiting its turn: it starts once the delivery of its chat before it/).waitFor();
      assert.match(
        await detail.locator('.facts').innerText(),
        new RegExp(`Waits for\\s+${head.delivery_id}`),
      );
    });

    it("a click on the chat shows that chat's deliveries only, and its queue", async () => {
      const [third, second, head] = await chatDeliveries();
      await row(third.delivery_id)
        .getByRole('button', { name: /^Chat 4917000000001@c\.us/ })
        .click();
      await logShows([third.delivery_id, second.delivery_id, head.delivery_id]);
      assert.equal(await page.getByLabel('Chat', { exact: true }).inputValue(), CHAT);
      const scope = page.locator('.scope');
      await scope.getByText(`Only chat ${CHAT}: its deliveries, newest first.`).waitFor();

      await scope.getByRole('button', { name: 'Its queue (pending)' }).click();
      await scope.getByText(`The queue of chat ${CHAT}: its pending deliveries`).waitFor();
      assert.equal(await page.getByLabel('Status').inputValue(), 'pending');
      await logShows([third.delivery_id, second.delivery_id, head.delivery_id]);
      await shot('03-queue');
      await noSidewaysScroll();

      // "Waits for" opens the delivery it names, here on the page.
      await row(third.delivery_id).getByRole('button', { name: head.delivery_id }).click();
      const toggle = row(head.delivery_id).getByRole('button', { name: 'message', exact: true });
      await row(head.delivery_id).locator('xpath=self::*[.//button[@aria-expanded="true"]]').waitFor();
      assert.equal(await toggle.evaluate((el) => el === document.activeElement), true);
      await scope.getByRole('button', { name: 'All its deliveries' }).click();
      await scope.getByText(`Only chat ${CHAT}`).waitFor();
      assert.equal(await page.getByLabel('Status').inputValue(), '');
    });

    it('"Waits for" finds the delivery when the log does not show it', async () => {
      const [third, , head] = await chatDeliveries();
      await page.getByRole('button', { name: 'Show all chats' }).click();
      const eventId = page.getByLabel('Event id');
      await eventId.fill(third.event_id);
      await eventId.press('Enter');
      await logShows([third.delivery_id]);
      await row(third.delivery_id).getByRole('button', { name: head.delivery_id }).click();
      await logShows([head.delivery_id]);
      assert.equal(await eventId.inputValue(), head.event_id);
      await row(head.delivery_id).locator('.delivery-detail:not([hidden])').waitFor();
      await page.waitForFunction(
        (id) => document.activeElement?.closest('li.delivery')?.getAttribute('data-delivery-id') === id,
        head.delivery_id,
      );
      await shot('04-waited-for');
      await eventId.fill('');
      await eventId.press('Enter');
    });

    it('once the receiver answers, the chat is delivered in order and nothing waits', async () => {
      const [third, second, head] = await chatDeliveries();
      // The open delivery's detail names its chat too, and filters the same way.
      await row(head.delivery_id)
        .locator('.facts')
        .getByRole('button', { name: /^Chat 4917000000001@c\.us/ })
        .click();
      await logShows([third.delivery_id, second.delivery_id, head.delivery_id]);
      release();
      const got = await receiver.waitFor(4);
      assert.deepEqual(
        got.filter((r) => r.body.payload.from === CHAT).map((r) => r.body.payload.id),
        [1, 2, 3].map((n) => `false_${CHAT}_M${n}`),
      );
      for (const d of [third, second, head]) {
        await row(d.delivery_id).locator('xpath=self::*[@data-status="delivered"]').waitFor();
      }
      await page.waitForFunction(() => !document.querySelector('li.delivery .waiting:not([hidden])'));
      await shot('05-delivered');
      await noSidewaysScroll();

      await page.getByRole('button', { name: 'Show all chats' }).click();
      const all = (await h.request('GET', `/instances/${ins}/deliveries`)).body.deliveries;
      assert.equal(all.length, 4);
      await logShows(all.map((d: { delivery_id: string }) => d.delivery_id));
      await rows().filter({ hasText: OTHER }).getByText('Delivered').waitFor();
      assert.equal(await page.locator('.scope').isHidden(), true);
      assert.equal(await page.getByLabel('Chat', { exact: true }).inputValue(), '');
    });
  });
}
