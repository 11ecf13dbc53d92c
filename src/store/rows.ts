/** Row ⇄ domain mapping shared by the adapters (booleans as 0/1 in SQLite and as booleans in PostgreSQL, lists as JSON text). */
import { secretInGrace } from '../domain/store-rules.ts';
import type { Attempt, AttemptTrigger, Delivery, Instance, Ordering, Webhook } from '../domain/types.ts';
import type { ApiKey, ClaimedDelivery, KeyScope, PortalLink } from './records.ts';

type Row = Record<string, unknown>;

export const toInstance = (r: Row): Instance => ({
  instance_id: r.instance_id as string,
  name: r.name as string,
  status: r.status as string,
  phone: r.phone as string | null,
  engine_hmac_sealed: (r.engine_hmac_sealed as string | null) ?? null,
  engine_media_prefix: (r.engine_media_prefix as string | null) ?? null,
  created_at: r.created_at as number,
});

export const toKey = (r: Row): ApiKey => ({
  key_id: r.key_id as string,
  instance_id: r.instance_id as string,
  key_hash: r.key_hash as string,
  scope: (r.scope as KeyScope | undefined) ?? 'manage',
  created_at: r.created_at as number,
});

export const toWebhook = (r: Row): Webhook => ({
  webhook_id: r.webhook_id as string,
  instance_id: r.instance_id as string,
  destination_url: r.destination_url as string,
  destination_sealed: (r.destination_sealed as string | null) ?? null,
  events: JSON.parse(r.events as string),
  ignore_status: Boolean(r.ignore_status),
  enabled: Boolean(r.enabled),
  secret_sealed: r.secret_sealed as string | null,
  previous_secret_sealed: (r.previous_secret_sealed as string | null) ?? null,
  previous_secret_until: (r.previous_secret_until as number | null) ?? null,
  filter: r.filter ? JSON.parse(r.filter as string) : null,
  headers_sealed: (r.headers_sealed as string | null) ?? null,
  rate_limit: (r.rate_limit as number | null) ?? null,
  standard_webhooks: Boolean(r.standard_webhooks),
  ordering: (r.ordering as Ordering | undefined) ?? 'none',
  disabled_reason: r.disabled_reason as string | null,
  disabled_at: r.disabled_at as number | null,
  created_at: r.created_at as number,
  updated_at: r.updated_at as number,
});

export const toPortalLink = (r: Row): PortalLink => ({
  link_id: r.link_id as string,
  instance_id: r.instance_id as string,
  token_hash: r.token_hash as string,
  read_only: Boolean(r.read_only),
  key_id: (r.key_id as string | null) ?? null,
  expires_at: Number(r.expires_at),
  created_at: Number(r.created_at),
});

export const toDelivery = (r: Row): Delivery => ({
  delivery_id: r.delivery_id as string,
  event_id: r.event_id as string,
  event: r.event as string,
  instance_id: r.instance_id as string,
  webhook_id: r.webhook_id as string,
  status: r.status as Delivery['status'],
  attempts: r.attempts as number,
  created_at: r.created_at as number,
  last_attempt_at: r.last_attempt_at as number | null,
  // While an attempt is in flight the due time is its lease; the API reports it as is.
  next_attempt_at: r.status === 'pending' ? (r.next_attempt_at as number) : null,
  last_status_code: r.last_status_code as number | null,
  last_error: r.last_error as string | null,
  failure_reason: r.failure_reason as Delivery['failure_reason'],
  chat: (r.chat as string | null) ?? null,
  waiting_for: r.waiting_for && r.waiting_for !== r.delivery_id ? (r.waiting_for as string) : null,
});

export const toAttempt = (r: Row): Attempt => ({
  delivery_id: r.delivery_id as string,
  attempt: r.attempt as number,
  trigger: r.trigger as Attempt['trigger'],
  started_at: r.started_at as number,
  duration_ms: r.duration_ms as number,
  status_code: r.status_code as number | null,
  error: r.error as string | null,
  response_body: r.response_body as string | null,
  retry_after: null,
  next_attempt_at: r.next_attempt_at as number | null,
  next_attempt_reason: r.next_attempt_reason as string | null,
});

/** What a claim takes from its webhook: a Webhook, or these columns of its row. */
export type ClaimTarget = Pick<
  Webhook,
  | 'webhook_id'
  | 'destination_url'
  | 'destination_sealed'
  | 'secret_sealed'
  | 'previous_secret_sealed'
  | 'previous_secret_until'
  | 'headers_sealed'
  | 'rate_limit'
  | 'standard_webhooks'
>;

/**
 * The claim a dispatcher gets for a delivery to `to`, leased under `lease_token`, not to start before `start_at`;
 * `attempts` and `cycleAttempts` count those made before this one. Positional rather than one object, in the
 * order SQLite's claim reads its row: that loop, the hottest in the service, allocates nothing per row but this.
 */
export function claimOf(
  to: ClaimTarget,
  now: number,
  lease_token: string,
  start_at: number,
  delivery_id: string,
  event_id: string,
  instance_id: string,
  attempts: number,
  cycleAttempts: number,
  trigger: AttemptTrigger,
  body: string,
  trace_context: string | null,
): ClaimedDelivery {
  return {
    delivery_id,
    event_id,
    instance_id,
    webhook_id: to.webhook_id,
    destination_url: to.destination_url,
    destination_sealed: to.destination_sealed ?? null,
    secret_sealed: to.secret_sealed,
    previous_secret_sealed: secretInGrace(to, now),
    headers_sealed: to.headers_sealed ?? null,
    // SQLite's claim reads 0 or 1.
    standard_webhooks: Boolean(to.standard_webhooks),
    body,
    start_at,
    rate_limit: to.rate_limit ?? null,
    cycle_attempt: cycleAttempts + 1,
    attempt: attempts + 1,
    trigger,
    lease_token,
    trace_context,
  };
}

/** A page of the delivery log from `limit + 1` rows newest first: the extra row only says that a next page exists. */
export const toPage = (
  rows: Row[],
  limit: number,
): { deliveries: Delivery[]; next_cursor: string | null } => {
  const page = rows.slice(0, limit);
  const next_cursor = rows.length > limit ? String(page[page.length - 1].seq) : null;
  return { deliveries: page.map(toDelivery), next_cursor };
};
