/**
 * A Redis Streams source: a consumer group (created at `$`, with the stream, when it does not exist) read with
 * XREADGROUP for at most the room left under SOURCE_PREFETCH; an entry is XACKed once its event is stored, or once
 * it is parked. Each process reads as a consumer of its own name; entries a consumer read and never acknowledged
 * (its process died) are taken over with XAUTOCLAIM once idle for SOURCE_RECLAIM_S, or they would never be
 * delivered again. The message is the entry's `body` field. The shared connection is not blocked: reads poll,
 * waiting longer while the stream stays empty.
 */
import { createClient, type RedisClientType } from '@redis/client';
import { type RedisSource, sourceAddressKey } from '../domain/source-url.ts';
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

type Client = RedisClientType<Record<string, never>, Record<string, never>, Record<string, never>, 2>;
interface Entry {
  id: string;
  message: Record<string, string>;
}

const links = new SharedLinks<Client>(async (c) => {
  await Promise.race([c.close(), new Promise((r) => setTimeout(r, 2000).unref())]);
  c.destroy();
});
const IDLE_MIN_MS = 20;
const IDLE_MAX_MS = 500;

async function open(t: RedisSource): Promise<Client> {
  let ready = false;
  const client: Client = createClient({
    socket: {
      host: t.host,
      port: t.port,
      ...(t.tls ? { tls: true as const } : {}),
      connectTimeout: 5000,
      // The first connection fails at once (the runner tries again with backoff); later the client reconnects.
      reconnectStrategy: (retries) => (ready ? Math.min(10_000, 250 * 2 ** Math.min(retries, 10)) : false),
    },
    ...(t.username ? { username: t.username } : {}),
    ...(t.password ? { password: t.password } : {}),
    database: t.db,
    name: 'herald-sources',
    RESP: 2,
    disableOfflineQueue: true,
  });
  client.on('error', () => {}); // each loop reports what its commands meet
  try {
    await client.connect();
    ready = true;
  } catch (err) {
    client.destroy();
    throw err;
  }
  return client;
}

export async function consumeRedis(
  t: RedisSource,
  hooks: ConsumerHooks,
  options: ConsumerOptions,
): Promise<SourceConsumer> {
  const key = sourceAddressKey(t);
  const client = await links.acquire(key, () => open(t));
  const stopping = new AbortController();
  const window = new Window(options.prefetch);
  const me = options.consumerName;

  const handle = async (e: Entry) => {
    let verdict: Verdict = 'release';
    try {
      const body = e.message.body;
      verdict = await hooks.take(
        body === undefined
          ? {
              brokerId: `redis:${e.id}`,
              body: Buffer.from(JSON.stringify(e.message)),
              unreadable: 'the entry has no body field',
            }
          : {
              brokerId: `redis:${e.id}`,
              body: Buffer.from(body, 'utf8'),
              traceparent: e.message.traceparent ?? null,
            },
      );
    } finally {
      if (verdict === 'release') window.done();
      else answers.add(e.id);
    }
  };
  // One XACK for the entries answered together.
  const answers = new Answers<string>((ids) => {
    void ackWithRetry(ids).finally(() => {
      for (let i = 0; i < ids.length; i++) window.done();
    });
  });
  const ackWithRetry = async (ids: string[]) => {
    for (let i = 0; !stopping.signal.aborted || i === 0; i++) {
      try {
        await client.xAck(t.stream, t.group, ids);
        return;
      } catch {
        await pause(Math.min(5000, 100 * 2 ** i), stopping.signal);
      }
    }
  };

  const loop = (async () => {
    let failures = 0;
    let idle = IDLE_MIN_MS;
    let reclaimAt = 0;
    let reclaimFrom = '0-0';
    let grouped = false;
    let backlog = true;
    while (!stopping.signal.aborted) {
      try {
        if (!grouped) {
          await client.xGroupCreate(t.stream, t.group, '$', { MKSTREAM: true }).catch((err) => {
            if (!/BUSYGROUP/.test(String((err as Error)?.message))) throw err;
          });
          grouped = true;
          hooks.state('consuming', null);
        }
        await window.roomy(backlog);
        const asked = window.room;
        let entries: Entry[] = [];
        if (Date.now() >= reclaimAt) {
          const claimed = await client.xAutoClaim(t.stream, t.group, me, options.reclaimMs, reclaimFrom, {
            COUNT: asked,
          });
          entries = (claimed.messages.filter(Boolean) as Entry[]).map(plain);
          reclaimFrom = String(claimed.nextId);
          // Through the whole pending list, then again after a while.
          if (reclaimFrom === '0-0') reclaimAt = Date.now() + Math.min(options.reclaimMs, 10_000);
        }
        if (entries.length === 0) {
          const read = await client.xReadGroup(t.group, me, { key: t.stream, id: '>' }, { COUNT: asked });
          entries = entriesOf(read);
        }
        backlog = entries.length >= asked;
        if (failures > 0) hooks.state('consuming', null);
        failures = 0;
        if (entries.length === 0) {
          await pause(idle, stopping.signal);
          idle = Math.min(IDLE_MAX_MS, idle * 2);
          continue;
        }
        idle = IDLE_MIN_MS;
        for (const e of entries) {
          window.add();
          void handle(e);
        }
      } catch (err) {
        if (stopping.signal.aborted) break;
        const text = (err as Error)?.message ?? String(err);
        if (/NOGROUP/.test(text)) grouped = false;
        const refused = /WRONGTYPE|NOPERM|WRONGPASS|NOAUTH/.test(text);
        hooks.state(refused ? 'failed' : 'reconnecting', words(text, t));
        await pause(Math.min(10_000, 250 * 2 ** failures++), stopping.signal);
      }
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
      await window.drained();
      await links.release(key);
    },
  };
}

const plain = (e: { id: string; message: unknown }): Entry => ({
  id: String(e.id),
  message: Object.fromEntries(Object.entries(e.message as object).map(([k, v]) => [k, String(v)])),
});

function entriesOf(read: unknown): Entry[] {
  if (!read) return [];
  const streams = Array.isArray(read) ? read : Object.values(read as object);
  return streams.flatMap((s: { messages?: { id: string; message: unknown }[] }) =>
    (s.messages ?? []).map(plain),
  );
}

function words(text: string, t: RedisSource): string {
  if (/WRONGTYPE/.test(text)) return `the key "${t.stream}" holds something other than a stream`;
  if (/WRONGPASS|invalid password/i.test(text)) return 'authentication failed';
  if (/NOAUTH/.test(text)) return 'authentication failed: the server needs a password';
  if (/NOPERM/.test(text)) return `permission denied: ${text}`;
  if (/ClientOffline|offline|Socket closed|ECONNREFUSED/i.test(text))
    return 'the connection to Redis is down; reconnecting';
  return text;
}
