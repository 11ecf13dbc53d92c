/**
 * At least once to brokers through a crash: Herald started as users start it (`npm start`) over a fresh data
 * directory, one webhook per broker kind (RabbitMQ, NATS JetStream, Redis Streams, each behind a proxy of the
 * test's own), killed (SIGKILL, every process of the start) while publishes are in flight — the brokers have stored
 * them but their acknowledgements are held back in the proxies — then restarted on the same data. Every event
 * acknowledged with a 202 is read from each broker at least once, and the delivery log ends all delivered. Run on
 * SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  type Api,
  BROKER_PORTS,
  BrokerClients,
  type Destination,
  deliveryLog,
  duplicates,
  HoldingProxy,
  KINDS,
  type Kind,
  publishMany,
  readAll,
} from '../support/broker-consumers.ts';
import { eventually } from '../support/herald.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

/** An attempt whose process died is made again when its lease ends, DELIVERY_TIMEOUT_MS + 5 s later. */
const ENV = { DELIVERY_TIMEOUT_MS: '2000', RETRY_SCHEDULE: '0.5,1,2,4,8' };
const EVENTS = 300;
const WARM_UP = 20;
/** The brokers' acknowledgements are held from this event on (after the warm-up)... */
const HOLD_AT = 60;
/** ...and Herald is killed once this many are acknowledged, each broker holding some of its publishes. */
const KILL_AT = 160;

test('SIGKILL with broker publishes in flight: after a restart every acknowledged event is in each broker', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-broker-crash-'));
  const brokers = await BrokerClients.connect();
  const proxies = {} as Record<Kind, HoldingProxy>;
  for (const k of KINDS) proxies[k] = await HoldingProxy.start(BROKER_PORTS[k]);
  let herald: ChildHerald = await spawnHerald(dataDir, ENV);
  const api: Api = (method, path, body) => herald.request(method, path, body);
  t.after(async () => {
    await herald.kill('SIGKILL', 'all');
    for (const k of KINDS) await proxies[k].close();
    await brokers.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const created = await api('POST', '/instances', { name: 'broker-crash' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ins = created.body.instance_id as string;
  const dests = {} as Record<Kind, Destination>;
  const hooks = {} as Record<Kind, string>;
  for (const k of KINDS) {
    dests[k] = await brokers.destination(k);
    const base = `/instances/${ins}/webhooks`;
    const w = await api('POST', base, {
      destination_url: dests[k].url(proxies[k].port),
      events: ['message'],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    hooks[k] = w.body.webhook_id;
    assert.equal((await api('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true })).status, 200);
  }

  const acked = new Set<string>();
  const started = Date.now();
  // A first few delivered to every broker (its connection is up), then the brokers' answers are held: what Herald
  // publishes from then on is stored but never acknowledged to it.
  await publishMany(api, ins, WARM_UP, acked);
  await Promise.all(KINDS.map((k) => readAll(dests[k], acked, 15_000)));
  const publishing = publishMany(api, ins, EVENTS - WARM_UP, acked, 8, async (i) => {
    if (i === HOLD_AT) for (const k of KINDS) proxies[k].hold(); // until after the restart
  });
  await eventually(
    async () => (acked.size >= KILL_AT && KINDS.every((k) => proxies[k].held > 0) ? true : undefined),
    20_000,
    'publishes in flight to every broker',
  );
  const killed = await herald.kill('SIGKILL', 'all');
  assert.equal(killed.signal, 'SIGKILL');
  await publishing;
  const atKill: string[] = [];
  for (const k of KINDS) {
    const stored = (await dests[k].read()).size;
    atKill.push(`${k} ${stored} stored (${proxies[k].held} bytes of answers held)`);
  }
  t.diagnostic(
    `killed ${Date.now() - started} ms in, ${acked.size} of ${EVENTS} acknowledged; ${atKill.join(', ')}`,
  );

  // Restarted with the answers still held: nothing it sends can be delivered yet, and the log shows what was left.
  herald = await spawnHerald(dataDir, { ...ENV, PORT: String(herald.port) });
  const early = await deliveryLog(api, ins);
  const open = (k: Kind) => early.filter((d) => d.webhook_id === hooks[k] && d.status !== 'delivered').length;
  for (const k of KINDS) assert.ok(open(k) > 0, `${k}: deliveries were left to be made at the kill`);
  t.diagnostic(`left undelivered at the kill: ${KINDS.map((k) => `${k} ${open(k)}`).join(', ')}`);
  for (const k of KINDS) proxies[k].release();
  const restarted = Date.now();
  await Promise.all(KINDS.map((k) => readAll(dests[k], acked, 60_000)));
  const allRead = Date.now() - restarted;
  const log = await eventually(
    async () => {
      const all = await deliveryLog(api, ins);
      return all.length >= 3 * acked.size && all.every((d) => d.status === 'delivered') ? all : undefined;
    },
    30_000,
    'every delivery delivered',
  );
  const counts: string[] = [];
  for (const k of KINDS) {
    const seen = await dests[k].read();
    counts.push(`${k} ${seen.size} events, ${duplicates(seen)} duplicates`);
    // JetStream drops a second publish of the same Nats-Msg-Id within its duplicate window.
    if (k === 'nats') assert.equal(duplicates(seen), 0, 'JetStream stored each event once');
  }
  // Those JetStream had stored at the kill were published again and acknowledged as duplicates.
  let again = 0;
  for (const d of log.filter(
    (x) =>
      x.webhook_id === hooks.nats &&
      early.some((e) => e.delivery_id === x.delivery_id && e.status !== 'delivered'),
  )) {
    const detail = await api('GET', `/instances/${ins}/deliveries/${d.delivery_id}`);
    if (/ duplicate$/.test(detail.body.delivery.attempts.at(-1).response_body)) again++;
  }
  assert.ok(again > 0, 'publishes in flight at the kill were made again');
  counts.push(`nats acknowledged ${again} as duplicates`);
  const retried = log.filter((d) => d.attempt_count > 1).length;
  t.diagnostic(
    `all read ${allRead} ms after the restart; ${log.length} deliveries, ${retried} needed more than one attempt; ${counts.join('; ')}`,
  );
});
