/**
 * Each broker and format: messages published into a queue Herald consumes are each stored and delivered once, the
 * source's counters say so, and nothing is left unacknowledged; a message that can never be ingested is parked with
 * its reason and acknowledged, while the messages after it go on being ingested.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type Format, messageBody, numberOf } from './messages.ts';
import { KINDS, natsConsumerFirst, type TestQueue, testQueue } from './rig.ts';

const N = 200;
let herald: TestHerald;
let receiver: TestReceiver;
let instanceId: string;

before(async () => {
  herald = await startTestHerald();
  receiver = await TestReceiver.start();
  instanceId = await herald.createInstance('default');
  await herald.createWebhook(instanceId, { destination_url: receiver.url, events: ['*'] });
});
after(async () => {
  await herald.close();
  await receiver.close();
});

const source = async (id: string) => (await herald.request('GET', `/sources/${id}`)).body.source;

/** The broker's own count, where it gives one. */
async function nothingUnacked(q: TestQueue): Promise<void> {
  if ((await q.unacked()) === null) return;
  await eventually(async () => ((await q.unacked()) === 0 ? true : undefined), 15_000, 'nothing unacked');
}

/** Once the source is deleted (every process stops within a second), anything unacked would be back, waiting. */
async function nothingLeft(q: TestQueue): Promise<void> {
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await q.waiting(), 0, 'nothing waiting or unacknowledged in the queue');
}

for (const kind of KINDS) {
  for (const format of ['herald', 'waha'] as Format[]) {
    describe(`${kind} source, ${format} format`, () => {
      test(`${N} messages: each stored and delivered once, counted, nothing left unacknowledged`, async () => {
        const q = await testQueue(kind);
        const run = randomBytes(4).toString('hex');
        try {
          if (kind === 'nats') await natsConsumerFirst(q);
          // Half waiting before the source exists, half while it consumes.
          for (let n = 0; n < N / 2; n++) await q.publish(messageBody(format, n, run));
          const body = { url: q.url(), format, ...(format === 'herald' ? { instance_id: instanceId } : {}) };
          const created = await herald.request('POST', '/sources', { body });
          assert.equal(created.status, 201, JSON.stringify(created.body));
          const id = created.body.source.source_id;
          for (let n = N / 2; n < N; n++) await q.publish(messageBody(format, n, run));
          await eventually(
            async () => ((await source(id)).ingested === N ? true : undefined),
            30_000,
            `${N} ingested`,
          );
          const mine = () => receiver.received.filter((r) => r.body.payload?.id?.includes(`_${run}_`));
          await eventually(async () => (mine().length >= N ? true : undefined), 30_000, 'deliveries');
          const numbers = mine().map((r) => numberOf(r.body));
          assert.equal(new Set(numbers).size, N);
          assert.equal(numbers.length, N, 'each delivered once');
          const s = await source(id);
          assert.deepEqual(
            {
              state: s.state,
              received: s.received,
              ingested: s.ingested,
              duplicates: s.duplicates,
              parked: s.parked,
            },
            { state: 'consuming', received: N, ingested: N, duplicates: 0, parked: 0 },
          );
          await nothingUnacked(q);
          assert.equal((await herald.request('DELETE', `/sources/${id}`)).status, 200);
          await nothingLeft(q);
        } finally {
          await q.remove();
        }
      });

      test('a poison message is parked with its reason and acknowledged; the ones after it are ingested', async () => {
        const q = await testQueue(kind);
        const run = randomBytes(4).toString('hex');
        try {
          if (kind === 'nats') await natsConsumerFirst(q);
          await q.publish('{"not json', 'poison-1');
          // Herald's format: an invalid payload; WAHA's: a session no instance is named.
          await q.publish(
            JSON.stringify({ event: 'message', payload: 'not an object', session: 'nobody' }),
            'poison-2',
          );
          for (let n = 0; n < 10; n++) await q.publish(messageBody(format, n, run), `${run}-${n}`);
          const body = { url: q.url(), format, ...(format === 'herald' ? { instance_id: instanceId } : {}) };
          const id = (await herald.request('POST', '/sources', { body })).body.source.source_id;
          await eventually(
            async () => {
              const s = await source(id);
              return s.ingested === 10 && s.parked === 2 ? s : undefined;
            },
            30_000,
            '10 ingested and 2 parked',
          );
          const parked = (await herald.request('GET', `/sources/${id}/parked`)).body;
          assert.equal(parked.parked.length, 2);
          assert.match(parked.parked[0].reason, /not JSON/);
          assert.equal(parked.parked[0].body, '{"not json');
          assert.match(
            parked.parked[1].reason,
            format === 'herald' ? /payload/ : /no instance named "nobody"/,
          );
          assert.equal(parked.next_cursor, null);
          await nothingUnacked(q);
          await herald.request('DELETE', `/sources/${id}`);
          await nothingLeft(q);
        } finally {
          await q.remove();
        }
      });
    });
  }
}
