/**
 * Forms of the session page in real Chromium: sign-in with every kind of key, API validation errors shown next
 * to the field they name, and the main flows done with the keyboard alone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { errorOf, launch, missingChromium, screenshot, signIn } from './browser.ts';

describe('session page: forms, errors and keyboard', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let browser: Browser;
  let page: Page;
  let ins: string;

  before(async () => {
    // Private destinations refused, as in production: the destination guard's 422 is one of the errors shown.
    h = await startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'false' });
    browser = await launch();
    ins = await h.createInstance('Support line');
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function freshPage(): Promise<Page> {
    await page?.close();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    return page;
  }

  /** The error paragraph a control points at with aria-describedby, once the answer has put one there. */

  it('refuses an unknown key next to the key field, and keeps nothing', async () => {
    await freshPage();
    await page.goto(h.url);
    await page.getByLabel('API key').fill('not-a-key-of-this-herald');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const key = page.getByLabel('API key');
    assert.equal(await errorOf(key), 'This key is unknown or has been revoked');
    assert.equal(await key.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    await screenshot(page, '10-sign-in-refused');
  });

  it('signs in with an instance key: its own instance only, no admin form', async () => {
    const other = await h.createInstance('Not yours');
    const created = await h.request('POST', `/instances/${ins}/keys`);
    await freshPage();
    await signIn(page, h.url, created.body.key);
    await page.getByRole('link', { name: 'Support line' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Not yours' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Create instance' }).count(), 0);
    await page.getByText('Instance key').waitFor();
    await page.goto(`${h.url}/ui/instances/${other}`);
    await page.getByText('Your key belongs to another instance.').waitFor();

    // Revoked while the page is open: the next refresh returns to the sign-in, and says why.
    await page.goto(`${h.url}/ui/instances/${ins}`);
    await page.getByRole('heading', { name: 'Support line' }).waitFor();
    await h.request('DELETE', `/instances/${ins}/keys/${created.body.key_id}`);
    await page.getByText('The key was refused (revoked or unknown). Sign in again.').waitFor();
    await page.getByLabel('API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  });

  it('shows each API validation error next to the field it names', async () => {
    await freshPage();
    await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });
    const url = dialog.getByLabel('Destination URL');
    await url.fill('ftp://files.example.com/drop');
    await dialog.getByRole('checkbox', { name: 'message', exact: true }).uncheck();
    await dialog.getByRole('button', { name: 'Save' }).click();
    // The schema refuses the empty list before the address is looked at.
    const events = dialog.getByRole('group', { name: 'Events' });
    assert.equal(await errorOf(events), 'choose at least one event kind');
    assert.equal(
      await events.evaluate((el) => el.contains(document.activeElement)),
      true,
      'focus moved there',
    );
    await dialog.getByRole('checkbox', { name: 'message.ack', exact: true }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    assert.match(await errorOf(url), /http/);
    assert.equal(await url.evaluate((el) => el === document.activeElement), true);
    assert.equal(await events.getAttribute('aria-invalid'), null, 'the fixed field is no longer marked');
    await screenshot(page, '11-validation-errors');

    // A secret chosen but left empty is asked for, not silently read as "no secret".
    await url.fill('https://hooks.example.com/in');
    await dialog.getByRole('radio', { name: 'Sign deliveries with a secret' }).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    assert.match(await errorOf(dialog.getByRole('textbox', { name: 'Secret' })), /Enter a secret/);
    assert.equal(await url.getAttribute('aria-invalid'), null);

    // The destination guard's 422 names the field too.
    await dialog.getByRole('textbox', { name: 'Secret' }).fill('whsec_abc');
    await url.fill('http://localhost:9/x');
    await dialog.getByRole('button', { name: 'Save' }).click();
    assert.match(await errorOf(url), /not|private|loopback|allowed/i);
    await url.fill('https://hooks.example.com/in');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const hooks = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
    assert.deepEqual(
      hooks.map((w: any) => [w.destination_url, w.events, w.client_sign_secret_set]),
      [['https://hooks.example.com/in', ['message.ack'], true]],
    );
  });

  it("the event picker: `*` takes every kind but Herald's own, which are chosen beside it", async () => {
    await freshPage();
    await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });
    await dialog.getByLabel('Destination URL').fill('https://hooks.example.com/ops');
    await dialog.getByRole('checkbox', { name: /Every event kind/ }).check();
    assert.equal(await dialog.getByRole('checkbox', { name: 'message', exact: true }).isDisabled(), true);
    const failing = dialog.getByRole('checkbox', { name: 'webhook.failing', exact: true });
    assert.equal(await failing.isDisabled(), false, "Herald's own stay free under *");
    await failing.check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const hooks = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
    const made = hooks.find((w: any) => w.destination_url === 'https://hooks.example.com/ops');
    assert.deepEqual(made.events, ['*', 'webhook.failing']);
  });

  it('creating an instance with a too long name shows the error at the name field', async () => {
    await freshPage();
    await signIn(page, h.url, ADMIN_KEY);
    const name = page.getByLabel('Name');
    await name.evaluate((el: HTMLInputElement) => el.removeAttribute('maxlength'));
    await name.fill('x'.repeat(201));
    await page.getByRole('button', { name: 'Create instance' }).click();
    assert.match(await errorOf(name), /200/);
    await name.fill('Night shift');
    await name.press('Enter');
    await page.getByRole('link', { name: 'Night shift' }).waitFor();
  });

  it('works with the keyboard alone: sign in, add a webhook, enable it, delete it with confirmation', async () => {
    await freshPage();
    await page.goto(`${h.url}/ui/instances/${ins}`);
    await page.keyboard.type(ADMIN_KEY); // the key field has focus on arrival
    await page.keyboard.press('Enter');
    const add = page.getByRole('button', { name: 'Add webhook' });
    await add.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Add webhook' });
    await dialog.waitFor();
    await page.keyboard.type('https://keyboard.example.com/hook'); // the URL field has focus
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await add.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('https://keyboard.example.com/hook');
    await page.keyboard.press('Enter'); // submits the form
    await dialog.waitFor({ state: 'detached' });
    const card = page.getByRole('article', { name: 'Webhook keyboard.example.com/hook' });
    await card.getByRole('button', { name: 'Enable' }).focus();
    await page.keyboard.press('Enter');
    await card.getByText('Enabled', { exact: true }).waitFor();
    // The refresh that followed gave focus back to the same control (now "Disable").
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Disable');
    await card.getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Space');
    const confirm = page.getByRole('dialog', { name: 'Delete webhook?' });
    await confirm.waitFor();
    await page.keyboard.press('Tab'); // Cancel has focus first; Tab reaches "Delete webhook"
    await page.keyboard.press('Enter');
    await card.waitFor({ state: 'detached' });
    const left = (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks;
    assert.ok(!left.some((w: any) => w.destination_url === 'https://keyboard.example.com/hook'));
  });
});
