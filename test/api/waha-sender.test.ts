/**
 * WAHA's own webhook sender, mirrored in test/support/waha-sender.ts, pointed at the engine endpoint with an HMAC key:
 * whatever Herald answers and whatever is lost on the way, every event reaches the receiver exactly once. On both
 * stores.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { WahaSender } from '../support/waha-sender.ts';

const HMAC_KEY = 'waha-hmac-key';

async function rig(t: TestContext, env: Record<string, string> = {}) {
  const h: TestHerald = await startTestHerald(env);
  t.after(() => h.close());
  const instance = async () => {
    const ins = await h.createInstance('waha');
    const set = await h.request('PATCH', `/instances/${ins}`, { body: { engine_hmac_key: HMAC_KEY } });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const receiver = await TestReceiver.start();
    t.after(() => receiver.close());
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'] });
    return { ins, receiver };
  };
  const sender = (ins: string, o: Partial<ConstructorParameters<typeof WahaSender>[0]> = {}) =>
    new WahaSender({
      url: `${h.url}/instances/${ins}/engine/waha`,
      headers: { Authorization: `Bearer ${ADMIN_KEY}` },
      hmacKey: HMAC_KEY,
      delayMs: 50,
      ...o,
    });
  return { h, instance, sender };
}

const message = (i: number) => ({
  id: `false_491701234567@c.us_3EB0C767D26A1D8F4A${String(i).padStart(2, '0')}`,
  timestamp: 1741249702 + i,
  from: '491701234567@c.us',
  fromMe: false,
  body: `message ${i}`,
  hasMedia: false,
});

describe("WAHA's webhook sender against Herald", () => {
  test('throttled (429s, retried with the same request id and bytes): every event arrives exactly once', async (t) => {
    const { instance, sender } = await rig(t, { RATE_LIMIT_INGEST: '2' });
    const { ins, receiver } = await instance();
    const waha = sender(ins, { delayMs: 300 });
    const sent = await waha.sendAll(Array.from({ length: 8 }, (_, i) => wahaBody('message', message(i))));
    assert.ok(
      sent.some((s) => s.answers.includes(429)),
      `some were throttled: ${JSON.stringify(sent.map((s) => s.answers))}`,
    );
    assert.ok(sent.every((s) => s.accepted));
    const got = await receiver.waitFor(8, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 8);
    assert.deepEqual(new Set(got.map((r) => r.body.payload.id)).size, 8);
  });

  test('a WAHA that sends no envelope id, whose first answer is lost: retried, stored and delivered once', async (t) => {
    const { instance, sender } = await rig(t);
    const { ins, receiver } = await instance();
    const waha = sender(ins, { loseAnswer: (attempt) => attempt === 1 });
    const { id: _, ...noId } = wahaBody('message', message(1));
    const record = await waha.send(noId);
    assert.deepEqual(record.answers, ['lost', 202]);
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 1);
  });

  test("one event of a session posted to two instances (a session's webhook and the global one): delivered at both", async (t) => {
    const { instance, sender } = await rig(t);
    const a = await instance();
    const b = await instance();
    const envelope = wahaBody('message', message(2));
    const [sa, sb] = [await sender(a.ins).send(envelope), await sender(b.ins).send(envelope)];
    assert.deepEqual([sa.answers, sb.answers], [[202], [202]]);
    const [ga] = await a.receiver.waitFor(1);
    const [gb] = await b.receiver.waitFor(1);
    assert.deepEqual([ga.body.instance_id, gb.body.instance_id], [a.ins, b.ins]);
  });

  test('a message the engine emits twice (two envelope ids) reaches the receiver once', async (t) => {
    const { instance, sender } = await rig(t);
    const { ins, receiver } = await instance();
    const waha = sender(ins);
    const first = await waha.send(wahaBody('message', message(3)));
    const again = await waha.send(wahaBody('message', message(3)));
    assert.deepEqual([first.accepted?.deliveries, again.accepted?.duplicate], [1, true]);
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 1);
  });

  test('a wrong HMAC is a 401, which WAHA retries until it gives up: nothing stored', async (t) => {
    const { instance, sender } = await rig(t);
    const { ins, receiver } = await instance();
    const record = await sender(ins, { hmacKey: 'not-the-key', retries: 2, delayMs: 10 }).send(
      wahaBody('message', message(4)),
    );
    assert.deepEqual(record.answers, [401, 401, 401]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 0);
  });
});
