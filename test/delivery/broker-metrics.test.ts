/**
 * /metrics tells the truth about broker destinations: one event to webhooks on the machine's real RabbitMQ, NATS
 * JetStream and Redis, and to an HTTP receiver. Each broker's acknowledgement is counted as result="ack", the HTTP
 * answer as "2xx", all four as delivered, and no attempt as an error. Run on SQLite and, in the second pass,
 * PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerClients, type Destination, KINDS } from '../support/broker-consumers.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
let brokers: BrokerClients;
let receiver: TestReceiver;

before(async () => {
  h = await startTestHerald();
  brokers = await BrokerClients.connect();
  receiver = await TestReceiver.start();
});
after(async () => {
  await h.close();
  await brokers.close();
  await receiver.close();
});

/** Every sample of `name` with a label, as `labels -> value`. */
function samples(text: string, name: string): Map<string, number> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`))
      .map((l) => [l.slice(name.length, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
  );
}

test('a broker acknowledgement is counted as result="ack" and delivered, never as an error', async () => {
  const ins = await h.createInstance('metrics-brokers');
  const destinations: Destination[] = [];
  for (const kind of KINDS) destinations.push(await brokers.destination(kind));
  for (const d of destinations) await h.createWebhook(ins, { destination_url: d.url(), events: ['message'] });
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });

  const r = await h.publish(ins, { event: 'message', payload: messagePayload() });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  const log = await eventually(async () => {
    const l = await h.request('GET', `/instances/${ins}/deliveries`);
    const ds = l.body.deliveries as { status: string }[];
    return ds.length === 4 && ds.every((d) => d.status !== 'pending') ? ds : undefined;
  }, 20_000);
  assert.deepEqual(
    log.map((d) => d.status),
    ['delivered', 'delivered', 'delivered', 'delivered'],
  );
  for (const d of destinations) assert.equal((await d.read()).size, 1, `${d.kind} holds the event`);

  const text = (await h.request('GET', '/metrics')).body as string;
  assert.deepEqual(
    Object.fromEntries(samples(text, 'herald_attempts_total')),
    { '{result="ack"}': 3, '{result="2xx"}': 1 },
    'three acknowledgements and one HTTP answer, and nothing counted as an error or "other"',
  );
  assert.equal(samples(text, 'herald_deliveries_total').get('{outcome="delivered"}'), 4);
  // The fleet's health agrees: four deliveries delivered in 24 h, none failed, no webhook failing.
  assert.equal(samples(text, 'herald_webhook_deliveries_24h').get('{outcome="delivered"}'), 4);
  assert.equal(samples(text, 'herald_webhook_deliveries_24h').get('{outcome="failed"}'), 0);
  assert.match(text, /^herald_webhooks_failing 0$/m);
});
