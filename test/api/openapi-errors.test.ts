/**
 * The errors /openapi.json declares are the errors Herald gives. For every operation, each cause it declares is
 * provoked against a real Herald, and the answer has the declared status, fits the Error schema, and says what the
 * declared example says (ids aside). A declared cause that no request here provokes fails the test: a new one
 * comes with its request.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { hashKey } from '../../src/api/auth.ts';
import { signLink } from '../../src/domain/media-link.ts';
import { evolutionJwt } from '../support/evolution-sender.ts';
import {
  ADMIN_KEY,
  apiRequest,
  eventually,
  messagePayload,
  type Reply,
  type RequestOptions,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import {
  declaredCauses,
  fillPath,
  type Json,
  type Operation,
  operations,
  schemaValidator,
  withoutIds,
} from '../support/openapi-doc.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
/** Private destinations refused and the default rate limits, on a clock that stands still (no refill). */
let strict: TestHerald;
/** The default limit of failed authentications from one address, on a clock that stands still. */
let guarded: TestHerald;
let receiver: TestReceiver;
let doc: Json;
/** Ids every request uses unless it says otherwise. */
let ids: Record<string, string>;
let keyOfA: string;
let publishKeyOfA: string;
let keyOfB: string;
let disabledWebhook: string;
let narrowWebhook: string;
let mediaId: string;
/** Portal links' tokens of instance A: one that writes, one read-only, one expired. */
let linkOfA: string;
let readOnlyLinkOfA: string;
let expiredLinkOfA: string;

const UNKNOWN = {
  instance_id: 'ins_doesnotexist',
  webhook_id: 'whk_doesnotexist',
  delivery_id: 'dlv_doesnotexist',
  key_id: 'key_doesnotexist',
  link_id: 'lnk_doesnotexist',
  source_id: 'src_doesnotexist',
};

before(async () => {
  h = await startTestHerald();
  const frozen = Date.now();
  strict = await startTestHerald(
    { ALLOW_PRIVATE_DESTINATIONS: 'false', RATE_LIMIT_MANAGEMENT: '100', RATE_LIMIT_INGEST: '1000' },
    { clock: () => frozen },
  );
  guarded = await startTestHerald({ AUTH_FAILURES_PER_MIN: '30' }, { clock: () => frozen });
  receiver = await TestReceiver.start();
  doc = (await h.request('GET', '/openapi.json')).body;
  const a = await h.createInstance('A');
  const b = await h.createInstance('B');
  const webhook = await h.createWebhook(a, { destination_url: receiver.url, events: ['*'] });
  narrowWebhook = await h.createWebhook(a, {
    destination_url: receiver.url,
    events: ['message', 'session.status'],
  });
  disabledWebhook = await h.createWebhook(a, { destination_url: receiver.url, events: ['*'] }, false);
  const keyA = await h.request('POST', `/instances/${a}/keys`);
  keyOfA = keyA.body.key;
  keyOfB = (await h.request('POST', `/instances/${b}/keys`)).body.key;
  publishKeyOfA = (await h.request('POST', `/instances/${a}/keys`, { body: { scope: 'publish' } })).body.key;
  const published = await h.publish(a, { event: 'message', payload: messagePayload() });
  const delivered = await eventually(async () => {
    const list = await h.request(
      'GET',
      `/instances/${a}/deliveries?status=delivered&event_id=${published.body.event_id}`,
    );
    return list.body.deliveries[0]?.delivery_id as string | undefined;
  });
  const upload = await h.request('POST', `/instances/${a}/media`, {
    rawBody: new Uint8Array(480),
    contentType: 'image/png',
  });
  mediaId = upload.body.media_id;
  const portalLink = async (body: Record<string, unknown>) => {
    const made = await h.request('POST', `/instances/${a}/portal-links`, { body });
    return { link_id: made.body.link_id as string, token: new URL(made.body.url).hash.slice(1) };
  };
  const writing = await portalLink({});
  linkOfA = writing.token;
  readOnlyLinkOfA = (await portalLink({ read_only: true })).token;
  // Expired: the store's own record of a link whose time is up (no test waits a minute for one).
  expiredLinkOfA = 'hpl_expired-link-token-of-this-test-000000';
  await h.herald.store.portalLinks.createPortalLink({
    link_id: 'lnk_expired',
    instance_id: a,
    key_id: null,
    token_hash: hashKey(expiredLinkOfA),
    read_only: false,
    expires_at: Date.now() - 1000,
    created_at: Date.now() - 61_000,
  });
  ids = {
    instance_id: a,
    webhook_id: webhook,
    delivery_id: delivered,
    key_id: keyA.body.key_id,
    media_id: mediaId,
    link_id: writing.link_id,
    event: 'messages-upsert',
    source_id: (
      await h.request('POST', '/sources', {
        body: { url: 'amqp://127.0.0.1:1/%2F?queue=nothing-here', format: 'herald', instance_id: a },
      })
    ).body.source.source_id,
  };
});
after(async () => {
  await receiver?.close();
  await strict?.close();
  await guarded?.close();
  await h?.close();
});

interface Call extends RequestOptions {
  ids?: Record<string, string>;
  on?: TestHerald;
}

/** The operation, called with its own request body example unless the call gives another. */
function call(o: Operation, c: Call = {}): Promise<Reply> {
  const target = c.on ?? h;
  const path = fillPath(o.path, { ...ids, ...c.ids });
  const body =
    c.rawBody === undefined
      ? (c.body ?? o.op.requestBody?.content?.['application/json']?.example)
      : undefined;
  return target.request(o.method, path, { ...c, body });
}

const link = (media: string, expiresAt: number) =>
  new URL(signLink(h.herald.media.linkKey, h.url, media, expiresAt).url);

/** A message payload whose delivery body is over 256 KiB, in a request under the endpoint's limit. */
const hugeMessage = () => ({ event: 'message', payload: messagePayload({ body: 'x'.repeat(256 * 1024) }) });

type Provoke = (o: Operation) => Promise<Reply>;

/** Each principal's credential on instance A, by its role's name in a refusal (`portal_link_cannot_publish`). */
const credentialOf = (role: string): string => {
  const credentials: Record<string, string> = {
    admin: ADMIN_KEY,
    manage_key: keyOfA,
    publish_key: publishKeyOfA,
    portal_link: linkOfA,
    read_only_link: readOnlyLinkOfA,
  };
  return credentials[role];
};

/** A refusal of the rights table: the role named by the cause, calling with A's ids. */
const refusal = (cause: string): Provoke | undefined => {
  const role = /^(\w+?)_cannot_/.exec(cause)?.[1];
  return role && credentialOf(role) ? (o) => call(o, { key: credentialOf(role) }) : undefined;
};

/** Causes provoked the same way on any operation that declares them. */
const ANY: Record<string, Provoke> = {
  missing_key: (o) => call(o, { key: null }),
  unauthorized: (o) => call(o, { key: 'not-a-key-of-this-herald' }),
  portal_link_expired: (o) => call(o, { key: expiredLinkOfA }),
  admin_only_field: (o) => call(o, { key: keyOfA, body: { engine_hmac_key: 'waha-hmac-key' } }),
  invalid_key: (o) => call(o, { body: { scope: 'everything' } }),
  portal_link_not_found: (o) => call(o, { ids: { link_id: UNKNOWN.link_id } }),
  invalid_portal_link: (o) => call(o, { body: { ttl_s: 59 } }),
  invalid_path: (o) => call(o, { ids: { instance_id: 'nope' } }),
  invalid_source_path: (o) => call(o, { ids: { source_id: 'nope' } }),
  source_not_found: (o) => call(o, { ids: { source_id: UNKNOWN.source_id } }),
  invalid_source: (o) => call(o, { body: { url: 'amqp://rabbit:5672/%2F', format: 'herald' } }),
  instance_name_in_use: async (o) => {
    // A source that finds instances by name; an instance named A exists.
    const made = await h.request('POST', '/sources', {
      body: { url: 'redis://127.0.0.1:1/0?stream=s&group=g', format: 'waha' },
    });
    try {
      return await call(o, {
        ids: { instance_id: await h.createInstance(`other-${Math.random()}`) },
        body: { name: 'A' },
      });
    } finally {
      await h.request('DELETE', `/sources/${made.body.source.source_id}`);
    }
  },
  malformed_json: (o) => call(o, { rawBody: '{"name": ' }),
  not_json: (o) => call(o, { rawBody: 'name=x', contentType: 'text/plain' }),
  other_instance: (o) => call(o, { key: keyOfB }),
  instance_not_found: (o) => call(o, { ids: { instance_id: UNKNOWN.instance_id } }),
  webhook_not_found: (o) => call(o, { ids: { webhook_id: UNKNOWN.webhook_id } }),
  delivery_not_found: (o) => call(o, { ids: { delivery_id: UNKNOWN.delivery_id } }),
  key_not_found: (o) => call(o, { ids: { key_id: UNKNOWN.key_id } }),
  invalid_instance: (o) => call(o, { body: { name: 'x'.repeat(201) } }),
  invalid_webhook: (o) => call(o, { body: { destination_url: receiver.url, events: ['message', 'mesage'] } }),
  destination_not_allowed: async (o) => {
    const instance_id = await strict.createInstance();
    const webhook_id = await strict.createWebhook(
      instance_id,
      { destination_url: 'https://1.1.1.1/', events: ['*'] },
      false,
    );
    const body = { destination_url: 'https://10.0.0.5/hook', events: ['message'] };
    return call(o, { on: strict, ids: { instance_id, webhook_id }, body });
  },
  event_id_elsewhere: async (o) => {
    const other = await h.createInstance();
    const example = o.op.requestBody.content['application/json'].example;
    assert.equal((await call(o, { ids: { instance_id: other } })).status, 202, JSON.stringify(example));
    return call(o);
  },
};

/** Causes whose request depends on the operation. */
const FOR: Record<string, Provoke> = {
  'POST /instances/{instance_id}/portal-links too_many_portal_links': async (o) => {
    const full = await h.createInstance();
    for (let i = 0; i < 100; i++)
      assert.equal((await call(o, { ids: { instance_id: full }, body: {} })).status, 201);
    return call(o, { ids: { instance_id: full } });
  },
  'POST /instances/{instance_id}/webhooks too_many_webhooks': async (o) => {
    const full = await h.createInstance();
    for (let i = 0; i < 100; i++)
      await h.createWebhook(full, { destination_url: receiver.url, events: ['*'] }, false);
    return call(o, { ids: { instance_id: full } });
  },
  'POST /instances/{instance_id}/webhooks/{webhook_id}/enabled invalid_enabled': (o) => call(o, { body: {} }),
  'POST /instances/{instance_id}/webhooks/{webhook_id}/rotate-secret invalid_rotation': (o) =>
    call(o, { body: { grace_s: 604_801 } }),
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test invalid_test_event': (o) =>
    call(o, { ids: { webhook_id: narrowWebhook }, body: { event: 'message.ack' } }),
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test test_webhook_disabled': (o) =>
    call(o, { ids: { webhook_id: disabledWebhook } }),
  'POST /instances/{instance_id}/events invalid_event': (o) =>
    call(o, { body: { event: 'message', payload: { id: 'false_1555@c.us_3EB0' } } }),
  'POST /instances/{instance_id}/events event_too_large': (o) => call(o, { body: hugeMessage() }),
  'POST /instances/{instance_id}/events/batch invalid_batch': (o) => {
    const fine = { event: 'message', payload: messagePayload() };
    return call(o, {
      body: { events: [fine, fine, fine, { event: 'message', payload: { id: 'false_1555@c.us_3EB0' } }] },
    });
  },
  'POST /instances/{instance_id}/events/batch event_id_elsewhere': async (o) => {
    const body = {
      events: [{ event: 'message', payload: messagePayload(), event_id: 'evt_batch_elsewhere' }],
    };
    assert.equal((await call(o, { ids: { instance_id: await h.createInstance() }, body })).status, 202);
    return call(o, { body });
  },
  'POST /instances/{instance_id}/events/batch batch_event_too_large': (o) => {
    const fine = { event: 'message', payload: messagePayload() };
    return call(o, { body: { events: [fine, fine, fine, hugeMessage()] } });
  },
  'POST /instances/{instance_id}/engine/waha invalid_waha_event': (o) => call(o, { body: { payload: {} } }),
  'POST /instances/{instance_id}/engine/waha engine_body_too_large': (o) =>
    call(o, { body: { ...hugeMessage(), id: 'evt_huge_waha', _data: 'x'.repeat(4 * 1024 * 1024) } }),
  'POST /instances/{instance_id}/engine/waha engine_hmac': async (o) => {
    const signed = await h.createInstance();
    await h.request('PATCH', `/instances/${signed}`, { body: { engine_hmac_key: 'waha-hmac-key' } });
    return call(o, { ids: { instance_id: signed } });
  },
  'POST /instances/{instance_id}/engine/evolution invalid_evolution_event': (o) =>
    call(o, { body: { event: 'messages.upsert', data: { key: {} } } }),
  'POST /instances/{instance_id}/engine/evolution engine_body_too_large': (o) =>
    call(o, { body: { event: 'messages.upsert', data: { x: 'x'.repeat(4 * 1024 * 1024) } } }),
  'POST /instances/{instance_id}/engine/evolution engine_jwt': async (o) => {
    const signed = await h.createInstance();
    await h.request('PATCH', `/instances/${signed}`, { body: { engine_hmac_key: 'evolution-jwt-key' } });
    const expired = evolutionJwt('evolution-jwt-key', Date.now() - 3600_000);
    return call(o, { ids: { instance_id: signed }, key: expired });
  },
  'POST /instances/{instance_id}/engine/evolution/{event} invalid_evolution_event': (o) =>
    call(o, { body: { event: 'messages.upsert', data: { key: {} } } }),
  'POST /instances/{instance_id}/engine/evolution/{event} engine_body_too_large': (o) =>
    call(o, { body: { event: 'messages.upsert', data: { x: 'x'.repeat(4 * 1024 * 1024) } } }),
  'POST /instances/{instance_id}/engine/evolution/{event} engine_jwt': async (o) => {
    const signed = await h.createInstance();
    await h.request('PATCH', `/instances/${signed}`, { body: { engine_hmac_key: 'evolution-jwt-key' } });
    const expired = evolutionJwt('evolution-jwt-key', Date.now() - 3600_000);
    return call(o, { ids: { instance_id: signed }, key: expired });
  },
  'GET /instances/{instance_id}/webhooks/{webhook_id}/stats invalid_stats_hours': (o) =>
    h.request('GET', `${fillPath(o.path, ids)}?hours=169`),
  'GET /instances/{instance_id}/deliveries invalid_delivery_filter': (o) =>
    h.request('GET', `${fillPath(o.path, ids)}?status=bogus`),
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver not_redeliverable': (o) => call(o),
  'POST /instances/{instance_id}/deliveries/redeliver invalid_redelivery_range': (o) =>
    call(o, { body: { since: 'yesterday' } }),
  'POST /instances/{instance_id}/deliveries/redeliver webhook_not_found': (o) =>
    call(o, { body: { webhook_id: UNKNOWN.webhook_id } }),
  'POST /instances/{instance_id}/deliveries/redeliver redelivery_webhook_disabled': (o) =>
    call(o, { body: { webhook_id: disabledWebhook } }),
  'POST /instances/{instance_id}/media invalid_media_type': (o) =>
    call(o, { rawBody: new Uint8Array(4), contentType: 'not a type' }),
  'POST /instances/{instance_id}/media media_too_large': (o) =>
    declaredLengthOnly(fillPath(o.path, ids), 64 * 1024 * 1024 + 1),
  'GET /media/{media_id} link_forbidden': () => {
    const url = link(mediaId, Date.now() + 3600_000);
    url.searchParams.set('sig', 'altered');
    return apiRequest(h.url, 'GET', url.pathname + url.search, { key: null });
  },
  'GET /media/{media_id} link_expired': () => {
    const url = link(mediaId, Date.now() - 1000);
    return apiRequest(h.url, 'GET', url.pathname + url.search, { key: null });
  },
  'GET /media/{media_id} media_not_found': () => {
    const url = link('med_doesnotexist', Date.now() + 3600_000);
    return apiRequest(h.url, 'GET', url.pathname + url.search, { key: null });
  },
  'GET /media/{media_id} range_not_satisfiable': () => {
    const url = link(mediaId, Date.now() + 3600_000);
    return apiRequest(h.url, 'GET', url.pathname + url.search, {
      key: null,
      headers: { range: 'bytes=900-999' },
    });
  },
};

/** Causes every route of a kind shares, provoked on one operation each (they come from one hook, not the route). */
const ONCE: Record<string, [string, Provoke]> = {
  payload_too_large: ['POST /instances', (o) => call(o, { body: { name: 'x'.repeat(300 * 1024) } })],
  rate_limited: ['GET /instances', (o) => flood(() => call(o, { on: strict }), 201)],
  auth_failures_limited: [
    'GET /instances',
    async (o) => {
      for (let i = 0; i < 30; i++) assert.equal((await call(o, { on: guarded, key: 'wrong' })).status, 401);
      return call(o, { on: guarded });
    },
  ],
  ingest_rate_limited: [
    'POST /instances/{instance_id}/events',
    (o) => flood(() => call(o, { on: strict, ids: { instance_id: UNKNOWN.instance_id } }), 2001),
  ],
  database_unavailable: [
    'GET /readyz',
    async (o) => {
      await strict.herald.store.close();
      return call(o, { on: strict, key: null });
    },
  ],
};
/** A fault of Herald's own cannot be caused from outside, by design. */
const NEVER = new Set(['internal']);

/** Sends `count` requests, a few at a time; the answer of the last one. */
async function flood(send: () => Promise<Reply>, count: number): Promise<Reply> {
  let last: Reply | undefined;
  for (let sent = 0; sent < count; sent += 50) {
    const answers = await Promise.all(Array.from({ length: Math.min(50, count - sent) }, send));
    last = answers.at(-1);
  }
  return last as Reply;
}

/** A request that declares a body of `length` bytes and sends none: answered before a byte is read. */
function declaredLengthOnly(path: string, length: number): Promise<Reply> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(body), headers: new Headers() });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${ADMIN_KEY}\r\n` +
        `content-type: image/png\r\ncontent-length: ${length}\r\n\r\n`,
    );
  });
}

test('every error an operation declares is what Herald answers when it happens', async () => {
  const check = schemaValidator(doc);
  const unprovoked: string[] = [];
  let provoked = 0;
  // The stores closed by database_unavailable and the buckets drained by the floods go last.
  const ordered = operations(doc).flatMap((o) =>
    [...declaredCauses(o.op)].map(([cause, d]) => ({ o, cause, d })),
  );
  ordered.sort((x, y) => Number(x.cause in ONCE) - Number(y.cause in ONCE));
  for (const { o, cause, d } of ordered) {
    const where = `${o.name} ${cause}`;
    if (NEVER.has(cause)) continue;
    const once = ONCE[cause];
    if (once && once[0] !== o.name) continue;
    const provoke = FOR[where] ?? ANY[cause] ?? once?.[1] ?? refusal(cause);
    if (!provoke) {
      unprovoked.push(where);
      continue;
    }
    const r = await provoke(o);
    assert.equal(r.status, d.status, `${where}: ${JSON.stringify(r.body)}`);
    assert.equal(check(['components', 'schemas', 'Error'], r.body), null, `${where}: the Error schema`);
    assert.equal(
      withoutIds(JSON.stringify(r.body)),
      withoutIds(JSON.stringify(d.example)),
      `${where}: the example`,
    );
    provoked++;
  }
  assert.deepEqual(unprovoked, [], 'declared causes no request here provokes');
  for (const [cause, [name]] of Object.entries(ONCE)) {
    const o = operations(doc).find((x) => x.name === name);
    assert.ok(o && declaredCauses(o.op).has(cause), `${name} declares ${cause}`);
  }
  assert.ok(provoked > 150, `${provoked} errors provoked`);
});
