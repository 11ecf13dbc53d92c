/**
 * The typed API client (@herald/client): its types are what openapi-typescript makes of the API today (regenerated
 * here and compared, so the committed file cannot drift), and it drives a real Herald end to end.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, OUTPUT } from '../../packages/client/scripts/generate.ts';
import { createHeraldClient, type operations } from '../../packages/client/src/index.ts';
import { ADMIN_KEY, eventually, messagePayload, startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

test('the committed client types are exactly what the API generates (run "npm run generate:client" if not)', async () => {
  const committed = readFileSync(OUTPUT, 'utf8');
  const fresh = await generate();
  if (committed !== fresh) {
    const a = committed.split('\n');
    const b = fresh.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    assert.fail(
      `packages/client/src/openapi.ts is out of date at line ${line + 1}:\n` +
        `  committed: ${a[line]}\n  generated: ${b[line]}\nRun "npm run generate:client" and commit the result.`,
    );
  }
});

test('the client creates, enables, publishes and reads the delivery log of a real Herald', async () => {
  const h = await startTestHerald();
  const receiver = await TestReceiver.start();
  try {
    const herald = createHeraldClient({ baseUrl: h.url, key: ADMIN_KEY });
    const created = await herald.POST('/instances', { body: { name: 'typed' } });
    assert.equal(created.response.status, 201);
    const instance_id = created.data?.instance_id ?? assert.fail('no instance_id');
    const path = { instance_id };

    const hook = await herald.POST('/instances/{instance_id}/webhooks', {
      params: { path },
      body: { destination_url: receiver.url, events: ['message'] },
    });
    const webhook_id = hook.data?.webhook_id ?? assert.fail('no webhook_id');
    await herald.POST('/instances/{instance_id}/webhooks/{webhook_id}/enabled', {
      params: { path: { instance_id, webhook_id } },
      body: { enabled: true },
    });
    const published = await herald.POST('/instances/{instance_id}/events', {
      params: { path },
      body: { event: 'message', payload: messagePayload() },
    });
    assert.equal(published.data?.deliveries, 1);
    await receiver.waitFor(1);

    const delivered = await eventually(async () => {
      const { data } = await herald.GET('/instances/{instance_id}/deliveries', {
        params: { path, query: { status: 'delivered', event_id: published.data?.event_id } },
      });
      return data?.deliveries[0];
    });
    assert.equal(delivered.attempt_count, 1);
    const detail = await herald.GET('/instances/{instance_id}/deliveries/{delivery_id}', {
      params: { path: { instance_id, delivery_id: delivered.delivery_id } },
    });
    assert.equal(detail.data?.delivery.attempts.length, detail.data?.delivery.attempt_count);
    assert.equal(detail.data?.delivery.attempts[0].status_code, 200);

    // Errors are typed too: the API's error body.
    const refused = await herald.POST('/instances/{instance_id}/webhooks', {
      params: { path },
      body: { destination_url: receiver.url, events: [] },
    });
    assert.equal(refused.response.status, 400);
    assert.equal(refused.error?.error.message, 'events: choose at least one event kind');
  } finally {
    await receiver.close();
    await h.close();
  }
});

test("the client's operations carry the API's operationIds: a body typed by name is one the API takes", async () => {
  const h = await startTestHerald();
  try {
    const herald = createHeraldClient({ baseUrl: h.url, key: ADMIN_KEY });
    // Typed through operations["createInstance"] / ["createWebhook"]: a renamed or missing id fails to compile.
    const instance: operations['createInstance']['requestBody'] = {
      content: { 'application/json': { name: 'ids' } },
    };
    const created = await herald.POST('/instances', { body: instance?.content['application/json'] });
    const instance_id = created.data?.instance_id ?? assert.fail('no instance_id');
    const webhook: operations['createWebhook']['requestBody']['content']['application/json'] = {
      destination_url: 'http://127.0.0.1:9/hook',
      events: ['message'],
    };
    const hook = await herald.POST('/instances/{instance_id}/webhooks', {
      params: { path: { instance_id } },
      body: webhook,
    });
    assert.equal(hook.response.status, 201);
    const listed: operations['listWebhooks']['responses'][200]['content']['application/json'] | undefined = (
      await herald.GET('/instances/{instance_id}/webhooks', { params: { path: { instance_id } } })
    ).data;
    assert.deepEqual(
      listed?.webhooks.map((w) => w.webhook_id),
      [hook.data?.webhook_id],
    );
  } finally {
    await h.close();
  }
});
