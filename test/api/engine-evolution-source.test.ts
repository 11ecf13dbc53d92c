/**
 * Evolution API's bodies taken from a queue (a source in format `evolution`, on the real RabbitMQ and NATS
 * JetStream) as Evolution publishes them there: each fixture makes the kinds, payloads and event ids its webhook
 * route makes (a body both queued and posted is one event set), its inline file is stored once per body and served
 * byte for byte, a body queued twice is one event set counted as a duplicate, and a body Evolution's reader refuses
 * or naming no instance is parked with the reason. Counters are per message, whatever the number of its events.
 * Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  deliveredData,
  EVOLUTION_EVENTS,
  evolutionBody,
  INLINE_IMAGE,
  withS3,
} from '../fixtures/evolution-events.ts';
import { pngImage, sha256 } from '../media/files.ts';
import { natsConsumerFirst, type TestQueue, testQueue } from '../sources/rig.ts';
import { EngineFiles } from '../support/engine.ts';
import { postEvolution } from '../support/evolution-sender.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;

let h: TestHerald;
let files: EngineFiles;
let receiver: TestReceiver;

before(async () => {
  files = await EngineFiles.start();
  h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: files.prefix });
  receiver = await TestReceiver.start();
});
after(async () => {
  await Promise.all([files.close(), receiver.close()]);
  await h.close();
});

const source = async (id: string) => (await h.request('GET', `/sources/${id}`)).body.source;
const counts = (s: Obj) => ({
  received: s.received,
  ingested: s.ingested,
  duplicates: s.duplicates,
  parked: s.parked,
});

/** A source of format evolution on the queue, finding instances by Evolution's `instance`. */
async function evolutionSource(q: TestQueue): Promise<string> {
  const created = await h.request('POST', '/sources', { body: { url: q.url(), format: 'evolution' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.source.source_id;
}

async function waitCounts(id: string, want: Obj, what: string): Promise<Obj> {
  return eventually(
    async () => {
      const s = await source(id);
      return Object.entries(want).every(([k, v]) => s[k] === v) ? s : undefined;
    },
    30_000,
    what,
  );
}

/** A new instance named `name`, with a webhook for every kind to the receiver. */
async function instance(name: string): Promise<string> {
  const ins = await h.createInstance(name);
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'], ignore_status: false });
  return ins;
}

const deliveredTo = (ins: string) => receiver.received.filter((r) => r.body.instance_id === ins);

for (const kind of ['amqp', 'nats'] as const) {
  describe(`${kind} source, evolution format`, () => {
    test(`${EVOLUTION_EVENTS.length} Evolution bodies: delivered as the webhook route delivers them, with its event ids`, async () => {
      const q = await testQueue(kind);
      const run = randomBytes(4).toString('hex');
      try {
        if (kind === 'nats') await natsConsumerFirst(q);
        const sent: { ins: string; body: Obj; kinds: string[]; fields: Obj; bytes: Buffer | null }[] = [];
        for (const [i, fixture] of EVOLUTION_EVENTS.entries()) {
          // An instance each, named as Evolution's `instance` names it.
          const name = `evo-${run}-${i}`;
          const ins = await instance(name);
          const body: Obj = { ...withS3(fixture.body, `${files.base}/api/files`), instance: name };
          const url = body.data?.message?.mediaUrl;
          let bytes: Buffer | null = null;
          if (typeof body.data?.message?.base64 === 'string')
            bytes = Buffer.from(body.data.message.base64, 'base64');
          else if (typeof url === 'string') {
            bytes = Buffer.from(`s3 file ${url}`);
            files.serve(new URL(url).pathname.replace(/^\/api\/files\//, ''), { bytes, type: 'image/jpeg' });
          }
          sent.push({ ins, body, kinds: fixture.kinds, fields: fixture.fields, bytes });
          // Evolution's queued body is its webhook body without `destination`.
          const { destination: _, ...queued } = body;
          await q.publish(JSON.stringify(queued));
        }
        const id = await evolutionSource(q);
        const n = EVOLUTION_EVENTS.length;
        await waitCounts(id, { ingested: n }, `${n} messages ingested`);
        const events = sent.reduce((sum, s) => sum + s.kinds.length, 0);
        await eventually(
          async () => (sent.every((s) => deliveredTo(s.ins).length >= s.kinds.length) ? true : undefined),
          30_000,
          `${events} deliveries`,
        );
        for (const { ins, body, kinds, fields, bytes } of sent) {
          const got = deliveredTo(ins).map((r) => r.body);
          const name = `${body.event} (${kinds.join(', ')})`;
          assert.deepEqual(
            got.map((g) => g.event).sort(),
            [...kinds].sort(),
            `${name}: the kinds, each once`,
          );
          const mediaIds = new Set<string>();
          for (const g of got) {
            const { _evolution, media, ...rest } = g.payload;
            assert.deepEqual(_evolution, deliveredData(body), `${name}: _evolution is Evolution's data`);
            for (const [field, value] of Object.entries(fields)) {
              if (field === 'media')
                assert.equal(value === null ? media : media?.status, value, `${name}: media`);
              else assert.deepEqual(rest[field], value, `${name}: ${field}`);
            }
            if (media?.status === 'ready') {
              mediaIds.add(media.media_id);
              const download = await fetch(media.url);
              assert.equal(download.status, 200, `${name}: Herald's link`);
              assert.deepEqual(Buffer.from(await download.arrayBuffer()), bytes, `${name}: the file`);
            }
          }
          assert.ok(mediaIds.size <= 1, `${name}: one stored file for the body's events`);
          // The webhook route makes the same events: posting the body now is the same event set, in the same order.
          const res = await postEvolution(h.url, ins, body);
          assert.equal(res.status, 202, JSON.stringify(res.body));
          assert.deepEqual(
            res.body.events.map((e: Obj) => e.event),
            kinds,
            `${name}: the kinds, in order`,
          );
          assert.deepEqual(
            res.body.events.map((e: Obj) => e.event_id).sort(),
            got.map((g) => g.event_id).sort(),
            `${name}: the webhook route's event ids`,
          );
        }
        assert.deepEqual(counts(await source(id)), { received: n, ingested: n, duplicates: 0, parked: 0 });
        await h.request('DELETE', `/sources/${id}`);
      } finally {
        await q.remove();
      }
    });

    test('a body queued twice is one event set; a refused body and an unknown instance are parked with the reason', async () => {
      const q = await testQueue(kind);
      const run = randomBytes(4).toString('hex');
      try {
        if (kind === 'nats') await natsConsumerFirst(q);
        const name = `evo-twice-${run}`;
        const ins = await instance(name);
        const png = pngImage(20);
        // A new message with its file inline: a message and a message.any sharing one stored file.
        const body = evolutionBody(
          'messages.upsert',
          {
            key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe: false, id: `3EB0TWICE${run}` },
            message: {
              imageMessage: { url: 'https://mmg.whatsapp.net/enc', mimetype: 'image/png', caption: 'foto' },
              base64: png.toString('base64'),
            },
            messageType: 'imageMessage',
            messageTimestamp: 1795341600,
          },
          { instance: name },
        );
        await q.publish(JSON.stringify(body));
        await q.publish(JSON.stringify(body));
        await q.publish(JSON.stringify({ ...body, data: { key: { id: 'no-chat' }, message: {} } }));
        await q.publish(JSON.stringify({ ...body, instance: `nobody-${run}` }));
        const id = await evolutionSource(q);
        const want = { received: 4, ingested: 1, duplicates: 1, parked: 2 };
        await waitCounts(id, want, 'per message: 1 ingested, 1 duplicate, 2 parked');
        const delivered = await eventually(
          async () => (deliveredTo(ins).length >= 2 ? deliveredTo(ins) : undefined),
          15_000,
          'message and message.any',
        );
        const got = delivered.map((r) => r.body);
        assert.deepEqual(got.map((g) => g.event).sort(), ['message', 'message.any']);
        const [a, b] = got.map((g) => g.payload.media);
        assert.equal(a.status, 'ready', JSON.stringify(a));
        assert.deepEqual(a, b, 'one media object');
        assert.equal(a.sha256, sha256(png));
        assert.deepEqual(Buffer.from(await (await fetch(a.url)).arrayBuffer()), png, 'byte for byte');
        assert.ok(!JSON.stringify(got).includes(INLINE_IMAGE.toString('base64')));
        const parked = (await h.request('GET', `/sources/${id}/parked`)).body.parked;
        assert.equal(parked.length, 2);
        assert.match(parked[0].reason, /data\.key\.fromMe/);
        assert.match(parked[1].reason, new RegExp(`no instance named "nobody-${run}"`));
        // Nothing more came for the duplicate once it was counted: still the one event set.
        assert.equal(deliveredTo(ins).length, 2);
        await h.request('DELETE', `/sources/${id}`);
      } finally {
        await q.remove();
      }
    });
  });
}
