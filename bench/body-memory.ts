/**
 * What concurrent large batches cost in memory: starts Herald as `npm start` does (bin/herald.js, with its V8 flags)
 * on a fresh DATA_DIR, publishes N batches of about 32 MiB at once (1000 events of 33 KB each, to one webhook whose
 * receiver answers 200), and prints the server's RSS before, at its peak, and after.
 *
 *   npx node bench/body-memory.ts [batches=4]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const BATCHES = Number(process.argv[2] ?? 4);
const KEY = 'bench-admin-key-0123456789abcdef';
const MB = 1024 * 1024;

const kib = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
const mb = (k: number) => `${(k / 1024).toFixed(0)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const dataDir = mkdtempSync(join(tmpdir(), 'herald-body-memory-'));
const launcher: ChildProcess = spawn(
  process.execPath,
  [resolve(import.meta.dirname, '../bin/herald.js'), 'serve'],
  {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_API_KEY: KEY,
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      RATE_LIMIT_INGEST: '0',
      RATE_LIMIT_MANAGEMENT: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let out = '';
launcher.stdout?.setEncoding('utf8').on('data', (s: string) => {
  out += s;
});
try {
  let url = '';
  for (let i = 0; i < 300 && !url; i++) {
    url = /Herald is listening on (\S+)/.exec(out)?.[1] ?? '';
    await sleep(50);
  }
  if (!url) throw new Error(`Herald did not start:\n${out}`);
  // The launcher runs Herald as its child: that child is the process measured.
  const pid = Number(readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, 'utf8').trim());

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const ins = (await api('POST', '/instances', { name: 'bench' })).body.instance_id;
  const whk = (
    await api('POST', `/instances/${ins}/webhooks`, { destination_url: hook, events: ['message'] })
  ).body.webhook_id;
  await api('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { enabled: true });
  const text = 'x'.repeat(33_000);
  const events = Array.from({ length: 1000 }, (_, i) => ({
    event: 'message',
    payload: { id: `m${i}`, from: '491701234567@c.us', fromMe: false, body: text, hasMedia: false },
  }));
  const body = Buffer.from(JSON.stringify({ events }));
  // One small batch first: the code paths are loaded before "before" is read.
  await api('POST', `/instances/${ins}/events/batch`, { events: events.slice(0, 2) });
  await sleep(2000);
  const before = kib(pid, 'VmRSS');

  let peak = before;
  const meter = setInterval(() => {
    peak = Math.max(peak, kib(pid, 'VmRSS'));
  }, 20);
  const started = Date.now();
  const statuses = await Promise.all(
    Array.from({ length: BATCHES }, async () => {
      const res = await fetch(`${url}/instances/${ins}/events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body,
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  const took = Date.now() - started;
  await sleep(5000);
  clearInterval(meter);
  const after = kib(pid, 'VmRSS');
  console.log(
    `${BATCHES} concurrent batches of ${(body.length / MB).toFixed(1)} MiB: answers ${statuses.join(' ')} ` +
      `in ${took} ms; RSS before ${mb(before)}, peak ${mb(Math.max(peak, kib(pid, 'VmHWM')))}, ` +
      `5 s after ${mb(after)}`,
  );
} finally {
  launcher.kill('SIGTERM');
  await new Promise((r) => launcher.once('exit', r));
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
}
