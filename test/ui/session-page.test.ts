/**
 * The session page's main flow in real Chromium against a real Herald (temp SQLite) and a real receiver on
 * 127.0.0.1 (issue 3, "How it is checked"). The steps build on each other, in order; each saves a screenshot
 * of the page in its state to test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { verify } from '../../packages/receiver/src/index.ts';
import { EVENT_KINDS } from '../../src/domain/event-kinds.ts';
import { ADMIN_KEY, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { launch, missingChromium, screenshot, signIn } from './browser.ts';

const SECRET = 'whsec_ui_flow_secret_1';

describe('session page: the main flow', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let receiver: TestReceiver;
  let browser: Browser;
  let page: Page;
  let ins: string;

  before(async () => {
    // A short schedule (six attempts within about a second) makes a delivery fail quickly.
    h = await startTestHerald({ RETRY_SCHEDULE: '0.1,0.1,0.1,0.1,0.1' });
    receiver = await TestReceiver.start();
    browser = await launch();
    page = await browser.newPage({
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    page.setDefaultTimeout(20_000);
    ins = await h.createInstance('Sales line');
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING', phone: '491701234567' } });
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await h?.close();
  });

  const card = () => page.getByRole('article', { name: /^Webhook / });
  /** The log row of the newest delivery of the page's one webhook (the API names it; the page shows it). */
  async function newestRow(): Promise<Locator> {
    const r = await h.request('GET', `/instances/${ins}/deliveries?limit=1`);
    return page.locator(`li.delivery[data-delivery-id="${r.body.deliveries[0].delivery_id}"]`);
  }
  const waitStatus = (row: Locator, status: string) =>
    row.locator(`xpath=self::*[@data-status="${status}"]`).waitFor();

  it('signs in with the admin key and lists the instance with its status, phone and counts', async () => {
    await signIn(page, h.url, ADMIN_KEY);
    const row = page.getByRole('row', { name: /Sales line/ });
    await row.waitFor();
    assert.match(await row.innerText(), /working[\s\S]*\+491701234567[\s\S]*0\s+0/i);
    assert.ok(!page.url().includes(ADMIN_KEY), 'the key is not in the URL');
    await screenshot(page, '01-instance-list');
    await row.getByRole('link', { name: 'Sales line' }).click();
    await page.waitForURL(`**/ui/instances/${ins}`);
    await page.getByRole('heading', { name: 'Sales line' }).waitFor();
  });

  it('adds a webhook with events from the catalog and a secret; it starts disabled', async () => {
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });
    // The whole catalog the API takes, WAHA's own kinds included, one box each.
    for (const kind of EVENT_KINDS) {
      assert.equal(await dialog.getByRole('checkbox', { name: kind, exact: true }).count(), 1, kind);
    }
    await dialog.getByLabel('Destination URL').fill(receiver.url);
    await dialog.getByRole('checkbox', { name: 'message.ack', exact: true }).check();
    await dialog.getByRole('radio', { name: 'Sign deliveries with a secret' }).check();
    await dialog.getByRole('textbox', { name: 'Secret' }).fill(SECRET);
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await card().waitFor();
    const text = await card().innerText();
    assert.match(text, /Disabled/);
    assert.match(text, /message\s+message\.ack/);
    assert.match(text, /Signed/);
    const [hook] = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
    assert.deepEqual(
      [hook.destination_url, hook.events, hook.enabled],
      [receiver.url, ['message', 'message.ack'], false],
    );
    await screenshot(page, '02-webhook-added');
  });

  it('enables the webhook', async () => {
    await card().getByRole('button', { name: 'Enable' }).click();
    await card().getByText('Enabled', { exact: true }).waitFor();
    await card().getByRole('button', { name: 'Disable' }).waitFor();
  });

  it('shows a published event delivered in the log, with the exact body that was sent', async () => {
    const published = await h.publish(ins, {
      event: 'message',
      payload: messagePayload({ body: 'Hello UI' }),
    });
    assert.equal(published.body.deliveries, 1);
    const [sent] = await receiver.waitFor(1);
    const row = await newestRow();
    await waitStatus(row, 'delivered');
    await row.getByRole('button', { name: /message/ }).click();
    const detail = row.locator('.delivery-detail');
    await detail.getByText('HTTP 200').first().waitFor();
    // The body indented for reading, and the exact bytes (what the signature covers) one click away.
    const raw = sent.rawBody.toString('utf8');
    assert.equal(
      await detail.locator('pre[data-body="pretty"]').innerText(),
      JSON.stringify(JSON.parse(raw), null, 2),
    );
    await detail.getByText('Exact bytes sent').click();
    assert.equal(await detail.locator('pre[data-body="exact"]').innerText(), raw);
    assert.match(await detail.innerText(), new RegExp(`X-Service-Event-Id: ${published.body.event_id}`));
    await detail.getByRole('button', { name: 'Copy as curl' }).click();
    await page.getByText('curl command copied').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, await detail.locator('pre[data-curl]').innerText());
    assert.ok(
      copied.includes(`X-Service-Event-Id: ${published.body.event_id}`) && copied.includes(receiver.url),
    );
    await screenshot(page, '03-delivered');
    await row.getByRole('button', { name: /message/ }).click(); // closed again
  });

  it('shows a delivery failed after the receiver kept failing, with each attempt and why the next came', async () => {
    receiver.answer = () => ({ status: 503, body: 'receiver is down for maintenance' });
    await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'Will fail' }) });
    const row = await newestRow();
    await waitStatus(row, 'failed');
    assert.match(await row.innerText(), /Failed[\s\S]*6 attempts[\s\S]*HTTP 503/);
    await row.getByRole('button', { name: 'Redeliver' }).waitFor();
    await row.getByRole('button', { name: /message/ }).click();
    const detail = row.locator('.delivery-detail');
    await detail.getByText('every attempt of the cycle failed').waitFor();
    const attempts = detail.locator('table.attempts tbody tr');
    assert.equal(await attempts.count(), 6);
    assert.match(await attempts.last().innerText(), /HTTP 503[\s\S]*receiver is down[\s\S]*retry schedule/);
    await screenshot(page, '04-failed');
  });

  it('redelivers the failed delivery once the receiver recovers, and shows it delivered without a reload', async () => {
    receiver.answer = () => ({ status: 200 });
    await page.evaluate(() => {
      (window as unknown as { stayed: boolean }).stayed = true;
    });
    const row = await newestRow();
    await row.getByRole('button', { name: 'Redeliver' }).click();
    await waitStatus(row, 'delivered');
    const detail = row.locator('.delivery-detail');
    await detail.getByText('manual').waitFor(); // the open detail followed: the new attempt is there
    assert.equal(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed), true);
    await screenshot(page, '05-redelivered');
  });

  it('edits the webhook keeping its secret: the next delivery is still signed with it', async () => {
    await card().getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
    assert.equal(await dialog.getByLabel('Destination URL').inputValue(), receiver.url);
    assert.ok(await dialog.getByRole('radio', { name: 'Keep current secret' }).isChecked());
    await dialog.getByRole('checkbox', { name: 'session.status' }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await card().getByText('session.status').waitFor();
    const before = receiver.received.length;
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING', phone: '491701234567' } });
    const got = (await receiver.waitFor(before + 1))[before];
    assert.equal(got.body.event, 'session.status');
    const result = verify({ secret: SECRET, headers: got.headers, rawBody: got.rawBody });
    assert.ok(result.ok, `signed with the kept secret: ${JSON.stringify(result)}`);
  });

  it('shows a webhook disabled by a 410, and when', async () => {
    receiver.answer = () => ({ status: 410 });
    await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'Gone' }) });
    await card()
      .getByText(/Disabled: the receiver answered 410 Gone at \S+/)
      .waitFor();
    await card().getByRole('button', { name: 'Enable' }).waitFor();
    const row = await newestRow();
    await waitStatus(row, 'failed');
    assert.match(await row.innerText(), /HTTP 410 Gone/);
    await screenshot(page, '06-gone');
  });

  it('redelivers all failed, saying how many first, and only those of enabled webhooks', async () => {
    const all = page.getByRole('button', { name: /^Redeliver all failed/ });
    // The one failed delivery belongs to the webhook the 410 disabled: nothing to redeliver yet.
    await page.getByRole('button', { name: 'Redeliver all failed 0' }).waitFor();
    assert.equal(await all.isDisabled(), true);
    receiver.answer = () => ({ status: 200 });
    await card().getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Redeliver all failed 1' }).waitFor();
    await all.click();
    const dialog = page.getByRole('dialog', { name: 'Redeliver 1 failed delivery?' });
    await dialog.getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText('1 delivery queued for redelivery').waitFor();
    await waitStatus(await newestRow(), 'delivered');
    await page.getByRole('button', { name: 'Redeliver all failed 0' }).waitFor();
    await screenshot(page, '07-all-redelivered');
  });

  it('signs out: the key leaves the tab and the sign-in form returns', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    await page.goto(`${h.url}/ui/instances/${ins}`);
    await page.getByLabel('API key').waitFor();
  });
});
