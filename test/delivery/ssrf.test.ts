/**
 * SSRF (SPEC §6, issue 5): hostile destinations are refused when a webhook is saved (422) and again when an attempt
 * connects (attempt error destination_not_allowed, nothing sent). Every hostile URL points at a live receiver on
 * 127.0.0.1, so a guard that let one through would be seen there. Names resolve through an injected resolver.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ThreadFeed } from '../../src/delivery/thread-feed.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';
import type { Lookup } from '../../src/net/destination.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { attempter } from '../support/lane-sender.ts';
import { TestReceiver } from '../support/receiver.ts';

const PUBLIC = '93.184.215.14';
const zone: Record<string, string[]> = {
  'private.test': ['10.0.0.5'],
  'loop.test': ['127.0.0.1'],
  'loop6.test': ['::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'nat64.test': ['64:ff9b::7f00:1'],
  'metadata.test': ['169.254.169.254'],
  'cgnat.test': ['100.64.0.1'],
  'mixed.test': [PUBLIC, '127.0.0.1'],
  'ula.test': ['fd00::1'],
  'public.test': [PUBLIC],
};
const resolve: Lookup = async (host) => {
  const found = zone[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

/** `P` is replaced by the receiver's port. */
const HOSTILE = [
  'http://127.0.0.1:P/hook',
  'http://2130706433:P/hook', // decimal
  'http://0x7f000001:P/hook', // hex
  'http://0x7f.0.0.1:P/hook', // hex octet
  'http://0177.0.0.1:P/hook', // octal
  'http://017700000001:P/hook', // octal, one number
  'http://127.1:P/hook', // short form
  'http://127.0.0.1.:P/hook', // trailing dot
  'http://127\u30020\u30020\u30021:P/hook', // ideographic full stops
  'http://127\uff0e0\uff0e0\uff0e1:P/hook', // fullwidth full stops
  'http://localhost:P/hook',
  'http://LOCALHOST.:P/hook',
  'http://api.localhost:P/hook',
  'http://0:P/hook',
  'http://0.0.0.0:P/hook',
  'http://[::]:P/hook',
  'http://[::1]:P/hook',
  'http://[0:0:0:0:0:0:0:1]:P/hook',
  'http://[::ffff:127.0.0.1]:P/hook', // IPv4-mapped
  'http://[::ffff:7f00:1]:P/hook',
  'http://[64:ff9b::127.0.0.1]:P/hook', // NAT64
  'http://[::127.0.0.1]:P/hook', // IPv4-compatible
  'http://[2002:7f00:1::]:P/hook', // 6to4 carrying 127.0.0.1
  'http://[fe80::1]:P/hook',
  'http://[fc00::1]:P/hook',
  'http://[ff02::1]:P/hook',
  'http://169.254.169.254:P/latest/meta-data/',
  'http://[::ffff:169.254.169.254]:P/',
  'http://10.0.0.1:P/hook',
  'http://172.16.0.1:P/hook',
  'http://192.168.1.1:P/hook',
  'http://100.64.0.1:P/hook',
  'http://198.18.0.1:P/hook',
  'http://224.0.0.1:P/hook',
  'http://255.255.255.255:P/hook',
  'http://private.test:P/hook',
  'http://loop.test:P/hook',
  'http://loop6.test:P/hook',
  'http://mapped.test:P/hook',
  'http://nat64.test:P/hook',
  'http://metadata.test:P/hook',
  'http://cgnat.test:P/hook',
  'http://mixed.test:P/hook',
  'http://ULA.test.:P/hook',
];

const claimFor = (destination_url: string): ClaimedDelivery => ({
  delivery_id: 'dlv_ssrf0000000000000000',
  event_id: 'evt_ssrf0000000000000000',
  instance_id: 'ins_ssrf0000000000000000',
  webhook_id: 'whk_ssrf0000000000000000',
  destination_url,
  destination_sealed: null,
  secret_sealed: null,
  previous_secret_sealed: null,
  headers_sealed: null,
  standard_webhooks: false,
  body: '{}',
  start_at: 0,
  rate_limit: null,
  cycle_attempt: 1,
  attempt: 1,
  trigger: 'scheduled',
  lease_token: 'lease',
  trace_context: null,
});

let receiver: TestReceiver;
let port: string;
let guarded: TestHerald;
let instanceId: string;
let sender: ThreadFeed;
let attempt: (claim: ClaimedDelivery) => Promise<AttemptOutcome | null>;
before(async () => {
  receiver = await TestReceiver.start();
  port = new URL(receiver.url).port;
  guarded = await startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'false' }, { resolve });
  instanceId = await guarded.createInstance('ssrf');
  sender = new ThreadFeed({
    timeoutMs: 2000,
    destinations: { allowPrivate: false, lookup: resolve },
    secretBox: new SecretBox(randomBytes(32)),
    userAgent: 'Herald/test',
    clock: Date.now,
    logger: pino({ level: 'silent' }),
    maxRunning: 512,
  });
  attempt = attempter(sender);
});
after(async () => {
  await sender.close();
  await guarded.close();
  await receiver.close();
});

/**
 * The attempt's outcome. A claim whose window closed before it started (the delivery thread still starting on a busy
 * machine) comes back unstarted, and is handed over again, as the dispatcher would.
 */
async function attemptStarted(claim: ClaimedDelivery): Promise<AttemptOutcome> {
  for (let handed = 1; ; handed++) {
    const outcome = await attempt(claim);
    if (outcome) return outcome;
    assert.ok(handed < 5, 'the attempt never started');
  }
}

describe('every hostile destination is refused', () => {
  assert.ok(HOSTILE.length >= 30);
  for (const template of HOSTILE) {
    it(template.replace(':P', ''), async () => {
      const url = template.replace(':P', `:${port}`);
      const saved = await guarded.request('POST', `/instances/${instanceId}/webhooks`, {
        body: { destination_url: url, events: ['message'] },
      });
      assert.equal(saved.status, 422, JSON.stringify(saved.body));
      assert.equal(saved.body.error.code, 'destination_not_allowed');
      assert.equal(saved.body.error.details[0].field, 'destination_url');

      const outcome = await attemptStarted(claimFor(url));
      assert.equal(
        outcome.error,
        'destination_not_allowed',
        `${url} was attempted: ${JSON.stringify(outcome)}`,
      );
      assert.equal(outcome.status_code, null);
    });
  }

  it('nothing reached the receiver', () => assert.equal(receiver.received.length, 0));
});

describe('public destinations pass the guard', () => {
  for (const url of [`https://${PUBLIC}/hook`, 'https://public.test/hook', 'https://[2606:4700::1111]/']) {
    it(url, async () => {
      const saved = await guarded.request('POST', `/instances/${instanceId}/webhooks`, {
        body: { destination_url: url, events: ['message'] },
      });
      assert.equal(saved.status, 201, JSON.stringify(saved.body));
    });
  }
});

describe('DNS rebinding: public when saved, private when sent', () => {
  it('the attempt is logged as destination_not_allowed and nothing reaches the receiver', async () => {
    let asked = 0;
    // The first answer (at save time) is public; every later one points at the receiver on loopback.
    const rebinding: Lookup = async (host) => {
      if (host !== 'rebind.test') return resolve(host);
      return asked++ === 0 ? [PUBLIC] : ['127.0.0.1'];
    };
    const h = await startTestHerald(
      { ALLOW_PRIVATE_DESTINATIONS: 'false', RETRY_SCHEDULE: '30' },
      { resolve: rebinding },
    );
    try {
      const ins = await h.createInstance('rebind');
      const whk = await h.createWebhook(ins, {
        destination_url: `http://rebind.test:${port}/hook`,
        events: ['message'],
      });
      assert.equal(asked, 1, 'checked once at save time');
      const published = await h.publish(ins, { event: 'message', payload: messagePayload() });
      assert.equal(published.body.deliveries, 1);
      const delivery = await eventually(async () => {
        const r = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${whk}`);
        const d = r.body.deliveries[0];
        return d?.attempt_count >= 1 ? d : undefined;
      });
      assert.equal(delivery.last_error, 'destination_not_allowed');
      assert.equal(delivery.last_status_code, null);
      const detail = await h.request('GET', `/instances/${ins}/deliveries/${delivery.delivery_id}`);
      assert.equal(detail.body.delivery.attempts[0].error, 'destination_not_allowed');
      assert.ok(asked >= 2, 'resolved again at connect time');
      assert.equal(receiver.received.length, 0);
    } finally {
      await h.close();
    }
  });
});

describe('a webhook saved while private destinations were allowed', () => {
  it('fails its delivery at once with destination_not_allowed once Herald runs without the setting', async () => {
    const before = receiver.received.length;
    const allowing = await startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'true' });
    const ins = await allowing.createInstance('was-allowed');
    const whk = await allowing.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
    await allowing.close({ keepData: true });
    // Six attempts a few milliseconds apart, should they all be made.
    const h = await startTestHerald(
      { ALLOW_PRIVATE_DESTINATIONS: 'false', RETRY_SCHEDULE: '0.01,0.01,0.01,0.01,0.01' },
      { dataDir: allowing.dataDir },
    );
    try {
      const published = await h.publish(ins, { event: 'message', payload: messagePayload() });
      assert.equal(published.body.deliveries, 1);
      const failed = await eventually(async () => {
        const r = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${whk}`);
        const d = r.body.deliveries[0];
        return d?.status === 'failed' ? d : undefined;
      });
      assert.deepEqual(
        [failed.failure_reason, failed.attempt_count, failed.last_error, failed.next_attempt_at],
        ['destination_not_allowed', 1, 'destination_not_allowed', null],
      );
      const detail = await h.request('GET', `/instances/${ins}/deliveries/${failed.delivery_id}`);
      assert.deepEqual(
        detail.body.delivery.attempts.map((a: any) => [a.error, a.next_attempt_at]),
        [['destination_not_allowed', null]],
      );
      assert.equal(receiver.received.length, before, 'nothing reached the receiver');
    } finally {
      await h.close();
    }
  });
});

describe('ALLOWED_DESTINATION_CIDRS lifts the guard narrowly', () => {
  let h: TestHerald;
  let ins: string;
  before(async () => {
    h = await startTestHerald(
      { ALLOW_PRIVATE_DESTINATIONS: 'false', ALLOWED_DESTINATION_CIDRS: '127.0.0.1/32, fd00::/8' },
      { resolve },
    );
    ins = await h.createInstance('allow');
  });
  after(() => h.close());

  const create = (url: string) =>
    h.request('POST', `/instances/${ins}/webhooks`, { body: { destination_url: url, events: ['message'] } });

  for (const template of [
    'http://127.0.0.1:P/hook',
    'http://0x7f000001:P/hook',
    'http://[::ffff:127.0.0.1]:P/hook',
    'http://loop.test:P/hook',
    'http://[fd00::1]:P/hook',
    'http://ula.test:P/hook',
  ]) {
    it(`accepts ${template.replace(':P', '')}`, async () => {
      const r = await create(template.replace(':P', `:${port}`));
      assert.equal(r.status, 201, JSON.stringify(r.body));
    });
  }

  for (const template of [
    'http://127.0.0.2:P/hook',
    'http://10.0.0.1:P/hook',
    'http://[::1]:P/hook',
    'http://[fe80::1]:P/hook',
    'http://localhost:P/hook',
    'http://private.test:P/hook',
    'http://[::ffff:10.0.0.1]:P/hook',
    'http://169.254.169.254:P/',
  ]) {
    it(`still refuses ${template.replace(':P', '')}`, async () => {
      const r = await create(template.replace(':P', `:${port}`));
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'destination_not_allowed');
    });
  }

  it('delivers to an allowed address, by literal and by a name resolved at connect time', async () => {
    const before = receiver.received.length;
    for (const host of ['127.0.0.1', 'loop.test']) {
      await h.createWebhook(ins, {
        destination_url: `http://${host}:${port}/hook`,
        events: ['session.status'],
      });
    }
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
    await receiver.waitFor(before + 2);
    await eventually(
      async () => {
        const { deliveries } = (await h.request('GET', `/instances/${ins}/deliveries?status=delivered`)).body;
        return deliveries.length === 2 ? true : undefined;
      },
      10_000,
      'both deliveries delivered',
    );
  });
});
