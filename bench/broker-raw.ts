/**
 * The raw broker baseline of bench:brokers, in a child process of its own: the client library Herald publishes
 * with (src/net/brokers/), publishing the delivery Herald would make — the same body (payloads.ts deliveryBody),
 * the same signed headers (src/domain/signature.ts signedHeaders, signed per message as each attempt is), the
 * same publish options — with the broker's proof awaited for each message (an AMQP publisher confirm on a durable
 * queue, a JetStream PubAck from a file-storage stream, XADD's entry id), `window` publishes outstanding at once.
 * No store, no API, no retries: what the broker and its client allow on this machine.
 */
import { jetstream } from '@nats-io/jetstream';
import { connect, headers as natsHeaders } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import { HEADERS, signedHeaders } from '../src/domain/signature.ts';
import { BROKER_HOST, BROKER_PORT, type Where } from './broker-destinations.ts';
import { Child, serveParent } from './ipc.ts';
import { baselineEventId, deliveryBody, SECRET, wallNow } from './payloads.ts';

export interface RawSpec {
  where: Where;
  total: number;
  /** Publishes outstanding at once. */
  window: number;
}

export interface RawResult {
  elapsedMs: number;
  /** Mean time from a publish to its proof, ms. */
  meanAckMs: number;
  failed: number;
  /** The first failure, if any. */
  error: string | null;
  /** Bytes of one delivery body (the first). */
  bodyBytes: number;
  /** Bytes of one message's headers, names and values (the first). */
  headerBytes: number;
}

/** Runs the baseline in a child process of its own; `onStarted` gets its pid (for the CPU meter). */
export async function rawBrokerBaseline(
  spec: RawSpec,
  onStarted?: (pid: number) => void,
): Promise<RawResult> {
  const child = new Child(import.meta.filename, []);
  try {
    await child.ready;
    onStarted?.(child.pid);
    return await child.call<RawResult>('run', spec);
  } finally {
    await child.stop();
  }
}

/** One message: its event id, body and headers, made as Herald's sender makes them when it hands an attempt over. */
function message(i: number) {
  const event_id = baselineEventId(i);
  const body = deliveryBody(i, Date.now(), event_id);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = signedHeaders({
    event_id,
    timestamp,
    body,
    secrets: [SECRET],
    headers: null,
    standard: false,
  });
  return { event_id, body, timestamp, headers };
}
type Message = ReturnType<typeof message>;

/** Opens the library's client as Herald does, returns one publish (resolving on the proof) and a close. */
async function open(
  where: Where,
): Promise<{ send: (m: Message) => Promise<unknown>; close: () => Promise<void> }> {
  if (where.kind === 'amqp') {
    const connection = new Connection({
      hostname: BROKER_HOST,
      port: BROKER_PORT.amqp,
      username: 'guest',
      password: 'guest',
      vhost: '/',
      heartbeat: 30,
      connectionName: 'herald-bench-raw',
    });
    connection.on('error', () => {});
    await connection.onConnect(10_000);
    const publisher = connection.createPublisher({ confirm: true, maxAttempts: 1 });
    const returned: string[] = [];
    publisher.on('basic.return', (r) => returned.push(String(r.messageId)));
    return {
      send: async (m) => {
        await publisher.send(
          {
            exchange: '',
            routingKey: where.name,
            mandatory: true,
            durable: true,
            messageId: m.event_id,
            contentType: 'application/json',
            headers: m.headers,
            timestamp: Number(m.timestamp),
          },
          Buffer.from(m.body, 'utf8'),
        );
        if (returned.length > 0) throw new Error(`returned: ${returned[0]}`);
      },
      close: async () => {
        await publisher.close();
        await connection.close();
      },
    };
  }
  if (where.kind === 'nats') {
    // Configured as Herald configures the library (src/net/brokers/nats.ts): no async traces.
    const nc = await connect({
      servers: `${BROKER_HOST}:${BROKER_PORT.nats}`,
      name: 'herald-bench-raw',
      noAsyncTraces: true,
    });
    const js = jetstream(nc);
    return {
      send: (m) => {
        const h = natsHeaders();
        for (const [name, value] of Object.entries(m.headers)) h.set(name, value);
        return js.publish(where.name, m.body, { msgID: m.event_id, headers: h, timeout: 30_000 });
      },
      close: () => nc.close(),
    };
  }
  const client = createClient({
    socket: { host: BROKER_HOST, port: BROKER_PORT.redis },
    name: 'herald-bench-raw',
    RESP: 2,
    disableOfflineQueue: true,
  });
  client.on('error', () => {});
  await client.connect();
  return {
    send: (m) => {
      const signature = m.headers[HEADERS.signature];
      const fields: Record<string, string> = {
        event_id: m.event_id,
        event: 'message',
        timestamp: m.timestamp,
      };
      if (signature !== undefined) fields.signature = signature;
      fields.body = m.body;
      return client.xAdd(where.name, '*', fields);
    },
    close: async () => {
      await client.close();
    },
  };
}

async function run({ where, total, window }: RawSpec): Promise<RawResult> {
  const { send, close } = await open(where);
  const first = message(0);
  let [next, failed, ackMs] = [0, 0, 0];
  let error: string | null = null;
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const m = message(i);
      const t = performance.now();
      try {
        await send(m);
      } catch (err) {
        failed++;
        error ??= (err as Error).message;
      }
      ackMs += performance.now() - t;
    }
  };
  const started = wallNow();
  await Promise.all(Array.from({ length: window }, worker));
  const elapsedMs = wallNow() - started;
  await close();
  return {
    elapsedMs,
    meanAckMs: ackMs / total,
    failed,
    error,
    bodyBytes: Buffer.byteLength(first.body),
    headerBytes: Object.entries(first.headers).reduce((n, [k, v]) => n + k.length + v.length, 0),
  };
}

if (import.meta.main) serveParent(true, { run: (arg) => run(arg as RawSpec) });
