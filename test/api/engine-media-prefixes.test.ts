/**
 * Engine media is fetched only where the operator says. A customer holding an instance key chooses the media.url of
 * what it publishes; Herald must neither send ENGINE_MEDIA_HEADERS (the engine's key) to a host of the customer's,
 * nor read the engine's own API for it, nor reach a private address because ALLOW_PRIVATE_DESTINATIONS or
 * ALLOWED_DESTINATION_CIDRS open it for webhooks. This Herald runs with both open to 127.0.0.0/8; the engine's
 * file server and the customer's server are real servers on 127.0.0.1, and what they were asked is what they saw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pngImage } from '../media/files.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const KEY = 'waha-engine-key-7f3a';

let h: TestHerald;
let engine: EngineFiles;
let customer: EngineFiles;
let receiver: TestReceiver;
before(async () => {
  engine = await EngineFiles.start();
  customer = await EngineFiles.start();
  receiver = await TestReceiver.start();
  h = await startTestHerald({
    ALLOW_PRIVATE_DESTINATIONS: 'true',
    ALLOWED_DESTINATION_CIDRS: '127.0.0.0/8',
    ENGINE_MEDIA_HEADERS: `X-Api-Key: ${KEY}`,
    ENGINE_MEDIA_PREFIXES: engine.prefix,
  });
});
after(async () => {
  await h.close();
  await receiver.close();
  await customer.close();
  await engine.close();
});

/** An instance with a webhook, and an instance key of its own: what a customer is given. */
async function tenant() {
  const ins = await h.createInstance('customer');
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
  const key = (await h.request('POST', `/instances/${ins}/keys`)).body.key as string;
  return { ins, key };
}

let n = 0;
const image = (url: string) => {
  n++;
  return {
    id: `false_491701234567@c.us_3EB0${String(n).padStart(16, '0')}`,
    from: '491701234567@c.us',
    fromMe: false,
    body: '',
    hasMedia: true,
    media: { url, mimetype: 'image/png' },
  };
};

/** Publishes through the engine endpoint or POST …/events with the instance key; the settled media and why. */
async function publish(via: 'engine' | 'events', ins: string, key: string, url: string) {
  const payload = image(url);
  const res =
    via === 'engine'
      ? await postWaha(h.url, ins, wahaBody('message', payload), { key })
      : await h.request('POST', `/instances/${ins}/events`, { key, body: { event: 'message', payload } });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const got = await eventually(
    async () => receiver.received.find((r) => r.body?.event_id === res.body.event_id),
    10_000,
    'the delivery',
  );
  const list = await h.request('GET', `/instances/${ins}/deliveries?event_id=${res.body.event_id}`);
  const detail = await h.request(
    'GET',
    `/instances/${ins}/deliveries/${list.body.deliveries[0].delivery_id}`,
  );
  return { media: got.body.payload.media, why: detail.body.delivery.media_failure as string | null };
}

async function outsideCount(): Promise<number> {
  const text = (await h.request('GET', '/metrics')).body as string;
  return Number(/^herald_engine_media_failures_total\{reason="outside_prefixes"\} (\d+)$/m.exec(text)?.[1]);
}

describe('engine media is fetched only where the operator says', () => {
  test('through the engine endpoint, under ENGINE_MEDIA_PREFIXES: fetched with the engine headers', async () => {
    const { ins, key } = await tenant();
    const url = engine.serve('default/ok.png', { bytes: pngImage(8), type: 'image/png' });
    const { media, why } = await publish('engine', ins, key, url);
    assert.equal(media.status, 'ready');
    assert.equal(why, null);
    const [asked] = engine.requestsFor(url);
    assert.equal(asked.headers['x-api-key'], KEY);
  });

  test('the attack: a media.url on a host of the customer’s is never asked, and the key never leaves', async () => {
    const { ins, key } = await tenant();
    const before = await outsideCount();
    const url = customer.serve('steal.png', { bytes: pngImage(8), type: 'image/png' });
    const { media, why } = await publish('engine', ins, key, url);
    assert.deepEqual(media, { status: 'failed', mimetype: 'image/png' });
    assert.equal(
      why,
      `media.url is not under ENGINE_MEDIA_PREFIXES (${engine.prefix}), and 127.0.0.1 is not a globally reachable ` +
        'address (loopback, 127.0.0.0/8): a private address outside ENGINE_MEDIA_PREFIXES is never downloaded from ' +
        "(to download the engine's files, add where it serves them to ENGINE_MEDIA_PREFIXES)",
    );
    assert.deepEqual(customer.requests, [], 'the customer’s server saw no request at all');
    assert.equal(await outsideCount(), before + 1);
  });

  test('the attack: the engine’s own API, outside the prefix, is never asked', async () => {
    const { ins, key } = await tenant();
    const asked = engine.requests.length;
    for (const url of [
      `${engine.base}/api/sessions/other-tenant/me`,
      `${engine.base}/api/files/../sessions/other-tenant/me`,
      `${engine.base}/api/files/%2e%2e/sessions`,
      `${engine.base}/api/files/..%2fsessions`,
    ]) {
      const { media, why } = await publish('engine', ins, key, url);
      assert.deepEqual(media, { status: 'failed', mimetype: 'image/png' }, url);
      assert.match(why ?? '', /^media\.url (is not under ENGINE_MEDIA_PREFIXES|refused: it must not)/, url);
    }
    assert.equal(engine.requests.length, asked, 'the engine saw none of them');
  });

  test('the same media object through POST …/events: never with the headers; outside the prefix, never asked', async () => {
    const { ins, key } = await tenant();
    const url = engine.serve('default/events.png', { bytes: pngImage(8), type: 'image/png' });
    const under = await publish('events', ins, key, url);
    assert.equal(under.media.status, 'ready', 'under the prefix: fetched');
    const [asked] = engine.requestsFor(url);
    assert.equal(asked.headers['x-api-key'], undefined, 'without the engine key');

    const elsewhere = customer.serve('events.png', { bytes: pngImage(8), type: 'image/png' });
    const outside = await publish('events', ins, key, elsewhere);
    assert.deepEqual(outside.media, { status: 'failed', mimetype: 'image/png' });
    assert.match(
      outside.why ?? '',
      /^media\.url is not under ENGINE_MEDIA_PREFIXES .*127\.0\.0\.1 is not a globally/,
    );
    assert.deepEqual(customer.requests, []);
  });

  test('an instance’s engine_media_prefix narrows where its media may come from', async () => {
    const { ins, key } = await tenant();
    const own = `${engine.prefix}tenant-a/`;
    const set = await h.request('PATCH', `/instances/${ins}`, { body: { engine_media_prefix: own } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.instance.engine_media_prefix, own);
    assert.equal((await h.request('GET', `/instances/${ins}`)).body.instance.engine_media_prefix, own);

    const mine = engine.serve('tenant-a/mine.png', { bytes: pngImage(8), type: 'image/png' });
    const theirs = engine.serve('tenant-b/theirs.png', { bytes: pngImage(8), type: 'image/png' });
    assert.equal((await publish('engine', ins, key, mine)).media.status, 'ready');
    assert.equal(engine.requestsFor(mine)[0].headers['x-api-key'], KEY);
    const other = await publish('engine', ins, key, theirs);
    assert.deepEqual(other.media, { status: 'failed', mimetype: 'image/png' });
    assert.match(
      other.why ?? '',
      new RegExp(`^media\\.url is not under this instance's engine_media_prefix \\(${own}\\)`),
    );
    assert.deepEqual(engine.requestsFor(theirs), [], 'another tenant’s file is never asked');

    // Cleared, the operator's prefixes count again.
    const cleared = await h.request('PATCH', `/instances/${ins}`, { body: { engine_media_prefix: null } });
    assert.equal(cleared.body.instance.engine_media_prefix, null);
    assert.equal((await publish('engine', ins, key, theirs)).media.status, 'ready');
  });

  test('an engine_media_prefix outside ENGINE_MEDIA_PREFIXES is a 400 that names the field and what is allowed', async () => {
    const ins = await h.createInstance('narrowed');
    for (const prefix of [
      `${customer.base}/api/files/`,
      `${engine.base}/api/`,
      `${engine.base}/api/filesX/`,
    ]) {
      const res = await h.request('PATCH', `/instances/${ins}`, { body: { engine_media_prefix: prefix } });
      assert.equal(res.status, 400, prefix);
      assert.equal(
        res.body.error.message,
        `engine_media_prefix: must be within ENGINE_MEDIA_PREFIXES: one of ${engine.prefix} or a URL under it`,
      );
    }
    const bad = await h.request('PATCH', `/instances/${ins}`, {
      body: { engine_media_prefix: `${engine.prefix}%2e%2e/` },
    });
    assert.equal(bad.status, 400);
    assert.match(
      bad.body.error.message,
      /^engine_media_prefix: must be a URL prefix such as .*; it must not have an encoded/,
    );
    assert.equal((await h.request('GET', `/instances/${ins}`)).body.instance.engine_media_prefix, null);
  });
});
