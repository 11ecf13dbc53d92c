/**
 * An instance key on another instance's path is refused before its body is read: a 403, never a 400 about the
 * body (which would mean it was parsed), and answered while the body is still on its way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { rawRequest, statusOf } from '../support/raw-client.ts';

let h: TestHerald;
let insA: string;
let insB: string;
let keyA: string;

before(async () => {
  h = await startTestHerald();
  insA = await h.createInstance('a');
  insB = await h.createInstance('b');
  const key = await h.request('POST', `/instances/${insA}/keys`);
  assert.equal(key.status, 201);
  keyA = key.body.key;
});
after(() => h.close());

describe("a key of instance A posting to instance B's ingest", () => {
  for (const path of ['events', 'events/batch', 'engine/waha']) {
    test(`invalid JSON to ${path}: 403, not a 400 about the body`, async () => {
      const res = await h.request('POST', `/instances/${insB}/${path}`, { rawBody: '{"event": ', key: keyA });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'forbidden');
      // The same body on A's own path is read, and is a 400.
      const own = await h.request('POST', `/instances/${insA}/${path}`, { rawBody: '{"event": ', key: keyA });
      assert.equal(own.status, 400);
    });
  }

  test('a 32 MiB batch is answered 403 after its first bytes, without waiting for the rest', async () => {
    const c = rawRequest(
      h.url,
      `POST /instances/${insB}/events/batch HTTP/1.1\nHost: herald\nAuthorization: Bearer ${keyA}\n` +
        `Content-Type: application/json\nContent-Length: ${32 * 1024 * 1024}`,
    );
    try {
      await c.send(64 * 1024);
      const status = await eventually(async () => statusOf(c.received()) ?? undefined, 5000, 'an answer');
      assert.equal(status, 403, c.received());
      assert.match(c.received(), /this key belongs to another instance/);
      assert.match(c.received(), /\r\nconnection: close\r\n/i);
    } finally {
      c.socket.destroy();
    }
  });
});
