/**
 * A NATS JetStream source: a durable pull consumer (created with `subject` as its filter when it does not exist),
 * read with fetches that ask for exactly the room left under SOURCE_PREFETCH, so that no more messages are out
 * unacknowledged to this process. A message is acked once its event is stored, or once it is parked; while Herald
 * holds one back (its store is down) it tells the server it is still working on it, so that it is not redelivered
 * meanwhile. A message left at a stop is nak'ed, for the next consumer at once.
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type NatsSource, sourceAddressKey } from '../domain/source-url.ts';
import {
  Answers,
  type ConsumerHooks,
  type ConsumerOptions,
  pause,
  type SourceConsumer,
  type Verdict,
  Window,
} from './consumer.ts';
import { SharedLinks } from './links.ts';

const links = new SharedLinks<NatsConnection>((nc) => nc.close());
const FETCH_EXPIRES_MS = 2000;
const WORKING_EVERY_MS = 10_000;

function open(t: NatsSource): Promise<NatsConnection> {
  const auth = t.password ? { user: t.username, pass: t.password } : t.username ? { token: t.username } : {};
  return connect({
    servers: `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`,
    ...auth,
    ...(t.tls ? { tls: {} } : {}),
    name: 'herald-sources',
    timeout: 5000,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: 20_000,
    maxPingOut: 2,
  });
}

export async function consumeNats(
  t: NatsSource,
  hooks: ConsumerHooks,
  options: ConsumerOptions,
): Promise<SourceConsumer> {
  const key = sourceAddressKey(t);
  const nc = await links.acquire(key, () => open(t));
  const stopping = new AbortController();
  const window = new Window(options.prefetch);
  const statuses = nc.status();
  void (async () => {
    for await (const s of statuses) {
      if (stopping.signal.aborted) return;
      if (s.type === 'disconnect')
        hooks.state('reconnecting', 'the connection to NATS was lost; reconnecting');
      if (s.type === 'reconnect') hooks.state('consuming', null);
    }
  })().catch(() => {});
  const loop = (async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        const jsm = await jetstreamManager(nc);
        await ensureConsumer(jsm, t);
        const consumer = await jetstream(nc).consumers.get(t.stream, t.consumer);
        hooks.state('consuming', null);
        failures = 0;
        let backlog = true;
        while (!stopping.signal.aborted) {
          await window.roomy(backlog);
          const asked = window.room;
          const batch = await consumer.fetch({ max_messages: asked, expires: FETCH_EXPIRES_MS });
          // A pull whose request or answer a lost connection took away would wait for ever: it is ended here.
          const lost = setTimeout(() => batch.stop(), FETCH_EXPIRES_MS + 3000);
          let got = 0;
          try {
            for await (const m of batch) {
              window.add();
              got++;
              void handle(m);
            }
            backlog = got >= asked;
          } finally {
            clearTimeout(lost);
          }
        }
      } catch (err) {
        if (stopping.signal.aborted) break;
        const refused = err instanceof Refused;
        hooks.state(refused ? 'failed' : 'reconnecting', words(err));
        await pause(Math.min(10_000, 250 * 2 ** failures++), stopping.signal);
      }
    }
  })();

  // Each answered message is acked; the server's count of them is awaited once per flush, on the last ack sent
  // (a connection's acks are counted in order): room is given back then, not when an ack is sent, for a fetch asked
  // for meanwhile would otherwise find the server still counting answered messages and hold more than the prefetch.
  const answers = new Answers<JsMsg>((ms) => {
    for (let i = 0; i < ms.length - 1; i++) ms[i].ack();
    void ms[ms.length - 1]
      .ackAck()
      .catch(() => false)
      .then(() => {
        for (let i = 0; i < ms.length; i++) window.done();
      });
  });

  async function handle(m: JsMsg): Promise<void> {
    const working = setInterval(() => m.working(), WORKING_EVERY_MS);
    let verdict: Verdict = 'release';
    try {
      verdict = await hooks.take({
        brokerId: `nats:${t.stream}:${m.seq}`,
        body: Buffer.from(m.data),
        traceparent: m.headers?.get('traceparent') || null,
      });
    } finally {
      clearInterval(working);
      if (verdict === 'release') {
        m.nak();
        window.done();
      } else answers.add(m);
    }
  }

  return {
    async stop() {
      stopping.abort();
      await loop;
      // The messages still being stored settle as `release` (the source runner's stop) before the connection goes.
      await window.drained();
      await links.release(key);
      // Not awaited: a connection other sources still use sends its next status only at the next ping, and this
      // source's stop (the runner's, one source at a time) would wait for it. The client's iterator can be ended.
      (statuses as Partial<{ stop(): void }>).stop?.();
    },
  };
}

class Refused extends Error {}

async function ensureConsumer(jsm: JetStreamManager, t: NatsSource): Promise<void> {
  try {
    await jsm.consumers.info(t.stream, t.consumer);
    return;
  } catch (err) {
    const code = err instanceof JetStreamApiError ? err.code : null;
    if (code === 10059) throw new Refused(`no stream "${t.stream}" on the server`);
    if (code !== 10014) throw err;
  }
  if (!t.subject)
    throw new Refused(
      `no consumer "${t.consumer}" on stream "${t.stream}": create it, or give &subject= for Herald to create it`,
    );
  await jsm.consumers.add(t.stream, {
    durable_name: t.consumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: t.subject,
  });
}

function words(err: unknown): string {
  if (err instanceof Refused) return err.message;
  const text = (err as Error)?.message ?? String(err);
  if (/stream not found/i.test(text)) return 'no such stream on the server';
  return text;
}
