/**
 * Large bodies draw on a shared byte budget before they are read: past it a request waits unread, and one that
 * waits too long, or while Herald stops, gets 503 with Retry-After. Small requests never wait.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import { installBodyBudget } from '../../src/api/body-budget.ts';
import { installErrorHandling } from '../../src/api/errors.ts';
import { installJsonBody } from '../../src/api/json-body.ts';
import { installUnreadBodyClose } from '../../src/api/unread-body.ts';
import { ADMIN_KEY, eventually, messagePayload, startTestHerald } from '../support/herald.ts';
import { rawRequest, statusOf } from '../support/raw-client.ts';

const MiB = 1024 * 1024;
const post = (path: string, length: number, key = ADMIN_KEY) =>
  `POST ${path} HTTP/1.1\nHost: herald\nAuthorization: Bearer ${key}\nContent-Type: application/json\n` +
  `Content-Length: ${length}`;

test('Herald: a batch waits while a 32 MiB one holds the budget, and is accepted once that one is gone', async (t) => {
  const h = await startTestHerald();
  t.after(() => h.close());
  const ins = await h.createInstance();
  const path = `/instances/${ins}/events/batch`;
  // Holds the whole budget: 32 MiB declared, a trickle sent.
  const big = rawRequest(h.url, post(path, 32 * MiB));
  const events = [0, 1].map(() => ({
    event: 'message',
    payload: messagePayload({ body: 'x'.repeat(150_000) }),
  }));
  const body = JSON.stringify({ events });
  const next = rawRequest(h.url, post(path, body.length));
  try {
    await big.send(1024);
    assert.ok(body.length > 256 * 1024, 'large enough to draw on the budget');
    next.socket.write(body);
    // Not answered while the budget is held (without the budget it is a 202 within milliseconds).
    await assert.rejects(
      eventually(async () => statusOf(next.received()) ?? undefined, 1000, 'an answer'),
      /timed out/,
      next.received(),
    );
    big.socket.destroy();
    const status = await eventually(async () => statusOf(next.received()) ?? undefined, 10_000, 'the 202');
    assert.equal(status, 202, next.received());
  } finally {
    big.socket.destroy();
    next.socket.destroy();
  }
});

test('past the wait: 503 with Retry-After; small bodies pass meanwhile; a stop answers those waiting', async () => {
  const app = Fastify();
  installJsonBody(app);
  installErrorHandling(app);
  installUnreadBodyClose(app);
  const budget = installBodyBudget(app, { bytes: 1000, over: 100, maxWaitMs: 300 });
  app.post('/take', { bodyLimit: 10_000 }, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  let closed = false;
  after(async () => {
    if (!closed) await app.close();
  });
  const send = (body: string) =>
    fetch(`${url}/take`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  const holder = rawRequest(url, post('/take', 900));
  await holder.send(10);
  await eventually(async () => (budget.used === 900 ? true : undefined), 5000, 'the budget held');

  const waited = await send(JSON.stringify({ pad: 'x'.repeat(500) }));
  assert.equal(waited.status, 503);
  assert.equal(waited.headers.get('retry-after'), '5');
  const answer = (await waited.json()) as any;
  assert.equal(answer.error.code, 'unavailable');
  assert.match(answer.error.message, /busy reading other large bodies \(1000 bytes at once\); send it again/);

  assert.equal((await send(JSON.stringify({ pad: 'small' }))).status, 200, 'a small body never waits');

  const queued = send(JSON.stringify({ pad: 'x'.repeat(500) }));
  await eventually(async () => (budget.waiting === 1 ? true : undefined), 5000, 'one waiting');
  const closing = app.close();
  const stopped = await queued;
  assert.equal(stopped.status, 503);
  assert.match(((await stopped.json()) as any).error.message, /Herald is stopping/);
  holder.socket.destroy();
  await closing;
  closed = true;
  // The holder's bytes come back when its connection ends.
  await eventually(
    async () => (budget.used === 0 && budget.waiting === 0 ? true : undefined),
    5000,
    'all back',
  );
});
