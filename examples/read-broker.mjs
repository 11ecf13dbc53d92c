// Reads what Herald published to a broker destination and prints one line per event, as a consumer of yours would
// see it. Give it the webhook's destination URL (with its password):
//
//   node examples/read-broker.mjs 'amqp://guest:guest@127.0.0.1:5672/%2F?exchange=&routing_key=herald-demo'
//   node examples/read-broker.mjs 'nats://127.0.0.1:4222/herald.demo.events'
//   node examples/read-broker.mjs 'redis://127.0.0.1:6379/0?stream=herald:demo'
//
// With --setup it first makes what the destination needs, once: the RabbitMQ queue, or the JetStream stream that
// covers the subject (Redis makes a stream at its first entry). With --remove it deletes them again (and the Redis
// stream), messages and all. It uses the broker clients Herald itself installs.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';

const args = process.argv.slice(2);
const setup = args.includes('--setup');
const remove = args.includes('--remove');
const raw = args.find((a) => !a.startsWith('--'));
if (!raw) {
  console.error('usage: node examples/read-broker.mjs [--setup | --remove] <destination URL>');
  process.exit(2);
}
const url = new URL(raw);
const line = (id, body) => console.log(`${id}  ${body.length > 100 ? `${body.slice(0, 100)}…` : body}`);

if (url.protocol === 'amqp:' || url.protocol === 'amqps:') {
  const queue = url.searchParams.get('routing_key');
  const rabbit = new Connection(raw.split('?')[0]);
  if (setup) await rabbit.queueDeclare({ queue, durable: true });
  else if (remove)
    console.log(`deleted queue ${queue} (${(await rabbit.queueDelete({ queue })).messageCount} messages)`);
  else {
    for (;;) {
      const m = await rabbit.basicGet({ queue, noAck: true });
      if (!m) break;
      line(m.messageId, typeof m.body === 'string' ? m.body : JSON.stringify(m.body));
    }
  }
  await rabbit.close();
} else if (url.protocol === 'nats:' || url.protocol === 'tls:') {
  const subject = url.pathname.slice(1);
  const nc = await connect({
    servers: url.host,
    user: url.username || undefined,
    pass: url.password || undefined,
  });
  const name = subject.replace(/[^A-Za-z0-9_-]/g, '_').toUpperCase();
  if (setup) await (await jetstreamManager(nc)).streams.add({ name, subjects: [subject] });
  else if (remove) {
    await (await jetstreamManager(nc)).streams.delete(name);
    console.log(`deleted stream ${name}`);
  } else {
    const consumer = await jetstream(nc).consumers.get(name);
    for await (const m of await consumer.fetch({ max_messages: 100, expires: 1_000 })) {
      line(m.headers?.get('Nats-Msg-Id'), m.string());
    }
  }
  await nc.close();
} else if (url.protocol === 'redis:' || url.protocol === 'rediss:') {
  const stream = url.searchParams.get('stream');
  const redis = createClient({ url: raw.split('?')[0] });
  await redis.connect();
  if (remove) console.log(`deleted stream ${stream} (${await redis.del(stream)} key)`);
  else if (!setup)
    for (const e of await redis.xRange(stream, '-', '+')) line(e.message.event_id, e.message.body);
  await redis.quit();
} else {
  console.error(`not a broker URL: ${url.protocol}`);
  process.exit(2);
}
