/**
 * Evolution API's webhook bodies (test/fixtures/evolution-events.ts: built from Evolution's own source, each citing
 * the function) posted to the engine endpoint as Evolution posts them: each is accepted, makes the Herald kinds its
 * mapping says, in order, and is delivered in the delivery format with the mapped fields, while `_evolution` is
 * Evolution's `data` unchanged but for the inline file. Kinds Herald has none for go only to `*`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EVENT_KINDS } from '../../src/domain/events.ts';
import {
  deliveredData,
  EVOLUTION_EVENTS,
  INLINE_IMAGE,
  S3_BASE,
  withS3,
} from '../fixtures/evolution-events.ts';
import { EngineFiles } from '../support/engine.ts';
import { postEvolution } from '../support/evolution-sender.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;

let h: TestHerald;
let files: EngineFiles;
let all: TestReceiver;
let catalog: TestReceiver;

before(async () => {
  files = await EngineFiles.start();
  h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: files.prefix });
  all = await TestReceiver.start();
  catalog = await TestReceiver.start();
});
after(async () => {
  await Promise.all([files.close(), all.close(), catalog.close()]);
  await h.close();
});

/** Evolution's S3 links of a body, served by the file server: the body with them pointed at it, and the bytes. */
function serveS3(body: Obj): { body: Obj; bytes: Map<string, Buffer> } {
  const bytes = new Map<string, Buffer>();
  const moved = withS3(body, `${files.base}/api/files`);
  const url = moved.data?.message?.mediaUrl;
  if (typeof url === 'string' && !JSON.stringify(body).includes(INLINE_IMAGE.toString('base64'))) {
    const file = Buffer.from(`s3 file ${url}`);
    files.serve(new URL(url).pathname.replace(/^\/api\/files\//, ''), { bytes: file, type: 'image/jpeg' });
    bytes.set(url, file);
  }
  return { body: moved, bytes };
}

test(`${EVOLUTION_EVENTS.length} Evolution API bodies (Baileys and Cloud API): each mapped, delivered, its data kept`, async () => {
  const mapped = new Set(EVOLUTION_EVENTS.flatMap((f) => f.kinds).filter((k) => EVENT_KINDS.includes(k)));
  for (const kind of ['message', 'message.any', 'message.ack', 'message.reaction', 'message.edited']) {
    assert.ok(mapped.has(kind), `a fixture makes ${kind}`);
  }
  const sent = new Map<string, { name: string; body: Obj; fields: Obj; bytes: Map<string, Buffer> }>();
  let expectedAll = 0;
  let expectedCatalog = 0;
  for (const fixture of EVOLUTION_EVENTS) {
    // An instance each: the two reports of one revoke are one event at one instance (tested on their own).
    const ins = await h.createInstance(fixture.name);
    await h.createWebhook(ins, { destination_url: all.url, events: ['*'], ignore_status: false });
    await h.createWebhook(ins, {
      destination_url: catalog.url,
      events: [...EVENT_KINDS],
      ignore_status: false,
    });
    const { body, bytes } = serveS3(fixture.body);
    const res = await postEvolution(h.url, ins, body);
    assert.equal(res.status, 202, `${fixture.name}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(
      res.body.events.map((e: Obj) => e.event),
      fixture.kinds,
      `${fixture.name}: the kinds, in order`,
    );
    assert.equal(res.body.event_id, res.body.events[0].event_id, fixture.name);
    for (const e of res.body.events) {
      sent.set(e.event_id, { name: fixture.name, body, fields: fixture.fields, bytes });
      expectedAll++;
      if (EVENT_KINDS.includes(e.event)) expectedCatalog++;
    }
  }
  const [toAll, toCatalog] = await Promise.all([
    all.waitFor(expectedAll, 30_000),
    catalog.waitFor(expectedCatalog, 30_000),
  ]);
  assert.ok(
    toCatalog.every((r) => EVENT_KINDS.includes(r.body.event)),
    'kinds outside the catalog only to *',
  );
  for (const got of toAll) {
    const { name, body, fields, bytes } = sent.get(got.body.event_id) ?? assert.fail('an event Herald made');
    assert.deepEqual(
      Object.keys(got.body),
      ['event_id', 'event', 'instance_id', 'timestamp', 'payload'],
      name,
    );
    const { _evolution, media, ...rest } = got.body.payload;
    assert.deepEqual(_evolution, deliveredData(body), `${name}: _evolution is Evolution's data`);
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'media') assert.equal(value === null ? media : media?.status, value, `${name}: media`);
      else assert.deepEqual(rest[field], value, `${name}: ${field}`);
    }
    // Nothing of Evolution's body beside data is delivered.
    for (const field of ['instance', 'destination', 'server_url', 'date_time', 'sender', 'apikey']) {
      assert.ok(!(field in got.body.payload), `${name}: no ${field}`);
    }
    const isMessage = ['message', 'message.any', 'message.reaction'].includes(got.body.event);
    if (isMessage) assert.equal(got.body.timestamp, body.data.messageTimestamp * 1000, `${name}: timestamp`);
    if (media?.status === 'ready') {
      const download = await fetch(media.url);
      assert.equal(download.status, 200, `${name}: Herald's link`);
      const url = body.data.message.mediaUrl;
      const expected = bytes.get(url) ?? Buffer.from(body.data.message.base64, 'base64');
      assert.deepEqual(Buffer.from(await download.arrayBuffer()), expected, `${name}: the file`);
    }
  }
  assert.ok(!JSON.stringify(toAll.map((r) => r.body)).includes(S3_BASE), 'every S3 link was the test server');
});
