/**
 * The /sources API: each part of a url checked (400 naming it), the formats Herald reads, an unknown instance named,
 * the password sealed at rest and shown as ****, **** given back keeping it (for the same server and user only),
 * the admin alone, and a second instance of a name a source finds instances by refused with 409.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { openSecretBox } from '../../src/secret-key.ts';
import { startTestHerald, TEST_ENV, type TestHerald } from '../support/herald.ts';

let h: TestHerald;
let instanceId: string;
// Nothing listens there: the source's consumer only retries while the test looks at its configuration.
const URL_WITH_PASSWORD = 'redis://herald:s3cret-pw@127.0.0.1:1/2?stream=events&group=herald';

before(async () => {
  h = await startTestHerald();
  instanceId = await h.createInstance('sales');
});
after(() => h.close());

/** What the store keeps sealed, opened with this Herald's own key. */
async function openSealed(sealed: string): Promise<string> {
  const box = await openSecretBox(loadConfig({ ...TEST_ENV, DATA_DIR: h.dataDir }), h.herald.store);
  return box.open(sealed);
}

const create = (body: Record<string, unknown>) => h.request('POST', '/sources', { body });

test('each part of the url is checked, and the 400 names it', async () => {
  const cases: [string, RegExp][] = [
    ['ftp://host/x', /url: unknown scheme "ftp:"/],
    ['amqp://host:99999/%2F?queue=q', /url: the port must be a whole number/],
    ['amqp://host/%2F', /url: an amqp source needs \?queue=/],
    ['amqp://host/%2F?queue=q&binding=k', /url: binding needs exchange/],
    ['amqp://host/%2F?queue=q&routing_key=k', /url: unknown parameter "routing_key"/],
    ['nats://host/?consumer=c', /url: a nats source needs the stream/],
    ['nats://host/EVENTS', /url: a nats source needs \?consumer=/],
    ['nats://host/EV.ENTS?consumer=c', /url: the stream is 1 to 200 letters/],
    ['redis://host/0?stream=s', /url: a redis source needs \?group=/],
    ['redis://host/x?stream=s&group=g', /url: the database \(path\) must be a whole number/],
    ['redis://host/0?stream=s&group=g#f', /url: must not have a #fragment/],
  ];
  for (const [url, message] of cases) {
    const r = await create({ url, format: 'herald', instance_id: instanceId });
    assert.equal(r.status, 400, url);
    assert.equal(r.body.error.details[0].field, 'url', url);
    assert.match(r.body.error.message, message, url);
  }
});

test('a format Herald does not read, and an instance that does not exist, are refused naming them', async () => {
  const url = 'amqp://127.0.0.1:1/%2F?queue=q';
  const kafka = await create({ url, format: 'kafka' });
  assert.equal(kafka.status, 400);
  assert.match(kafka.body.error.message, /^format: must be one of herald, waha/);
  const missing = await create({ url, format: 'herald', instance_id: 'ins_nosuchinstance' });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.message, 'instance_id: no instance ins_nosuchinstance');
});

test('the password is sealed at rest, shown as ****, and **** given back keeps it', async () => {
  const made = await create({ url: URL_WITH_PASSWORD, format: 'herald', instance_id: instanceId });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const { source } = made.body;
  assert.equal(source.url, 'redis://herald:****@127.0.0.1:1/2?stream=events&group=herald');
  assert.equal(source.state, 'connecting');
  assert.deepEqual([source.received, source.ingested, source.duplicates, source.parked], [0, 0, 0, 0]);
  const stored = await h.herald.store.sources.getSource(source.source_id);
  assert.ok(stored?.url_sealed && !stored.url_sealed.includes('s3cret-pw'));
  assert.ok(!JSON.stringify(stored).includes('s3cret-pw'), 'nowhere in the row in clear');
  const listed = await h.request('GET', '/sources');
  assert.ok(!JSON.stringify(listed.body).includes('s3cret-pw'));

  // Another stream, the same server and user: the password stays.
  const kept = await h.request('PATCH', `/sources/${source.source_id}`, {
    body: { url: 'redis://herald:****@127.0.0.1:1/2?stream=other&group=herald', format: 'waha' },
  });
  assert.equal(kept.status, 200, JSON.stringify(kept.body));
  assert.equal(kept.body.source.format, 'waha');
  assert.equal(kept.body.source.instance_id, null);
  const resealed = await h.herald.store.sources.getSource(source.source_id);
  assert.equal(
    resealed?.url_sealed && (await openSealed(resealed.url_sealed)),
    'redis://herald:s3cret-pw@127.0.0.1:1/2?stream=other&group=herald',
  );
  // Another host: **** cannot carry the password there.
  const elsewhere = await h.request('PATCH', `/sources/${source.source_id}`, {
    body: { url: 'redis://herald:****@10.1.2.3:6379/2?stream=other&group=herald', format: 'waha' },
  });
  assert.equal(elsewhere.status, 400);
  assert.match(elsewhere.body.error.message, /^url: \*\*\*\* stands for the source's current password/);
  assert.equal((await h.request('DELETE', `/sources/${source.source_id}`)).status, 200);
  assert.equal((await h.request('GET', `/sources/${source.source_id}`)).status, 404);
  assert.equal((await h.request('DELETE', `/sources/${source.source_id}`)).status, 404);
});

test('while a source finds instances by name, a second instance of a taken name is a 409', async () => {
  const made = await create({ url: 'amqp://127.0.0.1:1/%2F?queue=q', format: 'waha' });
  assert.equal(made.status, 201);
  try {
    const second = await h.request('POST', '/instances', { body: { name: 'sales' } });
    assert.equal(second.status, 409);
    assert.match(second.body.error.message, /another instance is named "sales"/);
    const other = await h.createInstance('other-name');
    const renamed = await h.request('PATCH', `/instances/${other}`, { body: { name: 'sales' } });
    assert.equal(renamed.status, 409);
    // Its own name again is no conflict.
    assert.equal(
      (await h.request('PATCH', `/instances/${instanceId}`, { body: { name: 'sales' } })).status,
      200,
    );
  } finally {
    await h.request('DELETE', `/sources/${made.body.source.source_id}`);
  }
  // Without such a source, names may repeat as before.
  assert.equal((await h.request('POST', '/instances', { body: { name: 'sales' } })).status, 201);
});

test('sources are the admin’s alone', async () => {
  const key = (await h.request('POST', `/instances/${instanceId}/keys`)).body.key;
  const r = await h.request('GET', '/sources', { key });
  assert.equal(r.status, 403);
});
