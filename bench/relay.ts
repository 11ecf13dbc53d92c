/**
 * The relay: the least that a service which takes events over HTTP, durably, and delivers them can do, in a
 * process of its own. It reads each event as Herald's event API takes it (POST /instances/{id}/events), appends
 * the delivery body to a file, sends the delivery signed as Herald signs it (the same helper as the raw baseline),
 * and answers 202 once the file is flushed, one fdatasync covering every event appended meanwhile (Herald's group
 * commit, wal-sync.ts). Nothing is validated, indexed, logged, recorded or retried: its figures are a floor for
 * Herald on this machine, not a rival. A target below the relay's figure is out of reach for any durable design.
 */
import { mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WalSync } from '../src/store/sqlite/wal-sync.ts';
import { Child, serveParent } from './ipc.ts';
import { deliveryAgent, signedPost } from './signed-post.ts';

export class Relay {
  readonly #child: Child;
  readonly url: string;

  private constructor(child: Child, url: string) {
    this.#child = child;
    this.url = url;
  }

  /** A relay that delivers every event it takes to each of `urls`. */
  static async start(urls: string[]): Promise<Relay> {
    const child = new Child(import.meta.filename, [JSON.stringify(urls)]);
    return new Relay(child, (await child.ready) as string);
  }

  get pid(): number {
    return this.#child.pid;
  }

  async stop(): Promise<void> {
    await this.#child.call('close').catch(() => {});
    await this.#child.stop();
  }
}

function main(urls: string[]): void {
  const agent = deliveryAgent();
  const dir = mkdtempSync(join(tmpdir(), 'herald-relay-'));
  const file = join(dir, 'events');
  const fd = openSync(file, 'a');
  const log = new WalSync(file);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const instanceId = req.url?.split('/')[2] ?? '';
      const { event, payload, event_id, timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.stringify({ event_id, event, instance_id: instanceId, timestamp, payload });
      writeSync(fd, `${body}\n`);
      for (const url of urls) signedPost(agent, url, event_id, body).catch(() => {});
      await log.flush();
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, event_id, deliveries: urls.length }));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    serveParent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      close: async () => {
        server.close();
        await agent.close();
        log.close();
        rmSync(dir, { recursive: true, force: true });
        setImmediate(() => process.exit(0));
      },
    });
  });
}

if (import.meta.main) main(JSON.parse(process.argv[2]));
