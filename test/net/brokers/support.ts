/**
 * Shared by the broker tests: unique names per run, a message, waiting for a condition with a deadline, the cuts and
 * the connection sharing and the broker away that every publisher must pass, and private broker servers (nats-server, redis-server) on a free
 * port for tests that need to restart one or set a password.
 * The machine's shared brokers are never stopped: only the processes started here, by their PID.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrokerTarget } from '../../../src/domain/broker-url.ts';
import { AddressAllowList, parseCidrList } from '../../../src/net/address-allow-list.ts';
import type { ConnectionPool } from '../../../src/net/brokers/connections.ts';
import type { BrokerAnswer, BrokerMessage } from '../../../src/net/brokers/publisher.ts';
import type { TcpProxy } from '../../support/tcp-proxy.ts';

export const suffix = (): string => randomBytes(5).toString('hex');

/** The guard as an operator would open it for brokers on this machine: 127.0.0.1 allowed, nothing else private. */
export const LOOPBACK = {
  destinations: { allowPrivate: false, allow: new AddressAllowList(parseCidrList('127.0.0.1/32')) },
};

let n = 0;
export function message(overrides: Partial<BrokerMessage> = {}): BrokerMessage {
  n++;
  return {
    event_id: `evt_${suffix()}_${n}`,
    event: 'message.received',
    timestamp: String(Math.floor(Date.now() / 1000)),
    signature: 'v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
    headers: { 'x-service-event-id': `evt_${n}`, 'x-tenant': 'acme' },
    body: JSON.stringify({ n, text: 'héllo', at: Date.now() }),
    ...overrides,
  };
}

/** Resolves with check()'s first value that is not undefined; throws once the deadline has passed. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = 10_000,
  what = 'a condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function accepting(port: number, ms: number): Promise<void> {
  await eventually(
    () =>
      new Promise<true | undefined>((resolve) => {
        const s = new Socket();
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(undefined));
        s.connect(port, '127.0.0.1');
      }),
    ms,
    `a server listening on ${port}`,
  );
}

/** A broker server of the test's own; stop() ends that PID only and removes its directory. */
export class PrivateServer {
  readonly port: number;
  #child: ChildProcess;
  readonly #command: string;
  readonly #args: string[];
  readonly #dir: string;

  private constructor(port: number, command: string, args: string[], dir: string) {
    this.port = port;
    this.#command = command;
    this.#args = args;
    this.#dir = dir;
    this.#child = PrivateServer.#spawn(command, args);
  }

  static #spawn(command: string, args: string[]): ChildProcess {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.unref();
    return child;
  }

  static async nats(extra: string[] = []): Promise<PrivateServer> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'herald-nats-'));
    const server = new PrivateServer(
      port,
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...extra],
      dir,
    );
    await accepting(port, 10_000);
    return server;
  }

  static async redis(extra: string[] = []): Promise<PrivateServer> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'herald-redis-'));
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...extra,
    ];
    const server = new PrivateServer(port, 'redis-server', args, dir);
    await accepting(port, 10_000);
    return server;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Ends the process (SIGTERM unless told, SIGKILL after 5 s) and waits for its exit. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.#child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  /** Starts the same server again, on the same port and directory. */
  async restart(): Promise<void> {
    this.#child = PrivateServer.#spawn(this.#command, this.#args);
    await accepting(this.port, 10_000);
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** The attempt timeout of the fault tests. */
export const TIMEOUT = 3_000;

/**
 * 500 messages from 20 senders at once, each retried (as the delivery pipeline would, 20 ms apart) until the
 * broker acknowledges it, while the proxy drops every connection when the 150th and the 350th message start.
 * Asserts that every attempt answered within its timeout; returns the acknowledged ids and the failures' texts.
 */
export async function publishThroughCuts(
  publish: (m: BrokerMessage) => Promise<BrokerAnswer>,
  proxy: TcpProxy,
) {
  const started = performance.now();
  const acked: string[] = [];
  const errors: string[] = [];
  let attempts = 0;
  let slowest = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < 500) {
        const i = next++;
        if (i === 150 || i === 350) proxy.cut();
        const m = message();
        for (;;) {
          const t0 = performance.now();
          const answer = await publish(m);
          const ms = performance.now() - t0;
          attempts++;
          slowest = Math.max(slowest, ms);
          assert.ok(ms < TIMEOUT + 250, `an attempt took ${Math.round(ms)} ms`);
          if (answer.kind === 'ack') break;
          errors.push(answer.error);
          assert.ok(
            performance.now() - started < 30_000,
            `message ${i} still not delivered: ${answer.error}`,
          );
          await new Promise((r) => setTimeout(r, 20));
        }
        acked.push(m.event_id);
      }
    }),
  );
  const elapsed = Math.round(performance.now() - started);
  assert.equal(acked.length, 500);
  assert.ok(errors.length > 0, 'the cuts failed some attempts');
  const kinds = [...new Set(errors.map((e) => e.replace(/\d+/g, 'N')))];
  const summary = `500 messages through 2 cuts in ${elapsed} ms, ${attempts} attempts (slowest ${Math.round(slowest)} ms), failures: ${kinds.join(' | ')}`;
  return { acked, errors, summary };
}

/**
 * Two targets at one broker address, written differently (default port left out in one), through a publisher whose
 * pool closes a connection idle for 300 ms: 100 publishes at once share one connection; it closes once idle; the
 * next publish (to `a`) opens a second.
 */
export async function oneConnectionPerAddress<T extends BrokerTarget>(
  pub: {
    publish(t: T, m: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer>;
    connections: ConnectionPool<T, unknown>;
  },
  a: T,
  b: T,
): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => pub.publish(i % 2 ? a : b, message(), 5_000)),
  );
  assert.ok(answers.every((x) => x.kind === 'ack'));
  assert.equal(pub.connections.opened, 1);
  assert.equal(pub.connections.size, 1);
  await eventually(
    () => (pub.connections.size === 0 ? true : undefined),
    5_000,
    'the idle connection to close',
  );
  assert.equal((await pub.publish(a, message(), 5_000)).kind, 'ack');
  assert.equal(pub.connections.opened, 2);
}

/**
 * While the broker is away (its proxy refusing), publishes for 2.5 s, 100 ms apart, with a 1 s timeout: every attempt
 * fails, each within 1.25 s. Returns the distinct errors, for the caller to check their words.
 */
export async function failingFastWhileAway(
  publish: (m: BrokerMessage, timeoutMs: number) => Promise<BrokerAnswer>,
): Promise<Set<string>> {
  const awayFrom = performance.now();
  const away = new Set<string>();
  while (performance.now() - awayFrom < 2_500) {
    const t0 = performance.now();
    const answer = await publish(message(), 1_000);
    assert.equal(answer.kind, 'failed');
    assert.ok(performance.now() - t0 < 1_250);
    away.add((answer as { error: string }).error);
    await new Promise((r) => setTimeout(r, 100));
  }
  return away;
}
