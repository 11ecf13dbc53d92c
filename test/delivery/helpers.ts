/** Shared set-up for the delivery tests: a webhook pointing at a scripted receiver, and delivery-log look-ups. */
import assert from 'node:assert/strict';
import { eventually, messagePayload, type TestHerald } from '../support/herald.ts';
import { type Received, TestReceiver } from '../support/receiver.ts';

export interface Hook {
  instanceId: string;
  webhookId: string;
  receiver: TestReceiver;
}

/** A fresh instance with one enabled `message` webhook pointing at a new receiver. */
export async function hook(h: TestHerald, webhook: Record<string, unknown> = {}): Promise<Hook> {
  const receiver = await TestReceiver.start();
  const instanceId = await h.createInstance('delivery-test');
  const webhookId = await h.createWebhook(instanceId, {
    destination_url: receiver.url,
    events: ['message'],
    ...webhook,
  });
  return { instanceId, webhookId, receiver };
}

/** Publishes one `message` event, asserts the 202, returns its event_id. */
export async function publish(
  h: TestHerald,
  instanceId: string,
  payload: Record<string, unknown> = {},
): Promise<string> {
  const r = await h.publish(instanceId, { event: 'message', payload: messagePayload(payload) });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r.body.event_id;
}

/** The delivery detail of an event to a webhook: `attempts` is the attempt log, `attempt_count` its length. */
export async function delivery(h: TestHerald, instanceId: string, webhookId: string, eventId: string) {
  const list = await h.request(
    'GET',
    `/instances/${instanceId}/deliveries?webhook_id=${webhookId}&event_id=${eventId}`,
  );
  assert.equal(list.status, 200, JSON.stringify(list.body));
  const [found] = list.body.deliveries;
  assert.ok(found, `no delivery of ${eventId} to ${webhookId}`);
  const detail = await h.request('GET', `/instances/${instanceId}/deliveries/${found.delivery_id}`);
  assert.equal(detail.status, 200, JSON.stringify(detail.body));
  return detail.body.delivery;
}

/** Waits until the delivery is no longer pending and returns it. */
export function settled(
  h: TestHerald,
  instanceId: string,
  webhookId: string,
  eventId: string,
  timeoutMs = 10_000,
) {
  return eventually(
    async () => {
      const d = await delivery(h, instanceId, webhookId, eventId);
      return d.status === 'pending' ? undefined : d;
    },
    timeoutMs,
    `delivery of ${eventId} to settle`,
  );
}

export async function getWebhook(h: TestHerald, instanceId: string, webhookId: string) {
  const r = await h.request('GET', `/instances/${instanceId}/webhooks/${webhookId}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.webhook;
}

/** Milliseconds between consecutive arrivals. */
export function gaps(received: Received[]): number[] {
  return received.slice(1).map((r, i) => r.at - received[i].at);
}

/**
 * Asserts each gap is at least its minimum (the schedule step, plus the time an attempt takes to fail when
 * that is known) and below minimum + slack.
 */
export function assertGaps(received: Received[], minimums: number[], slackMs: number): void {
  const actual = gaps(received);
  assert.equal(actual.length, minimums.length, `gaps ${actual.join(', ')}`);
  actual.forEach((gap, i) => {
    assert.ok(gap >= minimums[i], `gap ${i + 1} was ${gap} ms, expected >= ${minimums[i]} ms (${actual})`);
    assert.ok(
      gap < minimums[i] + slackMs,
      `gap ${i + 1} was ${gap} ms, expected < ${minimums[i] + slackMs} ms (${actual})`,
    );
  });
}

/** Resolves after `ms`; only for asserting that something does NOT happen within a bounded time. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
