/**
 * The node:http, Express and Fastify adapters receive a real signed delivery from a real Herald, verify it on the
 * raw bytes, hand it to the receiver's code once, and refuse what does not verify.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  type HeraldDelivery,
  heraldExpress,
  heraldFastify,
  heraldNodeHandler,
} from '../../packages/receiver/src/index.ts';
import { sign } from '../../src/domain/signature.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';

const SECRET = 'whsec_adapters';
const received: Record<string, HeraldDelivery[]> = { node: [], express: [], expressRaw: [], fastify: [] };
const onDelivery = (name: string) => (d: HeraldDelivery) => {
  received[name].push(d);
};
const urls: Record<string, string> = {};
const servers: Server[] = [];
let fastifyApp: FastifyInstance;
let h: TestHerald;
let instanceId = '';
let sent: { event_id: string; body: string } = { event_id: '', body: '' };

async function listen(name: string, server: Server, path = '/hook'): Promise<void> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}

before(async () => {
  await listen('node', createServer(heraldNodeHandler({ secret: SECRET, onDelivery: onDelivery('node') })));

  const plain = express();
  plain.post('/hook', heraldExpress({ secret: SECRET, onDelivery: onDelivery('express') }));
  await listen('express', createServer(plain));

  // The usual app: JSON parsed everywhere, raw bytes kept on the webhook route only.
  const withRaw = express();
  withRaw.post(
    '/hook',
    express.raw({ type: 'application/json' }),
    heraldExpress({ secret: SECRET, onDelivery: onDelivery('expressRaw') }),
  );
  withRaw.use(express.json());
  withRaw.post('/other', (req, res) => {
    res.json({ echo: req.body });
  });
  await listen('expressRaw', createServer(withRaw));

  // The pitfall: express.json() has consumed the bytes before the adapter runs.
  const parsedFirst = express();
  parsedFirst.use(express.json());
  parsedFirst.post('/hook', heraldExpress({ secret: SECRET, onDelivery: onDelivery('express') }));
  parsedFirst.use((err: Error, _req: unknown, res: express.Response, _next: unknown) => {
    res.status(500).json({ error: err.message });
  });
  await listen('expressParsedFirst', createServer(parsedFirst));

  fastifyApp = Fastify();
  await fastifyApp.register(heraldFastify, {
    path: '/hook',
    secret: SECRET,
    onDelivery: onDelivery('fastify'),
  });
  fastifyApp.post('/other', async (request) => ({ echo: request.body }));
  await fastifyApp.listen({ port: 0, host: '127.0.0.1' });
  urls.fastify = `http://127.0.0.1:${(fastifyApp.server.address() as AddressInfo).port}/hook`;

  h = await startTestHerald();
  instanceId = await h.createInstance('adapters');
  for (const name of ['node', 'express', 'expressRaw', 'fastify']) {
    await h.createWebhook(instanceId, {
      destination_url: urls[name],
      events: ['message'],
      client_sign_secret: SECRET,
    });
  }
  const published = await h.publish(instanceId, {
    event: 'message',
    payload: messagePayload({ body: 'Grüße 👋' }),
  });
  assert.equal(published.body.deliveries, 4);
  await eventually(async () => (Object.values(received).every((r) => r.length === 1) ? true : undefined));
  const list = await h.request('GET', `/instances/${instanceId}/deliveries?limit=1`);
  const detail = await h.request(
    'GET',
    `/instances/${instanceId}/deliveries/${list.body.deliveries[0].delivery_id}`,
  );
  sent = { event_id: published.body.event_id, body: detail.body.delivery.request_body };
});

after(async () => {
  await h.close();
  await fastifyApp.close();
  for (const s of servers) await new Promise((r) => s.close(r));
});

function post(url: string, body: string, opts: { ageSeconds?: number; signedBody?: string } = {}) {
  const ts = String(Math.floor(Date.now() / 1000) - (opts.ageSeconds ?? 0));
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-event-id': sent.event_id,
      'x-service-timestamp': ts,
      'x-service-signature': sign(SECRET, ts, opts.signedBody ?? body),
    },
    body,
  });
}

for (const name of ['node', 'express', 'expressRaw', 'fastify']) {
  test(`${name}: Herald's delivery arrives verified and parsed, once; a replay is ignored; a tampered body is 401`, async () => {
    const [delivery] = received[name];
    assert.equal(delivery.event_id, sent.event_id);
    assert.equal(delivery.event, 'message');
    assert.equal(delivery.instance_id, instanceId);
    assert.equal(delivery.payload.body, 'Grüße 👋');

    const replay = await post(urls[name], sent.body);
    assert.equal(replay.status, 200);
    assert.deepEqual(await replay.json(), { received: true, duplicate: true });
    assert.equal(received[name].length, 1, 'the replay did not reach the receiver code');

    const tampered = await post(urls[name], sent.body.replace('Grüße', 'Grüsse'), { signedBody: sent.body });
    assert.equal(tampered.status, 401);
    assert.equal((await tampered.json()).error, 'signature_mismatch');

    const old = await post(urls[name], sent.body, { ageSeconds: 301 });
    assert.equal(old.status, 401);
    assert.equal((await old.json()).error, 'timestamp_too_old');
    assert.equal(received[name].length, 1);
  });
}

test('the rest of the application keeps parsing JSON (Express and Fastify)', async () => {
  for (const url of [urls.expressRaw, urls.fastify]) {
    const r = await fetch(url.replace('/hook', '/other'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.deepEqual(await r.json(), { echo: { a: 1 } }, url);
  }
});

test('Express with express.json() in front: the adapter says the bytes are gone instead of failing signatures', async () => {
  const r = await post(urls.expressParsedFirst, sent.body);
  assert.equal(r.status, 500);
  assert.match((await r.json()).error, /express\.json\(\) ran first/);
});

test("when the receiver code throws, the answer is 500 and Herald's next attempt is processed, not ignored", async () => {
  let calls = 0;
  const server = createServer(
    heraldNodeHandler({
      secret: SECRET,
      onDelivery: () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
      onError: () => {},
    }),
  );
  await listen('throwing', server);
  assert.equal((await post(urls.throwing, sent.body)).status, 500);
  const second = await post(urls.throwing, sent.body);
  assert.equal(second.status, 200);
  assert.deepEqual(await second.json(), { received: true, duplicate: false });
  assert.equal(calls, 2);
});
