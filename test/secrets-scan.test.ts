/**
 * Secrets at rest (issue 5): after a run that sets, changes and clears signing secrets, issues and revokes keys and
 * delivers signed requests, no signing secret and no API key appears in clear — nor in base64 or hex — in any file of
 * DATA_DIR (the SQLite database, its WAL and shared memory, read as raw bytes, while running and after closing),
 * in the logs (trace level) or in an API response.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { ADMIN_KEY, eventually, messagePayload, startTestHerald } from './support/herald.ts';
import { TestReceiver } from './support/receiver.ts';

/** Every spelling of `secret` worth looking for in raw bytes. */
const spellings = (secret: string) => [
  Buffer.from(secret, 'utf8'),
  Buffer.from(secret, 'utf16le'),
  Buffer.from(Buffer.from(secret).toString('base64').replace(/=+$/, '')),
  Buffer.from(Buffer.from(secret).toString('base64url').replace(/=+$/, '')),
  Buffer.from(Buffer.from(secret).toString('hex')),
];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

test('no signing secret or API key in clear in DATA_DIR, the logs or a response', async () => {
  let logs = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  const secretKey = randomBytes(32).toString('hex');
  const h = await startTestHerald(
    { LOG_LEVEL: 'trace', SECRET_KEY: secretKey, RETRY_SCHEDULE: '0.1,0.1,0.1,0.1,0.1' },
    { logger: pino({ level: 'trace' }, sink) },
  );
  const receiver = await TestReceiver.start();
  receiver.answer = (_req, n) => (n % 3 === 0 ? { status: 500, body: 'try again' } : { status: 200 });
  const secrets = [
    'whsec_first_secret_value_1',
    'whsec_replaced_by_patch_22',
    'whsec_patched_in_value_333',
    'whsec_cleared_later_4444',
  ];
  const responses: string[] = [];
  let closed = false;
  const call = async (...args: Parameters<typeof h.request>) => {
    const r = await h.request(...args);
    responses.push(JSON.stringify(r.body));
    return r;
  };
  try {
    const ins = await h.createInstance('scan');
    const keys: string[] = [];
    // Creating a key is the one answer that shows it (once, by design); every other answer is scanned.
    for (let i = 0; i < 3; i++) keys.push((await h.request('POST', `/instances/${ins}/keys`)).body.key);
    const revoked = (await call('GET', `/instances/${ins}/keys`)).body.keys[2].key_id;
    await call('DELETE', `/instances/${ins}/keys/${revoked}`);
    const hook = { destination_url: receiver.url, events: ['*'] };
    const a = await h.createWebhook(ins, { ...hook, client_sign_secret: secrets[0] });
    const b = await h.createWebhook(ins, { ...hook, client_sign_secret: secrets[1] });
    const c = await h.createWebhook(ins, { ...hook, client_sign_secret: secrets[3] });
    await call('PATCH', `/instances/${ins}/webhooks/${b}`, {
      body: { ...hook, client_sign_secret: secrets[2] },
    });
    await call('PATCH', `/instances/${ins}/webhooks/${c}`, { body: { ...hook, clear_client_sign: true } });
    for (let i = 0; i < 5; i++) {
      await call('POST', `/instances/${ins}/events`, {
        key: keys[i % 2],
        body: { event: 'message', payload: messagePayload({ body: `hello ${i}` }) },
      });
    }
    await call('GET', '/instances', { key: keys[2] }); // the revoked key: a 401 that must not echo it
    await call('GET', '/instances', { key: `${keys[0]}-wrong` });
    await eventually(
      async () => {
        const { deliveries } = (
          await h.request('GET', `/instances/${ins}/deliveries?status=delivered&limit=200`)
        ).body;
        return deliveries.length === 15 ? true : undefined;
      },
      30_000,
      'all 15 deliveries delivered',
    );
    for (const path of [
      `/instances/${ins}`,
      `/instances/${ins}/webhooks`,
      `/instances/${ins}/webhooks/${a}`,
      `/instances/${ins}/keys`,
    ]) {
      await call('GET', path);
    }
    const { deliveries } = (await call('GET', `/instances/${ins}/deliveries?limit=200`)).body;
    for (const d of deliveries.slice(0, 5))
      await call('GET', `/instances/${ins}/deliveries/${d.delivery_id}`);
    assert.ok(
      receiver.received.some((r) => r.headers['x-service-signature']),
      'deliveries were signed',
    );

    const needles = [...secrets, ADMIN_KEY, ...keys, `${keys[0]}-wrong`, secretKey];
    const scan = (where: string) => {
      const files = filesUnder(h.dataDir);
      assert.ok(files.some((f) => f.endsWith('herald.db')));
      // Positive control: what is stored in clear on purpose (an event body) is found by the same scan.
      assert.ok(
        files.some((f) => readFileSync(f).includes('hello 4')),
        `${where}: the scan reads stored data`,
      );
      for (const file of files) {
        const bytes = readFileSync(file);
        for (const needle of needles) {
          for (const spelling of spellings(needle)) {
            assert.equal(bytes.indexOf(spelling), -1, `${where}: ${needle.slice(0, 10)}… in ${file}`);
          }
        }
      }
      return files;
    };
    const running = scan('while running');
    assert.ok(
      running.some((f) => f.endsWith('-wal')),
      'the WAL was scanned too',
    );
    assert.ok(logs.includes('"reqId"'), 'requests were logged');
    const text = logs + responses.join('\n');
    for (const needle of needles) {
      for (const spelling of spellings(needle)) {
        const at = text.indexOf(spelling.toString());
        assert.equal(
          at,
          -1,
          `${needle.slice(0, 10)}… in the logs or a response: ${text.slice(at - 200, at + 50)}`,
        );
      }
    }
    await h.close({ keepData: true });
    closed = true;
    scan('after closing');
    rmSync(h.dataDir, { recursive: true, force: true });
  } finally {
    await receiver.close();
    if (!closed) await h.close();
  }
});
