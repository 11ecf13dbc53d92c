/**
 * Why engine media was not stored, said in three places: a warn log line, the delivery detail's `media_failure`
 * and `herald_engine_media_failures_total{reason}`; what the receiver gets stays the seed's object. A real file
 * server on 127.0.0.1 stands in for WAHA's, named by ENGINE_MEDIA_PREFIXES; ALLOWED_DESTINATION_CIDRS covers
 * 127.0.0.1 too, which lets no media through outside the prefixes.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { pngImage } from '../media/files.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const MAX_BYTES = 4096;
const TIMEOUT_MS = 1500;
const REASONS = [
  'refused',
  'outside_prefixes',
  'status',
  'timeout',
  'too_large',
  'engine_error',
  'connection',
];

const lines: any[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

let h: TestHerald;
let files: EngineFiles;
let receiver: TestReceiver;
let ins: string;
let closedPort: number;
let prefixes: string;
before(async () => {
  files = await EngineFiles.start();
  // A port nobody listens on: the connection is refused.
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  closedPort = (gone.address() as AddressInfo).port;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  prefixes = `${files.prefix},http://127.0.0.1:${closedPort}/api/files/`;
  h = await startTestHerald(
    {
      ALLOW_PRIVATE_DESTINATIONS: 'false',
      ALLOWED_DESTINATION_CIDRS: '127.0.0.1/32',
      ENGINE_MEDIA_PREFIXES: prefixes,
      MEDIA_MAX_BYTES: String(MAX_BYTES),
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
      LOG_LEVEL: 'warn',
    },
    { logger: pino({ level: 'warn' }, sink) },
  );
  receiver = await TestReceiver.start();
  ins = await h.createInstance('media failures');
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
});
after(async () => {
  await receiver.close();
  await files.close();
  await h.close();
});

let n = 0;
/** Posts an incoming message with `media` as WAHA does; returns what the receiver got and what Herald says. */
async function settle(media: unknown) {
  n++;
  const body = wahaBody('message', {
    id: `false_491701234567@c.us_3EB0${String(n).padStart(16, '0')}`,
    timestamp: 1763719200,
    from: '491701234567@c.us',
    fromMe: false,
    body: '',
    hasMedia: media !== undefined,
    ...(media === undefined ? {} : { media }),
  });
  const res = await postWaha(h.url, ins, body);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const { event_id } = res.body;
  const got = await eventually(
    async () => receiver.received.find((r) => r.body?.event_id === event_id),
    10_000,
    'the delivery',
  );
  const list = await h.request('GET', `/instances/${ins}/deliveries?event_id=${event_id}`);
  const [delivery] = list.body.deliveries;
  assert.equal('media_failure' in delivery, false, 'the list stays as it was');
  const detail = await h.request('GET', `/instances/${ins}/deliveries/${delivery.delivery_id}`);
  assert.equal(detail.status, 200);
  const ofEvent = () => lines.filter((l) => l.event_id === event_id && /engine media/.test(l.msg));
  // Herald says why (log line, metric) once the failure is stored, and the stored media already lets the delivery
  // go: under load the receiver can have it first. A stored failure waits for its line; none is waited for.
  if (detail.body.delivery.media_failure !== null)
    await eventually(async () => (ofEvent().length > 0 ? true : undefined), 5_000, 'the log line');
  return { event_id, media: got.body.payload.media, detail: detail.body.delivery, logged: ofEvent() };
}

async function failures(): Promise<Record<string, number>> {
  const text = (await h.request('GET', '/metrics')).body as string;
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^herald_engine_media_failures_total\{reason="(\w+)"\} (\d+)$/gm)) {
    counts[m[1]] = Number(m[2]);
  }
  return counts;
}

describe('engine media failures', () => {
  test('every reason has its series from the start, at 0', async () => {
    const counts = await failures();
    for (const reason of REASONS)
      assert.equal(typeof counts[reason], 'number', `${reason}: ${JSON.stringify(counts)}`);
  });

  const cases: {
    name: string;
    media: () => Record<string, unknown>;
    reason: string;
    failure: string | RegExp | (() => string);
    delivered: Record<string, unknown>;
  }[] = [
    {
      name: 'a private address outside ENGINE_MEDIA_PREFIXES, and the message says which and why',
      media: () => ({
        url: 'http://10.1.2.3:3000/api/files/default/x.jpeg?api_key=s3cret',
        mimetype: 'image/jpeg',
      }),
      reason: 'outside_prefixes',
      failure: () =>
        `media.url is not under ENGINE_MEDIA_PREFIXES (${prefixes.replace(',', ', ')}), and 10.1.2.3 is not a ` +
        'globally reachable address (private, 10.0.0.0/8): a private address outside ENGINE_MEDIA_PREFIXES is never ' +
        "downloaded from (to download the engine's files, add where it serves them to ENGINE_MEDIA_PREFIXES)",
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'the engine’s own API on an address ALLOWED_DESTINATION_CIDRS covers, outside the prefixes',
      media: () => ({ url: `${files.base}/api/sessions/default/me`, mimetype: 'image/jpeg' }),
      reason: 'outside_prefixes',
      failure:
        /^media\.url is not under ENGINE_MEDIA_PREFIXES \(.*\), and 127\.0\.0\.1 is not a globally reachable address \(loopback, 127\.0\.0\.0\/8\): a private address outside/,
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'an encoded separator that a server may read as climbing out of the prefix is refused as spelt',
      media: () => ({ url: `${files.prefix}..%2Fsessions%2Fdefault`, mimetype: 'image/jpeg' }),
      reason: 'refused',
      failure: 'media.url refused: it must not have an encoded "/", "\\", "." or "%" in its path (%2F)',
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'a 401: the key is missing, and the message says which setting gives it',
      media: () => ({
        url: files.serve('no-key.jpg?session=default&token=s3cret', { status: 401 }),
        mimetype: 'image/jpeg',
      }),
      reason: 'status',
      failure: 'the engine answered 401: set ENGINE_MEDIA_HEADERS, e.g. X-Api-Key: <WAHA_API_KEY>',
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'another status than 2xx',
      media: () => ({ url: files.serve('missing.jpg', { status: 404 }), mimetype: 'image/jpeg' }),
      reason: 'status',
      failure: 'the engine answered 404',
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'no complete answer within DELIVERY_TIMEOUT_MS',
      media: () => ({ url: files.serve('slow.jpg', 'hang'), mimetype: 'image/jpeg' }),
      reason: 'timeout',
      failure: `timeout after ${TIMEOUT_MS} ms`,
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
    {
      name: 'larger than MEDIA_MAX_BYTES',
      media: () => ({
        url: files.serve('big.mp4', {
          bytes: Buffer.alloc(MAX_BYTES + 1),
          type: 'video/mp4',
          sendLength: false,
        }),
        mimetype: 'video/mp4',
      }),
      reason: 'too_large',
      failure: `too large: more than ${MAX_BYTES} bytes`,
      delivered: { status: 'too_large', mimetype: 'video/mp4' },
    },
    {
      name: 'the engine’s own error (GOWS: a gRPC error whose details start with the message)',
      media: () => ({
        url: null,
        mimetype: 'video/mp4',
        error: {
          code: 9,
          details:
            'Error: 9 FAILED_PRECONDITION: failed to download media: download failed with status code 403\n    at callErrorFromStatus (/app/node_modules/@grpc/grpc-js/build/src/call.js:32:19)',
          metadata: { internalRepr: {}, options: {} },
        },
      }),
      reason: 'engine_error',
      failure:
        'the engine could not download it: Error: 9 FAILED_PRECONDITION: failed to download media: download failed with status code 403',
      delivered: { status: 'failed', mimetype: 'video/mp4' },
    },
    {
      name: 'the engine’s file server refuses the connection',
      media: () => ({ url: `http://127.0.0.1:${closedPort}/api/files/x.jpeg`, mimetype: 'image/jpeg' }),
      reason: 'connection',
      failure: /^the connection to the engine failed: .*ECONNREFUSED/,
      delivered: { status: 'failed', mimetype: 'image/jpeg' },
    },
  ];

  for (const c of cases) {
    test(`${c.name}: log, delivery detail and metric say why; the receiver gets the seed’s object`, async () => {
      const before = await failures();
      const asked = files.requests.length;
      const sent = c.media();
      const { media, detail, logged, event_id } = await settle(sent);
      assert.deepEqual(media, c.delivered, 'no field added for receivers');
      if (typeof c.failure === 'function') assert.equal(detail.media_failure, c.failure());
      else if (typeof c.failure === 'string') assert.equal(detail.media_failure, c.failure);
      else assert.match(detail.media_failure ?? '', c.failure);

      assert.equal(logged.length, 1, JSON.stringify(logged));
      const [line] = logged;
      assert.equal(line.level, 40, 'warn');
      assert.equal(line.instance_id, ins);
      assert.equal(line.event_id, event_id);
      assert.equal(line.reason, c.reason);
      assert.ok(line.msg.includes(detail.media_failure), line.msg);
      // WAHA's url with every query value hidden (a key may be among them); none when the engine gave none.
      const url = typeof sent.url === 'string' ? sent.url.replace(/=[^&]*/g, '=…') : null;
      assert.equal(line.url, url);
      assert.ok(!JSON.stringify(line).includes('s3cret'), 'no secret of the query in the log');

      if (c.reason === 'refused' || c.reason === 'outside_prefixes') {
        assert.equal(files.requests.length, asked, 'nothing fetched');
      }
      const after = await failures();
      assert.equal(after[c.reason], (before[c.reason] ?? 0) + 1, `${c.reason}: ${JSON.stringify(after)}`);
      for (const other of REASONS.filter((r) => r !== c.reason)) assert.equal(after[other], before[other]);
    });
  }

  test('stored media, or none, has media_failure null and logs nothing', async () => {
    const stored = await settle({
      url: files.serve('fine.png', { bytes: pngImage(8), type: 'image/png' }),
      mimetype: 'image/png',
    });
    assert.equal(stored.media.status, 'ready');
    assert.equal(stored.detail.media_failure, null);
    assert.deepEqual(stored.logged, []);
    const none = await settle(undefined);
    assert.equal(none.detail.media_failure, null);
    assert.deepEqual(none.logged, []);
  });
});
