/**
 * Broker destinations when the broker side fails, through an in-process Herald on the machine's brokers (a TCP proxy
 * between them where connections are cut or refused; private servers where a password is needed): connections cut
 * mid-stream, the brokers away for 10 s, an unroutable message and a missing stream, a full stream, a wrong password.
 * Nothing acknowledged with a 202 is lost, every failure is an attempt with the broker's reason in the log, other
 * destinations are not held up, and no password shows. Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DiscardPolicy } from '@nats-io/jetstream';
import { PrivateServer } from '../net/brokers/support.ts';
import {
  type Api,
  BROKER_PORTS,
  BrokerClients,
  type Destination,
  deliveryLog,
  duplicates,
  KINDS,
  type Kind,
  publishMany,
  readAll,
  settledLog,
} from '../support/broker-consumers.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const TIMEOUT_MS = 2_000;
/** 6 attempts over 23.5 s: longer than the outage plus a client's reconnect backoff (capped at 10 s) after it. */
const SCHEDULE = '0.5,1,2,4,16';
let h: TestHerald;
let brokers: BrokerClients;
const proxies = {} as Record<Kind, TcpProxy>;
const receivers: TestReceiver[] = [];

before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: SCHEDULE, DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
  brokers = await BrokerClients.connect();
  for (const k of KINDS) proxies[k] = await TcpProxy.start({ host: '127.0.0.1', port: BROKER_PORTS[k] });
});
after(async () => {
  await h.close();
  await brokers.close();
  for (const k of KINDS) await proxies[k].close();
  for (const r of receivers) await r.close();
});

type Hook = { kind: Kind; dest: Destination; id: string };

/** An instance with one webhook per broker kind, each to a destination of its own through that kind's proxy. */
async function brokerInstance(): Promise<{ ins: string; hooks: Hook[] }> {
  const ins = await h.createInstance('broker-faults');
  const hooks: Hook[] = [];
  for (const kind of KINDS) {
    const dest = await brokers.destination(kind);
    hooks.push({ kind, dest, id: await webhook(ins, dest.url(proxies[kind].port)) });
  }
  return { ins, hooks };
}

const webhook = (ins: string, url: string) =>
  h.createWebhook(ins, { destination_url: url, events: ['message'] });

async function httpWebhook(ins: string): Promise<TestReceiver> {
  const receiver = await TestReceiver.start();
  receivers.push(receiver);
  await webhook(ins, receiver.url);
  return receiver;
}

const api: Api = (method, path, body) => h.request(method, path, { body });
const log = (ins: string, query = '') => deliveryLog(api, ins, query);
const settled = (ins: string, count: number, ms?: number) => settledLog(api, ins, count, ms);
const publish = (
  ins: string,
  n: number,
  acked: Set<string>,
  parallel?: number,
  before?: (i: number) => Promise<void>,
) => publishMany(api, ins, n, acked, parallel, before);
const attempts = async (ins: string, d: { delivery_id: string }): Promise<any[]> =>
  (await h.request('GET', `/instances/${ins}/deliveries/${d.delivery_id}`)).body.delivery.attempts;
const allRead = (hooks: Hook[], acked: Set<string>, ms: number) =>
  Promise.all(hooks.map((x) => readAll(x.dest, acked, ms)));

/** Each failed attempt of the deliveries that needed more than one, by kind: every one has its reason. */
async function failures(ins: string, hooks: Hook[], deliveries: any[]): Promise<Record<Kind, string[]>> {
  const out = { amqp: [], nats: [], redis: [] } as Record<Kind, string[]>;
  for (const d of deliveries.filter((x) => x.attempt_count > 1)) {
    const kind = hooks.find((k) => k.id === d.webhook_id)?.kind as Kind;
    for (const a of await attempts(ins, d)) {
      if (a.response_body?.startsWith('broker_ack')) continue;
      assert.equal(typeof a.error, 'string', `a failed attempt without its reason: ${JSON.stringify(a)}`);
      assert.ok(a.duration_ms <= TIMEOUT_MS + 500, `an attempt took ${a.duration_ms} ms`);
      out[kind].push(a.error);
    }
  }
  return out;
}

const kinds = (errors: string[]) => [...new Set(errors.map((e) => e.replace(/\d+/g, 'N')))].join(' | ');

test('connections cut mid-stream: every acknowledged event is read, each failure an attempt with its reason', async (t) => {
  const started = Date.now();
  const { ins, hooks } = await brokerInstance();
  const acked = new Set<string>();
  let cut = 0;
  // Cut when the 70th and the 140th events are published, deliveries flowing to every broker (a worker holds its
  // event until every connection is open again, the others go on).
  await publish(ins, 200, acked, 4, async (i) => {
    if (i !== 70 && i !== 140) return;
    await eventually(
      async () => (KINDS.every((k) => proxies[k].connections > 0) ? true : undefined),
      15_000,
      'every broker connected through its proxy',
    );
    for (const k of KINDS) cut += proxies[k].cut();
  });
  assert.equal(acked.size, 200);
  assert.ok(cut >= 6, `the cuts dropped ${cut} connections`);
  await allRead(hooks, acked, 30_000);
  const all = await settled(ins, 600);
  assert.deepEqual(
    all.filter((d) => d.status !== 'delivered'),
    [],
    'every delivery delivered',
  );
  const failed = await failures(ins, hooks, all);
  const total = KINDS.reduce((n, k) => n + failed[k].length, 0);
  assert.ok(total > 0, 'the cuts failed some attempts');
  for (const { kind: k, dest } of hooks) {
    for (const e of failed[k])
      assert.match(e, /connection|reconnect|timeout|closed|reset|refused/, `${k}: ${e}`);
    t.diagnostic(
      `${k}: ${failed[k].length} failed attempts (${kinds(failed[k])}); ${duplicates(await dest.read())} duplicates`,
    );
  }
  assert.equal((await h.request('GET', '/healthz')).status, 200, 'Herald still serves');
  t.diagnostic(`200 events x 3 brokers through 2 cuts (${cut} connections) in ${Date.now() - started} ms`);
});

test('the brokers away for 10 s: attempts fail with reasons and are retried, all arrive after; HTTP unaffected', async (t) => {
  const { ins, hooks } = await brokerInstance();
  const other = await h.createInstance('http');
  const receiver = await httpWebhook(other);
  const acked = new Set<string>();
  await publish(ins, 3, acked); // the connections are open
  await allRead(hooks, acked, 10_000);
  for (const k of KINDS) await proxies[k].refuse();
  const awayAt = Date.now();
  const httpIds = new Set<string>();
  // Events to both instances across the outage, every HTTP one delivered while the brokers are still away.
  while (Date.now() - awayAt < 10_000) {
    await publish(ins, 2, acked, 1);
    await publish(other, 1, httpIds, 1);
    await receiver.waitFor(httpIds.size, 5_000);
    await new Promise((r) => setTimeout(r, 400)); // spread the events over the outage
  }
  const away = await eventually(
    async () => {
      const pending = (await log(ins)).filter((d) => d.status === 'pending');
      return pending.length === 3 * (acked.size - 3) && pending.some((d) => d.attempt_count >= 3)
        ? pending
        : undefined;
    },
    5_000,
    'the broker deliveries retried',
  );
  for (const d of away) assert.match(d.last_error, /refused|connection|reconnect/, d.last_error);
  const receivedIds = new Set(receiver.received.map((r) => r.body.event_id));
  assert.deepEqual(receivedIds, httpIds, 'every HTTP event arrived while the brokers were away');
  for (const k of KINDS) await proxies[k].accept();
  const backAt = Date.now();
  const back: string[] = [];
  await Promise.all(
    hooks.map(async (hook) => {
      const since = () => Date.now() - backAt;
      await eventually(async () => (proxies[hook.kind].connections > 0 ? true : undefined), 20_000);
      const up = since();
      await allRead([hook], acked, 40_000);
      back.push(`${hook.kind} reconnected ${up} ms after, all read ${since()} ms after`);
    }),
  );
  t.diagnostic(
    `${acked.size} events to the brokers, ${httpIds.size} HTTP ones delivered meanwhile; back: ${back.join(', ')}`,
  );
  t.diagnostic(`reasons while away: ${kinds(away.map((d) => d.last_error))}`);
  const all = await settled(ins, 3 * acked.size);
  assert.deepEqual(
    all.filter((d) => d.status !== 'delivered'),
    [],
  );
});

test('an unroutable message and a missing stream: retried failures with their reason; HTTP unaffected', async () => {
  const exchange = `herald-faults-${brokers.run}-unbound`;
  await brokers.rabbit.exchangeDeclare({ exchange, type: 'direct' });
  const ins = await h.createInstance('nowhere');
  const amqp = await webhook(
    ins,
    `amqp://guest:guest@127.0.0.1:5672/%2F?exchange=${exchange}&routing_key=nobody`,
  );
  const nats = await webhook(ins, `nats://127.0.0.1:4222/herald.nowhere.${brokers.run}`);
  const receiver = await httpWebhook(ins);
  try {
    const acked = new Set<string>();
    await publish(ins, 3, acked);
    await receiver.waitFor(3, 5_000);
    const retried = (webhook: string) =>
      eventually(
        async () => {
          const ds = await log(ins, `&webhook_id=${webhook}`);
          return ds.length === 3 && ds.every((d) => d.status === 'pending' && d.attempt_count >= 2)
            ? ds
            : undefined;
        },
        10_000,
        'the broker deliveries retried',
      );
    for (const d of await retried(amqp))
      assert.match(d.last_error, /^unroutable: no queue bound to exchange/);
    for (const d of await retried(nats))
      assert.equal(d.last_error, `no stream for subject "herald.nowhere.${brokers.run}"`);
    const http = (await log(ins)).filter((d) => d.webhook_id !== amqp && d.webhook_id !== nats);
    assert.deepEqual(
      new Set(http.map((d) => `${d.status} after ${d.attempt_count}`)),
      new Set(['delivered after 1']),
    );
    assert.equal(http.length, 3);
  } finally {
    await h.request('DELETE', `/instances/${ins}`);
    await brokers.rabbit.exchangeDelete({ exchange });
  }
});

test('NATS: a full stream (discard new) is a retried "stream full" until room is made', async () => {
  const stream = `HERALD_FAULTS_${brokers.run.toUpperCase()}_FULL`;
  const subject = `herald.faults.${brokers.run}.full`;
  await brokers.jsm.streams.add({
    name: stream,
    subjects: [subject],
    max_msgs: 5,
    discard: DiscardPolicy.New,
  });
  try {
    const ins = await h.createInstance('full');
    await webhook(ins, `nats://127.0.0.1:4222/${subject}`);
    await publish(ins, 8, new Set(), 1);
    const refused = await eventually(
      async () => {
        const ds = await log(ins);
        const waiting = ds.filter((d) => d.status === 'pending' && d.attempt_count >= 2);
        return ds.filter((d) => d.status === 'delivered').length === 5 && waiting.length === 3
          ? waiting
          : undefined;
      },
      10_000,
      '5 delivered, 3 refused and retried',
    );
    for (const d of refused) assert.equal(d.last_error, 'stream full: maximum messages exceeded');
    await brokers.jsm.streams.purge(stream);
    const all = await settled(ins, 8, 25_000);
    assert.deepEqual(
      all.map((d) => d.status),
      Array(8).fill('delivered'),
    );
    const tried = await attempts(ins, refused[0]);
    assert.equal(tried[0].error, 'stream full: maximum messages exceeded');
    assert.match(tried.at(-1).response_body, /^broker_ack stream=\S+ seq=\d+$/);
  } finally {
    await brokers.jsm.streams.delete(stream);
  }
});

test('Redis maxlen: trimming is no failure; the stream stays near maxlen and every delivery succeeds at once', async () => {
  const dest = await brokers.destination('redis', { maxlen: 50 });
  const ins = await h.createInstance('maxlen');
  await webhook(ins, dest.url());
  await publish(ins, 400, new Set());
  const all = await settled(ins, 400);
  assert.deepEqual(
    all.filter((d) => d.status !== 'delivered' || d.attempt_count !== 1),
    [],
  );
  const key = decodeURIComponent(/stream=([^&]+)/.exec(dest.url())?.[1] ?? '');
  const length = await brokers.redis.xLen(key);
  assert.ok(length >= 50 && length <= 200, `about 50 entries kept (MAXLEN ~), got ${length}`);
});

test('a wrong password: "authentication failed" at each attempt, within the timeout, the password never shown', async () => {
  const PASS = 'R1ght-S3cret-4711';
  const WRONG = 'Wr0ng-S3cret-0815';
  const redis = await PrivateServer.redis(['--requirepass', PASS]);
  const nats = await PrivateServer.nats(['--user', 'herald', '--pass', PASS]);
  const ins = await h.createInstance('password');
  try {
    const urls = {
      [`redis://:${WRONG}@127.0.0.1:${redis.port}/0?stream=s`]:
        /^authentication failed( \(next connection attempt in \d+ ms\))?$/,
      [`nats://herald:${WRONG}@127.0.0.1:${nats.port}/herald.auth`]:
        /^authentication failed for user "herald"( \(next connection attempt in \d+ ms\))?$/,
    };
    const ids: string[] = [];
    for (const url of Object.keys(urls)) ids.push(await webhook(ins, url));
    await publish(ins, 2, new Set());
    const ds = await eventually(
      async () => {
        const all = await log(ins);
        return all.length === 4 && all.every((d) => d.attempt_count >= 3) ? all : undefined;
      },
      15_000,
      'three attempts each',
    );
    let text = '';
    for (const d of ds) {
      const rule = Object.values(urls)[ids.indexOf(d.webhook_id)];
      const tried = await attempts(ins, d);
      for (const a of tried) {
        assert.match(a.error, rule);
        assert.ok(a.duration_ms < TIMEOUT_MS, `an attempt took ${a.duration_ms} ms: no hang`);
      }
      text += JSON.stringify(tried);
    }
    for (const id of ids) {
      const view = await h.request('GET', `/instances/${ins}/webhooks/${id}`);
      assert.match(view.body.webhook.destination_url, /:\*\*\*\*@127\.0\.0\.1/);
      text += JSON.stringify(view.body);
    }
    text +=
      JSON.stringify(await log(ins)) +
      JSON.stringify((await h.request('GET', `/instances/${ins}/webhooks`)).body);
    assert.equal(text.includes(WRONG), false, 'the password never shows');
    assert.equal(text.includes('Wr0ng'), false);
  } finally {
    await h.request('DELETE', `/instances/${ins}`);
    await Promise.all([redis.stop(), nats.stop()]);
  }
});
