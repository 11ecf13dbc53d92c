/**
 * What the store conformance suites share: records to store, with time passed explicitly so that leases and due
 * times are tested without waiting. Each suite (catalog, queue, delivery log) runs on every adapter.
 */
import { eventBody } from '../../src/domain/event-body.ts';
import type { Decision } from '../../src/domain/retry-policy.ts';
import type { AttemptOutcome, EventDraft, Webhook } from '../../src/domain/types.ts';
import type { Store } from '../../src/store/ports.ts';
import type { AttemptResult, ClaimedDelivery } from '../../src/store/records.ts';
import { webhookRecord } from '../support/records.ts';

export const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
export const LEASE = 10_000;
export const unlimited = () => 1000;
let seq = 0;
export const uid = (prefix: string) => `${prefix}_conf${(++seq).toString().padStart(22, '0')}`;

/** Records of one store: an instance, a webhook, an event draft, an attempt's outcome and result. */
export function records(store: () => Store) {
  async function instance(): Promise<string> {
    const id = uid('ins');
    await store().catalog.createInstance({
      instance_id: id,
      name: 'conformance',
      status: 'STOPPED',
      phone: null,
      created_at: T0,
    });
    return id;
  }

  async function webhook(instanceId: string, over: Partial<Webhook> = {}): Promise<Webhook> {
    const w = webhookRecord({ webhook_id: uid('whk'), instance_id: instanceId, ...over }, T0);
    await store().webhooks.createWebhook(w);
    return w;
  }

  const draft = (instanceId: string, over: Partial<Omit<EventDraft, 'body'>> = {}): EventDraft => {
    const e = {
      event_id: uid('evt'),
      event: 'message.ack',
      instance_id: instanceId,
      timestamp: T0,
      payload: { id: 'm1', from: 'a', to: 'b', ack: 1, ackName: 'SERVER' },
      ...over,
    };
    return { ...e, body: eventBody(e) };
  };

  const outcome = (status_code: number | null, at: number): AttemptOutcome => ({
    started_at: at,
    duration_ms: 5,
    status_code,
    error: status_code === null ? 'timeout' : null,
    response_body: 'ok',
    retry_after: null,
  });

  const result = (
    claim: ClaimedDelivery,
    status: number | null,
    decision: Decision,
    at: number,
  ): AttemptResult => ({
    claim,
    outcome: outcome(status, at),
    decision,
  });

  return { instance, webhook, draft, outcome, result };
}
