/**
 * The raw consumer of bench:sources: the same client library a source uses, consuming the same waiting messages
 * with the same prefetch, each body parsed as JSON and acknowledged as Herald's consumers acknowledge (the answers
 * of one turn together: AMQP basic.ack multiple, JetStream acks with one ackAck, one XACK), and nothing else: no
 * validation, no store. What the broker and its client allow on this machine, the ceiling of any source.
 */
import { type JsMsg, jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import { parseSourceUrl, type RedisSource, SourceUrlProblem } from '../src/domain/source-url.ts';
import type { TestQueue } from '../test/sources/rig.ts';
import { wallNow } from './payloads.ts';

/** Publishes the events into `q`, 8 at a time (their order does not matter here). */
export async function fill(q: TestQueue, events: { event_id: string }[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < events.length) {
        const e = events[next++];
        await q.publish(JSON.stringify(e), e.event_id);
      }
    }),
  );
}

/** Consumes `n` messages waiting in `q`; events/s from the first message taken to the last one acknowledged. */
export async function rawConsume(q: TestQueue, n: number, prefetch: number): Promise<number> {
  const t = parseSourceUrl(q.url());
  if (t instanceof SourceUrlProblem) throw new Error(t.message);
  if (t.kind === 'amqp') return amqp(t.queue, n, prefetch);
  if (t.kind === 'nats') return nats(t.stream, t.consumer, n, prefetch);
  return redis(t, n, prefetch);
}

const rate = (n: number, startedAt: number) => n / ((wallNow() - startedAt) / 1000);

async function amqp(queue: string, n: number, prefetch: number): Promise<number> {
  const connection = new Connection('amqp://guest:guest@127.0.0.1:5672');
  const ch = await connection.acquire();
  await ch.basicQos({ prefetchCount: prefetch });
  let got = 0;
  let startedAt = 0;
  let last = 0;
  let scheduled = false;
  const all = Promise.withResolvers<number>();
  await ch.basicConsume({ queue }, (msg) => {
    if (got === 0) startedAt = wallNow();
    const body = msg.body as unknown;
    if (Buffer.isBuffer(body)) JSON.parse(body.toString('utf8')); // else the client parsed it (application/json)
    last = msg.deliveryTag;
    got++;
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      ch.basicAck({ deliveryTag: last, multiple: true });
      if (got === n) all.resolve(rate(n, startedAt));
    });
  });
  const r = await all.promise;
  await ch.close();
  await connection.close();
  return r;
}

async function nats(stream: string, durable: string, n: number, prefetch: number): Promise<number> {
  const nc = await connect({ servers: '127.0.0.1:4222' });
  const consumer = await jetstream(nc).consumers.get(stream, durable);
  let got = 0;
  let open = 0;
  let startedAt = 0;
  let answered: JsMsg[] = [];
  let wake = Promise.withResolvers<void>();
  const all = Promise.withResolvers<number>();
  // As the source reads: half the window at a time behind a backlog, the messages of one turn acked together,
  // their room back once the server has counted the last ack.
  const answer = (m: JsMsg) => {
    answered.push(m);
    if (answered.length > 1) return;
    setImmediate(() => {
      const ms = answered;
      answered = [];
      for (let i = 0; i < ms.length - 1; i++) ms[i].ack();
      void ms[ms.length - 1].ackAck().finally(() => {
        open -= ms.length;
        wake.resolve();
        if (got === n && open === 0) all.resolve(rate(n, startedAt));
      });
    });
  };
  while (got < n) {
    while (prefetch - open < Math.max(1, prefetch >> 1)) {
      wake = Promise.withResolvers<void>();
      await wake.promise;
    }
    const batch = await consumer.fetch({ max_messages: Math.min(prefetch - open, n - got), expires: 2000 });
    for await (const m of batch) {
      if (got === 0) startedAt = wallNow();
      JSON.parse(new TextDecoder().decode(m.data));
      got++;
      open++;
      answer(m);
    }
  }
  const r = await all.promise;
  await nc.close();
  return r;
}

async function redis(t: RedisSource, n: number, prefetch: number): Promise<number> {
  const { stream, group } = t;
  const client = createClient({ socket: { host: t.host, port: t.port }, database: t.db, RESP: 2 });
  await client.connect();
  let got = 0;
  let open = 0;
  let startedAt = 0;
  const acks = new Set<Promise<unknown>>();
  while (got < n) {
    while (prefetch - open < Math.max(1, prefetch >> 1)) await Promise.race(acks);
    const read = await client.xReadGroup(
      group,
      'raw',
      { key: stream, id: '>' },
      { COUNT: Math.min(prefetch - open, n - got) },
    );
    const entries =
      (read as { messages: { id: string; message: Record<string, string> }[] }[] | null)?.[0]?.messages ?? [];
    if (entries.length === 0) continue;
    if (got === 0) startedAt = wallNow();
    for (const e of entries) JSON.parse(e.message.body);
    got += entries.length;
    open += entries.length;
    const ack: Promise<unknown> = client
      .xAck(
        stream,
        group,
        entries.map((e) => e.id),
      )
      .finally(() => {
        open -= entries.length;
        acks.delete(ack);
      });
    acks.add(ack);
  }
  await Promise.all(acks);
  const r = rate(n, startedAt);
  await client.close();
  return r;
}
