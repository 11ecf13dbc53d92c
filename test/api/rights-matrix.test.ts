/**
 * The rights matrix, generated from /openapi.json: every operation it documents is called by every principal — the
 * admin, a manage key, a publish key, a portal link, a read-only portal link, and a key and a link of a second
 * instance — with valid ids of the principal's instance, and the answer is the cell of the tenant boundary's table:
 * allowed (anything but 401 or 403) or 403; another instance's credential on this instance's path is always 403.
 * The rows are this test's own, written from the product's table, so a new operation the test does not know fails
 * it rather than pass unchecked. On either store.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_KEY, type Reply, startTestHerald, type TestHerald } from '../support/herald.ts';
import { fillPath, type Json, type Operation, operations } from '../support/openapi-doc.ts';
import { TestReceiver } from '../support/receiver.ts';

type Principal = 'admin' | 'manage' | 'publish' | 'link' | 'readOnly';
const PRINCIPALS: Principal[] = ['admin', 'manage', 'publish', 'link', 'readOnly'];

/** The table's rows: who may (✓) call an operation of each. */
// biome-ignore format: the product's table, one row a line
const ROWS = {
  adminOnly:       { admin: true, manage: false, publish: false, link: false, readOnly: false },
  portalLinks:     { admin: true, manage: true,  publish: false, link: false, readOnly: false },
  read:            { admin: true, manage: true,  publish: true,  link: true,  readOnly: true  },
  changeInstance:  { admin: true, manage: true,  publish: false, link: false, readOnly: false },
  publish:         { admin: true, manage: true,  publish: true,  link: false, readOnly: false },
  readWebhooks:    { admin: true, manage: true,  publish: false, link: true,  readOnly: true  },
  writeWebhooks:   { admin: true, manage: true,  publish: false, link: true,  readOnly: false },
  readDeliveries:  { admin: true, manage: true,  publish: false, link: true,  readOnly: true  },
  redeliver:       { admin: true, manage: true,  publish: false, link: true,  readOnly: false },
  ownLink:         { admin: false, manage: false, publish: false, link: true, readOnly: true  },
} satisfies Record<string, Record<Principal, boolean>>;
type Row = keyof typeof ROWS;

/** Each operation of the document, in its row. */
// biome-ignore format: one operation a line
const ROW_OF: Record<string, Row> = {
  'POST /instances':                                                     'adminOnly',
  'DELETE /instances/{instance_id}':                                     'adminOnly',
  'POST /instances/{instance_id}/keys':                                  'adminOnly',
  'GET /instances/{instance_id}/keys':                                   'adminOnly',
  'DELETE /instances/{instance_id}/keys/{key_id}':                       'adminOnly',
  'GET /metrics':                                                        'adminOnly',
  'POST /sources':                                                       'adminOnly',
  'GET /sources':                                                        'adminOnly',
  'GET /sources/{source_id}':                                            'adminOnly',
  'PATCH /sources/{source_id}':                                          'adminOnly',
  'DELETE /sources/{source_id}':                                         'adminOnly',
  'GET /sources/{source_id}/parked':                                     'adminOnly',
  'POST /instances/{instance_id}/portal-links':                          'portalLinks',
  'GET /instances/{instance_id}/portal-links':                           'portalLinks',
  'DELETE /instances/{instance_id}/portal-links/{link_id}':              'portalLinks',
  'GET /instances':                                                      'read',
  'GET /instances/{instance_id}':                                        'read',
  'PATCH /instances/{instance_id}':                                      'changeInstance',
  'POST /instances/{instance_id}/events':                                'publish',
  'POST /instances/{instance_id}/events/batch':                          'publish',
  'POST /instances/{instance_id}/engine/waha':                           'publish',
  'POST /instances/{instance_id}/engine/evolution':                      'publish',
  'POST /instances/{instance_id}/engine/evolution/{event}':              'publish',
  'POST /instances/{instance_id}/media':                                 'publish',
  'GET /instances/{instance_id}/webhooks':                               'readWebhooks',
  'GET /instances/{instance_id}/webhooks/{webhook_id}':                  'readWebhooks',
  'GET /instances/{instance_id}/webhooks/{webhook_id}/stats':            'readWebhooks',
  'POST /instances/{instance_id}/webhooks':                              'writeWebhooks',
  'PATCH /instances/{instance_id}/webhooks/{webhook_id}':                'writeWebhooks',
  'DELETE /instances/{instance_id}/webhooks/{webhook_id}':               'writeWebhooks',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/enabled':         'writeWebhooks',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test':            'writeWebhooks',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/rotate-secret':   'writeWebhooks',
  'GET /instances/{instance_id}/deliveries':                             'readDeliveries',
  'GET /instances/{instance_id}/deliveries/{delivery_id}':               'readDeliveries',
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver':    'redeliver',
  'POST /instances/{instance_id}/deliveries/redeliver':                  'redeliver',
  'GET /portal-link':                                                    'ownLink',
};

let h: TestHerald;
let receiver: TestReceiver;
let doc: Json;
let instanceA: string;
/** Ids on instance A, which every principal of A acts on. */
let ids: Record<string, string>;
/** The credentials of A's principals, and of B's key and link. */
const credential = {} as Record<Principal, string>;
let keyOfB: string;
let linkOfB: string;

async function linkOf(instanceId: string, readOnly = false) {
  const made = await h.request('POST', `/instances/${instanceId}/portal-links`, {
    body: { read_only: readOnly },
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { link_id: made.body.link_id as string, token: new URL(made.body.url).hash.slice(1) };
}

before(async () => {
  h = await startTestHerald();
  receiver = await TestReceiver.start();
  doc = (await h.request('GET', '/openapi.json')).body;
  instanceA = await h.createInstance('A');
  const b = await h.createInstance('B');
  const webhook = await h.createWebhook(instanceA, { destination_url: receiver.url, events: ['*'] });
  const key = await h.request('POST', `/instances/${instanceA}/keys`);
  credential.admin = ADMIN_KEY;
  credential.manage = key.body.key;
  credential.publish = (
    await h.request('POST', `/instances/${instanceA}/keys`, { body: { scope: 'publish' } })
  ).body.key;
  const link = await linkOf(instanceA);
  credential.link = link.token;
  credential.readOnly = (await linkOf(instanceA, true)).token;
  keyOfB = (await h.request('POST', `/instances/${b}/keys`)).body.key;
  linkOfB = (await linkOf(b)).token;
  const published = await h.publish(instanceA, {
    event: 'message',
    payload: { id: 'false_1@c.us_MATRIX', fromMe: false, from: '1@c.us', body: 'hi' },
  });
  assert.equal(published.status, 202);
  const deliveries = await h.request('GET', `/instances/${instanceA}/deliveries`);
  ids = {
    instance_id: instanceA,
    webhook_id: webhook,
    delivery_id: deliveries.body.deliveries[0].delivery_id,
    key_id: key.body.key_id,
    link_id: link.link_id,
    event: 'messages-upsert',
    source_id: await sourceOf(instanceA),
  };
});

/** A source of the instance's, on a broker address nothing listens on (its consumer only retries). */
const sourceOf = async (instanceId: string): Promise<string> =>
  (
    await h.request('POST', '/sources', {
      body: { url: 'amqp://127.0.0.1:1/%2F?queue=nothing-here', format: 'herald', instance_id: instanceId },
    })
  ).body.source.source_id;
after(async () => {
  await receiver?.close();
  await h?.close();
});

/**
 * Ids for one call: A's, but for a deletion a fresh resource of A of its own, so that a call allowed to delete never
 * takes away what the next principal's call needs (the instance itself, its key, its link, its webhook).
 */
async function idsFor(o: Operation, principal: Principal): Promise<Record<string, string>> {
  if (o.method !== 'DELETE') return ids;
  const fresh = { ...ids };
  if (o.path === '/instances/{instance_id}' && principal === 'admin')
    fresh.instance_id = await h.createInstance();
  if (o.path.endsWith('/{key_id}'))
    fresh.key_id = (await h.request('POST', `/instances/${instanceA}/keys`)).body.key_id;
  if (o.path.endsWith('/{link_id}')) fresh.link_id = (await linkOf(instanceA)).link_id;
  if (o.path.endsWith('/{source_id}')) fresh.source_id = await sourceOf(instanceA);
  if (o.path.endsWith('/{webhook_id}'))
    fresh.webhook_id = await h.createWebhook(
      instanceA,
      { destination_url: receiver.url, events: ['*'] },
      false,
    );
  return fresh;
}

/** The operation as a client would call it: its documented request example, the raw bytes of an upload. */
function call(o: Operation, key: string, callIds: Record<string, string>): Promise<Reply> {
  const path = fillPath(o.path, callIds);
  if (o.op.requestBody?.content?.['application/json'] === undefined && o.op.requestBody !== undefined)
    return h.request(o.method, path, { key, rawBody: new Uint8Array(32), contentType: 'image/png' });
  // A rename only: the example also sets engine_hmac_key, a field of the admin's (rights.test.ts checks that).
  if (o.name === 'PATCH /instances/{instance_id}')
    return h.request(o.method, path, { key, body: { name: 'A' } });
  return h.request(o.method, path, { key, body: o.op.requestBody?.content['application/json'].example });
}

const allowed = (r: Reply) => r.status !== 401 && r.status !== 403 && r.status < 500;
const refused = (r: Reply) => r.status === 403 && r.body?.error?.code === 'forbidden';

test('every operation of /openapi.json answers each principal as its row of the table says', async () => {
  const documented = operations(doc).filter(
    (o) => !(Array.isArray(o.op.security) && o.op.security.length === 0),
  );
  const unknown = documented.filter((o) => ROW_OF[o.name] === undefined).map((o) => o.name);
  assert.deepEqual(
    unknown,
    [],
    'operations without a row in this test: say which row of the table each is in',
  );
  const wrong: string[] = [];
  let cells = 0;
  for (const o of documented) {
    const row = ROWS[ROW_OF[o.name]];
    for (const principal of PRINCIPALS) {
      const r = await call(o, credential[principal], await idsFor(o, principal));
      const ok = row[principal] ? allowed(r) : refused(r);
      if (!ok) wrong.push(`${o.name} as ${principal}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      cells++;
    }
    // A key and a link of instance B: refused on A's paths; elsewhere, what their kind may do.
    for (const [principal, key] of [
      ['manage', keyOfB],
      ['link', linkOfB],
    ] as const) {
      const r = await call(o, key, await idsFor(o, principal));
      const onA = o.path.includes('{instance_id}');
      const ok = onA || !row[principal] ? refused(r) : allowed(r);
      if (!ok)
        wrong.push(
          `${o.name} as instance B's ${principal}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
        );
      cells++;
    }
  }
  assert.deepEqual(wrong, []);
  assert.ok(documented.length >= 25, `only ${documented.length} operations documented (${cells} cells)`);
});

test('/openapi.json itself (not in the document) is read by every principal', async () => {
  for (const key of [...Object.values(credential), keyOfB, linkOfB]) {
    const r = await h.request('GET', '/openapi.json', { key });
    assert.equal(r.status, 200);
  }
});

test('GET /instances: the admin sees every instance, anyone else its own alone', async () => {
  const seen = async (key: string) =>
    (await h.request('GET', '/instances', { key })).body.instances.map(
      (i: { instance_id: string }) => i.instance_id,
    );
  assert.ok((await seen(ADMIN_KEY)).length >= 2);
  for (const principal of ['manage', 'publish', 'link', 'readOnly'] as const)
    assert.deepEqual(await seen(credential[principal]), [instanceA], principal);
  assert.equal((await seen(keyOfB)).includes(instanceA), false);
});
