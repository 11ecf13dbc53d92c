/**
 * A credential without the right, or of another instance, is refused before its body is read: a 403, never a 400
 * about the body (which would mean it was parsed), and answered while the body is still on its way. On either store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { rawRequest, statusOf } from '../support/raw-client.ts';

let h: TestHerald;
let insA: string;
let insB: string;
let keyA: string;
/** A read-write portal link of A: it manages A's webhooks, but never publishes. */
let linkA: string;

before(async () => {
  h = await startTestHerald();
  insA = await h.createInstance('a');
  insB = await h.createInstance('b');
  const key = await h.request('POST', `/instances/${insA}/keys`);
  assert.equal(key.status, 201);
  keyA = key.body.key;
  const link = await h.request('POST', `/instances/${insA}/portal-links`, { body: {} });
  assert.equal(link.status, 201);
  linkA = new URL(link.body.url).hash.slice(1);
});
after(() => h.close());

/** Sends the head of a 32 MiB batch and its first 64 KiB; the answer, once it has come. */
async function bigBatch(instanceId: string, key: string): Promise<string> {
  const c = rawRequest(
    h.url,
    `POST /instances/${instanceId}/events/batch HTTP/1.1\nHost: herald\nAuthorization: Bearer ${key}\n` +
      `Content-Type: application/json\nContent-Length: ${32 * 1024 * 1024}`,
  );
  try {
    await c.send(64 * 1024);
    await eventually(async () => statusOf(c.received()) ?? undefined, 5000, 'an answer');
    return c.received();
  } finally {
    c.socket.destroy();
  }
}

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
    const answer = await bigBatch(insB, keyA);
    assert.equal(statusOf(answer), 403, answer);
    assert.match(answer, /a manage key of another instance cannot act on this one/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
  });
});

describe("a portal link posting to its own instance's ingest", () => {
  for (const path of ['events', 'events/batch', 'engine/waha', 'media']) {
    test(`invalid JSON to ${path}: 403, not a 400 about the body`, async () => {
      const res = await h.request('POST', `/instances/${insA}/${path}`, {
        rawBody: '{"event": ',
        key: linkA,
      });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(
        res.body.error.message,
        'a portal link cannot publish events: ' +
          "it manages its instance's webhooks and reads its delivery log",
      );
    });
  }

  test('a 32 MiB batch is answered 403 after its first bytes, without waiting for the rest', async () => {
    const answer = await bigBatch(insA, linkA);
    assert.equal(statusOf(answer), 403, answer);
    assert.match(answer, /a portal link cannot publish events/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
  });
});
