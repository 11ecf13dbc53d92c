/**
 * Standard Webhooks per webhook: a delivery of a webhook with `standard_webhooks` verifies with the `standardwebhooks`
 * and `svix` libraries as they are (and with the receiver kit), before, during and after a rotation, while Herald's own
 * headers still verify; its secret must be a `whsec_` one, and every way of setting another is a 400 naming it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { verify, verifyStandard } from '../../packages/receiver/src/index.ts';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Received, TestReceiver } from '../support/receiver.ts';

/** The clock of the Herald under test: real time plus a skew a test may add (a rotation's grace passing). */
let skew = 0;
const clock = () => Date.now() + skew;
let h: TestHerald;
before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.2' }, { clock });
});
after(() => h.close());

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

async function hook(t: TestContext, config: Record<string, unknown>) {
  const ins = await h.createInstance();
  const r = await TestReceiver.start();
  t.after(() => r.close());
  const id = await h.createWebhook(ins, { destination_url: r.url, events: ['message'], ...config });
  return { ins, r, id };
}

const publish = (ins: string, id: string) =>
  h.publish(ins, { event: 'message', payload: messagePayload({ id }) });

/** The headers as the libraries take them: one string per name. */
const flat = (got: Received) =>
  Object.fromEntries(
    Object.entries(got.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
  );

/** Whether each verifier accepts the delivery with `secret`: standardwebhooks, svix, the receiver kit. */
function verdicts(got: Received, secret: string): [boolean, boolean, boolean] {
  const body = got.rawBody.toString('utf8');
  const accepts = (check: () => unknown) => {
    try {
      check();
      return true;
    } catch {
      return false;
    }
  };
  return [
    accepts(() => new StandardWebhook(secret).verify(body, flat(got))),
    accepts(() => new SvixWebhook(secret).verify(body, flat(got))),
    verifyStandard({ secret, headers: got.headers, rawBody: got.rawBody }).ok,
  ];
}

describe('Standard Webhooks', () => {
  test("a delivery carries webhook-id, webhook-timestamp and webhook-signature beside Herald's own headers", async (t) => {
    const { ins, r, id } = await hook(t, { standard_webhooks: true, client_sign_secret: SECRET });
    const view = await h.request('GET', `/instances/${ins}/webhooks/${id}`);
    assert.equal(view.body.webhook.standard_webhooks, true);
    await publish(ins, 'one');
    const [got] = await r.waitFor(1);
    assert.equal(got.headers['webhook-id'], got.headers['x-service-event-id']);
    assert.equal(got.headers['webhook-timestamp'], got.headers['x-service-timestamp']);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(verdicts(got, SECRET), [true, true, true]);
    assert.equal(
      verify({ secret: SECRET, headers: got.headers, rawBody: got.rawBody }).ok,
      true,
      'Herald’s own',
    );
    const other = `whsec_${Buffer.alloc(32, 8).toString('base64')}`;
    assert.deepEqual(verdicts(got, other), [false, false, false], 'another secret');
    const tampered = { ...got, rawBody: Buffer.from(got.rawBody.toString('utf8').replace('one', 'two')) };
    assert.deepEqual(verdicts(tampered, SECRET), [false, false, false], 'another body');
  });

  test('without it no webhook-* header is sent; without a secret, no webhook-signature', async (t) => {
    const plain = await hook(t, { client_sign_secret: SECRET });
    await publish(plain.ins, 'plain');
    const [p] = await plain.r.waitFor(1);
    assert.deepEqual(
      Object.keys(p.headers).filter((k) => k.startsWith('webhook-')),
      [],
    );
    const unsigned = await hook(t, { standard_webhooks: true });
    await publish(unsigned.ins, 'unsigned');
    const [u] = await unsigned.r.waitFor(1);
    assert.deepEqual(
      [
        Boolean(u.headers['webhook-id']),
        Boolean(u.headers['webhook-timestamp']),
        u.headers['webhook-signature'],
      ],
      [true, true, undefined],
    );
  });

  test('a rotation: both secrets verify during the grace (new signature first), only the new one after', async (t) => {
    const { ins, r, id } = await hook(t, { standard_webhooks: true, client_sign_secret: SECRET });
    const rotated = await h.request('POST', `/instances/${ins}/webhooks/${id}/rotate-secret`, {
      body: { grace_s: 60 },
    });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const fresh: string = rotated.body.client_sign_secret;
    assert.match(fresh, /^whsec_[A-Za-z0-9+/]{32}$/, 'generated: the base64 of 24 bytes');
    await publish(ins, 'during');
    const [during] = await r.waitFor(1);
    const signatures = String(during.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    assert.deepEqual(verdicts(during, fresh), [true, true, true]);
    assert.deepEqual(verdicts(during, SECRET), [true, true, true]);
    const newOnly = { ...during, headers: { ...during.headers, 'webhook-signature': signatures[0] } };
    assert.deepEqual(verdicts(newOnly, fresh), [true, true, true], 'the new one first');

    skew += 61_000; // the grace ends (well within the libraries' 5 minutes of tolerance)
    try {
      await publish(ins, 'after');
      const [, later] = await r.waitFor(2);
      assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
      assert.deepEqual(verdicts(later, fresh), [true, true, true]);
      assert.deepEqual(verdicts(later, SECRET), [false, false, false]);
    } finally {
      skew -= 61_000;
    }
  });

  test('a secret that is not whsec_ and base64 of 24 to 64 bytes is a 400 naming client_sign_secret', async (t) => {
    const ins = await h.createInstance();
    const create = (body: Record<string, unknown>) =>
      h.request('POST', `/instances/${ins}/webhooks`, {
        body: { destination_url: 'https://203.0.113.7/hook', events: ['message'], ...body },
      });
    const refusedSecret = (res: { status: number; body: any }, what: string) => {
      assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.details[0].field, 'client_sign_secret');
      assert.match(res.body.error.message, /whsec_ followed by the base64 of 24 to 64 bytes/);
    };
    for (const secret of [
      'not-whsec',
      'whsec_short',
      `whsec_${Buffer.alloc(16).toString('base64')}`,
      `whsec_${Buffer.alloc(65).toString('base64')}`,
      `whsec_${Buffer.alloc(33, 0xfb).toString('base64url')}`,
    ]) {
      refusedSecret(await create({ standard_webhooks: true, client_sign_secret: secret }), secret);
    }
    assert.equal((await create({ standard_webhooks: true, client_sign_secret: SECRET })).status, 201);

    // Turned on over a secret of Herald's free form: refused until the secret is one.
    const { ins: other, id } = await hook(t, { client_sign_secret: 'my-old-secret' });
    const patch = (body: Record<string, unknown>) =>
      h.request('PATCH', `/instances/${other}/webhooks/${id}`, {
        body: {
          destination_url: 'https://203.0.113.7/hook',
          events: ['message'],
          standard_webhooks: true,
          ...body,
        },
      });
    const kept = await patch({});
    refusedSecret(kept, 'the kept secret');
    assert.match(kept.body.error.message, /current secret is not/);
    assert.equal((await patch({ client_sign_secret: SECRET })).status, 200);
    // Rotating a Standard Webhooks webhook to a secret of another form.
    refusedSecret(
      await h.request('POST', `/instances/${other}/webhooks/${id}/rotate-secret`, {
        body: { client_sign_secret: 'my-next-secret' },
      }),
      'rotation',
    );
    const header = await create({ headers: { 'Webhook-Id': 'mine' } });
    assert.equal(header.status, 400);
    assert.equal(header.body.error.details[0].field, 'headers.Webhook-Id');
  });
});
