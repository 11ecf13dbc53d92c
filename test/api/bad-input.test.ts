/**
 * The bad-input sweep (issue 5): every endpoint of /openapi.json gets wrong types, missing fields, huge strings,
 * deep nesting, invalid UTF-8, wrong content types, unknown ids and ids of another instance. Each answer is the
 * documented 4xx with a JSON error body, never a 5xx, and what the API lists is the same before and after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  eventually,
  messagePayload,
  type Reply,
  type RequestOptions,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

interface Case {
  what: string;
  method: string;
  /** {ins} {whk} {dlv} {key} are A's ids; {insB} {whkB} {dlvB} {keyB} those of instance B. */
  path: string;
  options?: RequestOptions;
  /** 'instance' uses A's instance key instead of the admin key. */
  as?: 'instance';
  status: number;
  code: string;
}

const UNKNOWN = { ins: 'ins_0000000000000000000000', whk: 'whk_0000000000000000000000' };
const HOOK = { destination_url: 'https://93.184.215.14/hook', events: ['message'] };
const EVENT = { event: 'message', payload: messagePayload() };
/** WAHA's webhook body around the same message. */
const WAHA = {
  id: 'evt_01jn7k0d9x2c5m8v3b6n1q4w7e',
  timestamp: 1763719200000,
  session: 'default',
  engine: 'NOWEB',
  ...EVENT,
};
/** Evolution API's webhook body around a message (as its Baileys channel posts messages.upsert). */
const EVOLUTION = {
  event: 'messages.upsert',
  instance: 'sweep',
  data: {
    key: { id: '3EB0C767D26A1D8F4A2B', remoteJid: '15557654321@s.whatsapp.net', fromMe: false },
    message: { conversation: 'Hi' },
    messageTimestamp: 1763719200,
  },
  date_time: '2025-11-21T10:00:00.000Z',
  sender: '15550001111@s.whatsapp.net',
};
/** A source on a broker address nothing listens on: valid, and its consumer only ever retries. */
const SOURCE = { url: 'amqp://127.0.0.1:1/%2F?queue=sweep', format: 'herald' };
const big = (n: number) => 'x'.repeat(n);
const nested = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
const INVALID_UTF8 = new Uint8Array([
  0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d,
]);

/** Every endpoint, with a valid body where it takes one (used where the body must not be what fails). */
const ENDPOINTS: {
  method: string;
  path: string;
  body?: unknown;
  limit?: number;
  /** Takes raw bytes of any type (media upload): the JSON transport cases do not apply. */
  raw?: boolean;
  /** Needs no key (a signed media link): only its own cases in fieldCases apply. */
  public?: boolean;
  /** Takes fields it does not name (an engine's body, which grows with the engine): no unknown-field case. */
  open?: boolean;
}[] = [
  { method: 'GET', path: '/instances' },
  { method: 'POST', path: '/instances', body: { name: 'n' } },
  { method: 'GET', path: '/instances/{ins}' },
  { method: 'PATCH', path: '/instances/{ins}', body: { name: 'n' } },
  { method: 'DELETE', path: '/instances/{ins}' },
  { method: 'GET', path: '/instances/{ins}/keys' },
  { method: 'POST', path: '/instances/{ins}/keys' },
  { method: 'DELETE', path: '/instances/{ins}/keys/{key}' },
  { method: 'GET', path: '/instances/{ins}/webhooks' },
  { method: 'POST', path: '/instances/{ins}/webhooks', body: HOOK },
  { method: 'GET', path: '/instances/{ins}/webhooks/{whk}' },
  { method: 'PATCH', path: '/instances/{ins}/webhooks/{whk}', body: HOOK },
  { method: 'DELETE', path: '/instances/{ins}/webhooks/{whk}' },
  { method: 'POST', path: '/instances/{ins}/webhooks/{whk}/enabled', body: { enabled: false } },
  { method: 'GET', path: '/instances/{ins}/webhooks/{whk}/stats' },
  { method: 'POST', path: '/instances/{ins}/events', body: EVENT, limit: 257 * 1024 },
  {
    method: 'POST',
    path: '/instances/{ins}/events/batch',
    body: { events: [EVENT] },
    limit: 32 * 1024 * 1024,
  },
  // ENGINE_MAX_BODY_BYTES: an engine's body is delivered whole, engine data included.
  { method: 'POST', path: '/instances/{ins}/engine/waha', body: WAHA, limit: 4 * 1024 * 1024, open: true },
  {
    method: 'POST',
    path: '/instances/{ins}/engine/evolution',
    body: EVOLUTION,
    limit: 4 * 1024 * 1024,
    open: true,
  },
  // Evolution's byEvents form: the path's event is any name (the body's event decides), so it has no id cases.
  {
    method: 'POST',
    path: '/instances/{ins}/engine/evolution/{event}',
    body: EVOLUTION,
    limit: 4 * 1024 * 1024,
    open: true,
  },
  { method: 'GET', path: '/sources' },
  { method: 'POST', path: '/sources', body: SOURCE },
  { method: 'GET', path: '/sources/{source}' },
  { method: 'PATCH', path: '/sources/{source}', body: SOURCE },
  { method: 'DELETE', path: '/sources/{source}' },
  { method: 'GET', path: '/sources/{source}/parked' },
  { method: 'GET', path: '/instances/{ins}/deliveries' },
  { method: 'GET', path: '/instances/{ins}/deliveries/{dlv}' },
  { method: 'POST', path: '/instances/{ins}/deliveries/{dlv}/redeliver' },
  { method: 'POST', path: '/instances/{ins}/deliveries/redeliver', body: {} },
  {
    method: 'POST',
    path: '/instances/{ins}/webhooks/{whk}/test',
    body: { event: 'message' },
  },
  { method: 'POST', path: '/instances/{ins}/webhooks/{whk}/rotate-secret', body: { grace_s: 60 } },
  { method: 'POST', path: '/instances/{ins}/media', raw: true },
  { method: 'GET', path: '/media/{media}', public: true },
  { method: 'GET', path: '/openapi.json' },
  { method: 'GET', path: '/metrics' },
  { method: 'POST', path: '/instances/{ins}/portal-links', body: { ttl_s: 3600 } },
  { method: 'GET', path: '/instances/{ins}/portal-links' },
  { method: 'DELETE', path: '/instances/{ins}/portal-links/{link}' },
  { method: 'GET', path: '/portal-link' },
];

/** The media limit of the Herald under test, small so that a body beyond it is cheap to send. */
const MEDIA_MAX_BYTES = 1024;

const ID_PREFIX: Record<string, string> = {
  ins: 'ins',
  whk: 'whk',
  dlv: 'dlv',
  key: 'key',
  link: 'lnk',
  source: 'src',
};

/** The cases every endpoint gets: authentication, ids, and (with a body) the transport of the body. */
function genericCases(e: (typeof ENDPOINTS)[number]): Case[] {
  const { method, path } = e;
  if (e.public) return [];
  const withBody: RequestOptions = e.body === undefined ? {} : { body: e.body };
  const cases: Case[] = [
    { what: 'no key', method, path, options: { ...withBody, key: null }, status: 401, code: 'unauthorized' },
    {
      what: 'unknown key',
      method,
      path,
      options: { ...withBody, key: 'hk_nope' },
      status: 401,
      code: 'unauthorized',
    },
  ];
  const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => p in ID_PREFIX);
  for (const p of params) {
    const prefix = ID_PREFIX[p];
    const swap = (to: string) => path.replace(`{${p}}`, to);
    cases.push(
      {
        what: `${p}: malformed`,
        method,
        path: swap('nope'),
        options: withBody,
        status: 400,
        code: 'invalid_request',
      },
      {
        what: `${p}: wrong prefix`,
        method,
        path: swap(`zzz_${'a'.repeat(22)}`),
        options: withBody,
        status: 400,
        code: 'invalid_request',
      },
      {
        what: `${p}: 400 characters`,
        method,
        path: swap(`${prefix}_${'a'.repeat(396)}`),
        options: withBody,
        status: 400,
        code: 'invalid_request',
      },
      {
        what: `${p}: percent-encoded NUL`,
        method,
        path: swap(`${prefix}_%00abc`),
        options: withBody,
        status: 400,
        code: 'invalid_request',
      },
      {
        what: `${p}: unknown`,
        method,
        path: swap(`${prefix}_${'0'.repeat(22)}`),
        options: withBody,
        status: 404,
        code: 'not_found',
      },
    );
    if (p !== 'ins' && p !== 'source') {
      // A's instance with B's webhook / delivery / key: as if it did not exist.
      cases.push({
        what: `${p} of another instance`,
        method,
        path: swap(`{${p}B}`),
        options: withBody,
        status: 404,
        code: 'not_found',
      });
    }
  }
  if (params.includes('ins')) {
    const other = path.replace('{ins}', '{insB}').replace(/\{(whk|dlv|key|link)\}/g, '{$1B}');
    cases.push({
      what: "instance key on another instance's path",
      method,
      path: other,
      options: withBody,
      as: 'instance',
      status: 403,
      code: 'forbidden',
    });
  }
  // GET bodies are never read (Node discards them unbuffered); every other method's body is parsed and limited.
  if (method !== 'GET' && !e.raw) {
    const body = (o: RequestOptions, what: string, status: number, code: string): Case => ({
      what,
      method,
      path,
      options: o,
      status,
      code,
    });
    cases.push(
      body(
        { rawBody: JSON.stringify(e.body ?? {}), contentType: 'text/plain' },
        'text/plain body',
        415,
        'unsupported_media_type',
      ),
      body(
        { rawBody: 'a=1', contentType: 'application/x-www-form-urlencoded' },
        'form body',
        415,
        'unsupported_media_type',
      ),
      body(
        { rawBody: '--b\r\n\r\n--b--', contentType: 'multipart/form-data; boundary=b' },
        'multipart body',
        415,
        'unsupported_media_type',
      ),
      body({ rawBody: INVALID_UTF8 }, 'invalid UTF-8', 400, 'invalid_request'),
      body({ rawBody: '{"name": ' }, 'truncated JSON', 400, 'invalid_request'),
      body({ rawBody: "{'name': 1}" }, 'single-quoted JSON', 400, 'invalid_request'),
      body({ rawBody: nested(100) }, 'nested 100 levels', 400, 'invalid_request'),
      body({ rawBody: nested(100_000) }, 'nested 100 000 levels', 400, 'invalid_request'),
      body(
        { rawBody: JSON.stringify({ pad: big((e.limit ?? 256 * 1024) + 1024) }) },
        'body beyond the limit',
        413,
        'payload_too_large',
      ),
    );
    if (e.body !== undefined) {
      cases.push(
        body({ body: [] }, 'an array', 400, 'invalid_request'),
        body({ body: 'text' }, 'a string', 400, 'invalid_request'),
        body({ body: 42 }, 'a number', 400, 'invalid_request'),
        body({ rawBody: 'null' }, 'null', 400, 'invalid_request'),
      );
      if (!e.open) {
        cases.push(
          body(
            { body: { ...(e.body as object), unknown_field: 1 } },
            'an unknown field',
            400,
            'invalid_request',
          ),
        );
      }
    }
  }
  return cases;
}

/** Field rules, endpoint by endpoint. */
function fieldCases(): Case[] {
  const post =
    (path: string, method = 'POST') =>
    (what: string, body: unknown, status = 400, code = 'invalid_request'): Case => ({
      what,
      method,
      path,
      options: { body },
      status,
      code,
    });
  const instance = post('/instances');
  const hook = (path: string, method: string) => {
    const c = post(path, method);
    return [
      c('destination_url missing', { events: ['message'] }),
      c('events missing', { destination_url: HOOK.destination_url }),
      c('destination_url a number', { ...HOOK, destination_url: 5 }),
      c('destination_url null', { ...HOOK, destination_url: null }),
      c('destination_url ftp', { ...HOOK, destination_url: 'ftp://93.184.215.14/' }),
      c('destination_url with userinfo', { ...HOOK, destination_url: 'https://u:p@93.184.215.14/' }),
      c('destination_url of 200 000 characters', {
        ...HOOK,
        destination_url: `https://a.example/${big(200_000)}`,
      }),
      c(
        'destination_url private',
        { ...HOOK, destination_url: 'http://10.0.0.1/' },
        422,
        'destination_not_allowed',
      ),
      c('events a string', { ...HOOK, events: 'message' }),
      c('events empty', { ...HOOK, events: [] }),
      c('events unknown kind', { ...HOOK, events: ['mesage'] }),
      c('events duplicate', { ...HOOK, events: ['message', 'message'] }),
      c('events * with others', { ...HOOK, events: ['*', 'message'] }),
      c('events of numbers', { ...HOOK, events: [1, 2] }),
      c('events of 10 000 kinds', { ...HOOK, events: Array.from({ length: 10_000 }, (_, i) => `k${i}`) }),
      c('client_sign_secret a number', { ...HOOK, client_sign_secret: 5 }),
      c('client_sign_secret of 1025 characters', { ...HOOK, client_sign_secret: big(1025) }),
      c('standard_webhooks a string', { ...HOOK, standard_webhooks: 'yes' }),
      c('standard_webhooks with a secret not whsec_', {
        ...HOOK,
        standard_webhooks: true,
        client_sign_secret: 's3',
      }),
      c('standard_webhooks with whsec_ of 8 bytes', {
        ...HOOK,
        standard_webhooks: true,
        client_sign_secret: `whsec_${Buffer.alloc(8).toString('base64')}`,
      }),
      c('ignore_status a string', { ...HOOK, ignore_status: 'true' }),
      c('enabled in the body', { ...HOOK, enabled: true }),
      c('a typo (destinationUrl)', { destinationUrl: HOOK.destination_url, events: ['message'] }),
      c('filter a list', { ...HOOK, filter: [] }),
      c('filter with an unknown operator', { ...HOOK, filter: { 'payload.from': { $regex: '.*' } } }),
      c('filter $in not a list', { ...HOOK, filter: { 'payload.from': { $in: 'a' } } }),
      c('filter $or empty', { ...HOOK, filter: { $or: [] } }),
      c('filter beyond 4 KiB', { ...HOOK, filter: { 'payload.body': big(5000) } }),
      c('headers a list', { ...HOOK, headers: ['X-A: 1'] }),
      c('headers with a number value', { ...HOOK, headers: { 'X-A': 1 } }),
      c('headers naming Host', { ...HOOK, headers: { Host: 'a.example' } }),
      c('headers naming a signature header', { ...HOOK, headers: { 'X-Service-Signature': 'x' } }),
      c('headers with a line break', { ...HOOK, headers: { 'X-A': 'a\r\nX-B: b' } }),
      c('headers with a bad name', { ...HOOK, headers: { 'X A': 'a' } }),
      c('headers 21 of them', {
        ...HOOK,
        headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])),
      }),
      c('rate_limit a number', { ...HOOK, rate_limit: 5 }),
      c('rate_limit per_second 0', { ...HOOK, rate_limit: { per_second: 0 } }),
      c('rate_limit per_second a fraction', { ...HOOK, rate_limit: { per_second: 1.5 } }),
      c('rate_limit per_second 10 001', { ...HOOK, rate_limit: { per_second: 10_001 } }),
      c('rate_limit with another field', { ...HOOK, rate_limit: { per_second: 5, burst: 2 } }),
    ];
  };
  const events = post('/instances/{ins}/events');
  const engine = post('/instances/{ins}/engine/waha');
  const evolution = post('/instances/{ins}/engine/evolution');
  const source = post('/sources');
  const patchSource = post('/sources/{source}', 'PATCH');
  const patchInstance = post('/instances/{ins}', 'PATCH');
  const batch = post('/instances/{ins}/events/batch');
  const enabled = post('/instances/{ins}/webhooks/{whk}/enabled');
  const rotate = post('/instances/{ins}/webhooks/{whk}/rotate-secret');
  const links = post('/instances/{ins}/portal-links');
  const redeliver = post('/instances/{ins}/deliveries/redeliver');
  const list = (query: string): Case => ({
    what: `query ${query.length > 40 ? `${query.slice(0, 40)}…` : query}`,
    method: 'GET',
    path: `/instances/{ins}/deliveries?${query}`,
    status: 400,
    code: 'invalid_request',
  });
  return [
    instance('name a number', { name: 5 }),
    instance('name of 201 characters', { name: big(201) }),
    instance('name an object', { name: { first: 'x' } }),
    patchInstance('name of 201 characters', { name: big(201) }),
    patchInstance('engine_hmac_key a number', { engine_hmac_key: 7 }),
    patchInstance('engine_hmac_key empty', { engine_hmac_key: '' }),
    patchInstance('engine_hmac_key of 1025 characters', { engine_hmac_key: big(1025) }),
    engine('event missing', { ...WAHA, event: undefined }),
    evolution('event missing', { ...EVOLUTION, event: undefined }),
    evolution('event empty', { ...EVOLUTION, event: '' }),
    evolution('data missing', { ...EVOLUTION, data: undefined }),
    evolution('a message without key.id', {
      ...EVOLUTION,
      data: { ...EVOLUTION.data, key: { fromMe: false } },
    }),
    evolution('key.fromMe a string', {
      ...EVOLUTION,
      data: { ...EVOLUTION.data, key: { ...EVOLUTION.data.key, fromMe: 'no' } },
    }),
    evolution('an ack without keyId', { ...EVOLUTION, event: 'messages.update', data: { status: 'READ' } }),
    source('url missing', { format: 'herald' }),
    source('format missing', { url: SOURCE.url }),
    source('format unknown', { ...SOURCE, format: 'kafka' }),
    source('url ftp', { ...SOURCE, url: 'ftp://127.0.0.1/x' }),
    source('url of RabbitMQ without queue', { ...SOURCE, url: 'amqp://127.0.0.1:1/%2F' }),
    source('url of JetStream without consumer', { ...SOURCE, url: 'nats://127.0.0.1:1/STREAM' }),
    source('url of Redis without group', { ...SOURCE, url: 'redis://127.0.0.1:1/0?stream=s' }),
    source('url of 200 000 characters', { ...SOURCE, url: `amqp://127.0.0.1/${big(200_000)}?queue=q` }),
    source('instance_id malformed', { ...SOURCE, instance_id: 'nope' }),
    source('instance_id unknown', { ...SOURCE, instance_id: UNKNOWN.ins }),
    patchSource('format unknown', { ...SOURCE, format: 'kafka' }),
    patchSource('url missing', { format: 'herald' }),
    {
      what: 'sources with an instance key',
      method: 'GET',
      path: '/sources',
      as: 'instance',
      status: 403,
      code: 'forbidden',
    },
    {
      what: 'a source made with an instance key',
      method: 'POST',
      path: '/sources',
      options: { body: SOURCE },
      as: 'instance',
      status: 403,
      code: 'forbidden',
    },
    engine('payload missing', { ...WAHA, payload: undefined }),
    engine('id with a space', { ...WAHA, id: 'evt_a b' }),
    engine('timestamp a string', { ...WAHA, timestamp: 'now' }),
    engine('me a string', { ...WAHA, me: 'me' }),
    engine('a message without id', { ...WAHA, payload: messagePayload({ id: undefined }) }),
    engine('an ack of 7', { ...WAHA, event: 'message.ack', payload: { id: 'x', ack: 7 } }),
    ...hook('/instances/{ins}/webhooks', 'POST'),
    post('/instances/{ins}/webhooks')('clear_client_sign on create', { ...HOOK, clear_client_sign: true }),
    ...hook('/instances/{ins}/webhooks/{whk}', 'PATCH'),
    post('/instances/{ins}/webhooks/{whk}', 'PATCH')('clear_client_sign with a new secret', {
      ...HOOK,
      client_sign_secret: 's',
      clear_client_sign: true,
    }),
    post('/instances/{ins}/webhooks/{whk}', 'PATCH')('clear_client_sign a string', {
      ...HOOK,
      clear_client_sign: 'yes',
    }),
    rotate('grace_s negative', { grace_s: -1 }),
    rotate('grace_s beyond 7 days', { grace_s: 604_801 }),
    rotate('grace_s a string', { grace_s: '60' }),
    rotate('client_sign_secret empty', { client_sign_secret: '' }),
    rotate('client_sign_secret of 1025 characters', { client_sign_secret: big(1025) }),
    links('ttl_s 59', { ttl_s: 59 }),
    links('ttl_s a day and a second', { ttl_s: 86_401 }),
    links('ttl_s a string', { ttl_s: '3600' }),
    links('ttl_s a fraction', { ttl_s: 60.5 }),
    links('read_only a string', { read_only: 'yes' }),
    links('an unknown field', { instance_id: 'ins_x' }),
    enabled('enabled missing', {}),
    enabled('enabled a string', { enabled: 'true' }),
    enabled('enabled a number', { enabled: 1 }),
    enabled('enabled null', { enabled: null }),
    events('event missing', { payload: {} }),
    events('payload missing', { event: 'message' }),
    events('event a number', { event: 5, payload: {} }),
    events('event unknown', { event: 'mesage', payload: {} }),
    events('event of 100 000 characters', { event: big(100_000), payload: {} }),
    events('payload an array', { event: 'message', payload: [] }),
    events('payload a string', { event: 'message', payload: 'hi' }),
    events('message without its fields', { event: 'message', payload: {} }),
    events('message without fromMe', { event: 'message', payload: messagePayload({ fromMe: undefined }) }),
    events('fromMe a string', { event: 'message.any', payload: messagePayload({ fromMe: 'no' }) }),
    events('media while hasMedia is false', {
      event: 'message',
      payload: messagePayload({ media: { url: 'https://93.184.215.14/a.jpg' } }),
    }),
    events('session.status in lower case', { event: 'session.status', payload: { status: 'working' } }),
    events('message.unknown bad error_code', {
      event: 'message.unknown',
      payload: { message_id: 'msg_1', client_reference: 'r', to: '1', type: 'text', error_code: 'OOPS' },
    }),
    events('event_id without evt_', { ...EVENT, event_id: 'abc' }),
    events('event_id of 10 000 characters', { ...EVENT, event_id: `evt_${big(10_000)}` }),
    events('timestamp negative', { ...EVENT, timestamp: -1 }),
    events('timestamp a fraction', { ...EVENT, timestamp: 1.5 }),
    events('timestamp a string', { ...EVENT, timestamp: '1700000000000' }),
    events('timestamp beyond dates', { ...EVENT, timestamp: 9e15 }),
    events(
      'payload beyond 256 KiB',
      { event: 'message', payload: messagePayload({ body: big(256 * 1024) }) },
      413,
      'payload_too_large',
    ),
    batch('events missing', {}),
    batch('events empty', { events: [] }),
    batch('events an object', { events: EVENT }),
    batch('one bad event among good ones', { events: [EVENT, { event: 'nope', payload: {} }, EVENT] }),
    batch('1001 events', { events: Array.from({ length: 1001 }, () => EVENT) }),
    batch(
      'an event beyond 256 KiB',
      { events: [{ event: 'message', payload: messagePayload({ body: big(256 * 1024) }) }] },
      413,
      'payload_too_large',
    ),
    redeliver('webhook_id malformed', { webhook_id: 'nope' }),
    redeliver('webhook_id unknown', { webhook_id: UNKNOWN.whk }, 404, 'not_found'),
    redeliver('webhook_id of another instance', { webhook_id: '{whkB}' }, 404, 'not_found'),
    redeliver('since not a date', { since: 'yesterday' }),
    redeliver('until a number', { until: 5 }),
    redeliver('since an impossible date', { since: '2026-02-30T00:00:00Z' }),
    list('limit=0'),
    list('limit=201'),
    list('limit=abc'),
    list('limit=1e2'),
    list('status=lost'),
    list('event=mesage'),
    list('cursor=abc'),
    list('cursor=-1'),
    list(`cursor=${'9'.repeat(40)}`),
    list('webhook_id=nope'),
    list('event_id=nope'),
    list('unknown=1'),
    list(`event=${big(10_000)}`),
    ...['0', '169', '2.5', 'abc', '024', `${big(100)}`].map(
      (hours): Case => ({
        what: `stats hours=${hours.slice(0, 20)}`,
        method: 'GET',
        path: `/instances/{ins}/webhooks/{whk}/stats?hours=${hours}`,
        status: 400,
        code: 'invalid_request',
      }),
    ),
    {
      what: 'redeliver a delivery that is not failed',
      method: 'POST',
      path: '/instances/{ins}/deliveries/{dlv}/redeliver',
      status: 409,
      code: 'conflict',
    },
    {
      what: 'metrics with an instance key',
      method: 'GET',
      path: '/metrics',
      as: 'instance',
      status: 403,
      code: 'forbidden',
    },
    {
      what: 'test delivery of an unknown kind',
      method: 'POST',
      path: '/instances/{ins}/webhooks/{whk}/test',
      options: { body: { event: 'mesage' } },
      status: 400,
      code: 'invalid_request',
    },
    {
      what: 'test delivery without an event',
      method: 'POST',
      path: '/instances/{ins}/webhooks/{whk}/test',
      options: { body: {} },
      status: 400,
      code: 'invalid_request',
    },
    {
      what: 'media: malformed Content-Type',
      method: 'POST',
      path: '/instances/{ins}/media',
      options: { rawBody: 'bytes', contentType: 'image/' },
      status: 400,
      code: 'invalid_request',
    },
    {
      what: 'media: beyond MEDIA_MAX_BYTES',
      method: 'POST',
      path: '/instances/{ins}/media',
      options: { rawBody: big(MEDIA_MAX_BYTES + 1), contentType: 'image/png' },
      status: 413,
      code: 'payload_too_large',
    },
    {
      what: 'media link without expires and sig',
      method: 'GET',
      path: `/media/med_${'0'.repeat(22)}`,
      options: { key: null },
      status: 403,
      code: 'forbidden',
    },
    {
      what: 'media link with a forged sig',
      method: 'GET',
      path: `/media/med_${'0'.repeat(22)}?expires=9999999999&sig=${'A'.repeat(43)}`,
      options: { key: null },
      status: 403,
      code: 'forbidden',
    },
    {
      what: 'admin operation with an instance key',
      method: 'POST',
      path: '/instances/{ins}/keys',
      as: 'instance',
      status: 403,
      code: 'forbidden',
    },
  ];
}

let h: TestHerald;
let receiver: TestReceiver;
const ids: Record<string, string> = {};
let instanceKey: string;

/** Everything the API lists, in full: instances, their keys, webhooks, deliveries and each delivery's detail. */
async function snapshot(): Promise<unknown> {
  const get = async (path: string) => {
    const r = await h.request('GET', path);
    assert.equal(r.status, 200, `snapshot ${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const { instances } = await get('/instances');
  // A source's state and counters move by themselves (its consumer retries): what it is, not how it is doing.
  const { sources } = await get('/sources');
  const all: unknown[] = [
    sources.map((s: Record<string, unknown>) => [s.source_id, s.url, s.format, s.instance_id]),
  ];
  for (const i of instances) {
    const base = `/instances/${i.instance_id}`;
    const { deliveries } = await get(`${base}/deliveries?limit=200`);
    all.push({
      instance: await get(base),
      keys: await get(`${base}/keys`),
      webhooks: await get(`${base}/webhooks`),
      links: await get(`${base}/portal-links`),
      deliveries: await Promise.all(
        deliveries.map((d: { delivery_id: string }) => get(`${base}/deliveries/${d.delivery_id}`)),
      ),
    });
  }
  return all;
}

const fill = (text: string) => text.replace(/\{(\w+)\}/g, (m, name: string) => ids[name] ?? m);

before(async () => {
  receiver = await TestReceiver.start();
  h = await startTestHerald({
    ALLOW_PRIVATE_DESTINATIONS: 'false',
    ALLOWED_DESTINATION_CIDRS: '127.0.0.1/32',
    MEDIA_MAX_BYTES: String(MEDIA_MAX_BYTES),
  });
  for (const suffix of ['', 'B']) {
    const ins = await h.createInstance(`sweep${suffix}`);
    const key = (await h.request('POST', `/instances/${ins}/keys`)).body;
    const whk = await h.createWebhook(ins, {
      destination_url: receiver.url,
      events: ['*'],
      client_sign_secret: 's3cret',
    });
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
    const dlv = await eventually(async () => {
      const { deliveries } = (await h.request('GET', `/instances/${ins}/deliveries`)).body;
      return deliveries[0]?.status === 'delivered' ? deliveries[0].delivery_id : undefined;
    });
    const link = (await h.request('POST', `/instances/${ins}/portal-links`, { body: {} })).body;
    Object.assign(ids, {
      [`ins${suffix}`]: ins,
      [`whk${suffix}`]: whk,
      [`dlv${suffix}`]: dlv,
      [`key${suffix}`]: key.key_id,
      [`link${suffix}`]: link.link_id,
    });
    if (suffix === '') instanceKey = key.key;
  }
  ids.event = 'messages-upsert';
  ids.source = (await h.request('POST', '/sources', { body: SOURCE })).body.source.source_id;
});
after(async () => {
  await h.close();
  await receiver.close();
});

describe('bad input on every endpoint', () => {
  it('the sweep covers every endpoint of /openapi.json', async () => {
    const { paths } = (await h.request('GET', '/openapi.json')).body;
    const documented = Object.entries(paths as Record<string, object>).flatMap(([p, ops]) =>
      Object.keys(ops).map(
        (m) =>
          `${m.toUpperCase()} ${p.replace(/\{(\w+)_id\}/g, (_, n) => `{${n === 'instance' ? 'ins' : n === 'webhook' ? 'whk' : n === 'delivery' ? 'dlv' : n}}`)}`,
      ),
    );
    const swept = ENDPOINTS.map((e) => `${e.method} ${e.path}`);
    for (const d of documented)
      if (!/^GET \/(healthz|readyz)$/.test(d)) assert.ok(swept.includes(d), `${d} is not swept`);
  });

  const cases = [...ENDPOINTS.flatMap(genericCases), ...fieldCases()];
  it(`has a few hundred cases (${cases.length})`, () => assert.ok(cases.length >= 250));

  for (const c of cases) {
    const path = c.path.length > 80 ? `${c.path.slice(0, 80)}…` : c.path;
    it(`${c.method} ${path} — ${c.what} → ${c.status}`, async () => {
      const before = await snapshot();
      let options = c.options ?? {};
      if (options.body !== undefined)
        options = { ...options, body: JSON.parse(fill(JSON.stringify(options.body))) };
      if (c.as === 'instance') options = { ...options, key: instanceKey };
      const r: Reply = await h.request(c.method, fill(c.path), options);
      assert.equal(r.status, c.status, `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.body.success, false);
      assert.equal(r.body.error.code, c.code);
      assert.ok(typeof r.body.error.message === 'string' && r.body.error.message.length > 0);
      assert.ok(r.body.error.message.length < 1000, 'the message does not echo huge input');
      assert.deepEqual(await snapshot(), before, 'the store is unchanged');
    });
  }
});
