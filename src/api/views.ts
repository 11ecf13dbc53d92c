/** Domain records as the API shows them: ISO 8601 UTC times, secrets reduced to whether one is set. */
import { maskHeaders } from '../domain/custom-headers.ts';
import type { WebhookHealth } from '../domain/health.ts';
import { secretInGrace } from '../domain/store-rules.ts';
import type { Attempt, Delivery, Instance, Webhook } from '../domain/types.ts';
import type { InstanceCounts, PortalLink } from '../store/records.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

const NO_COUNTS: InstanceCounts = { webhooks: 0, failed_deliveries: 0, redeliverable_deliveries: 0 };

export const instanceView = (i: Instance, counts: Map<string, InstanceCounts>) => ({
  instance_id: i.instance_id,
  name: i.name,
  status: i.status,
  phone: i.phone,
  engine_hmac_key_set: Boolean(i.engine_hmac_sealed),
  engine_media_prefix: i.engine_media_prefix ?? null,
  created_at: iso(i.created_at),
  counts: counts.get(i.instance_id) ?? NO_COUNTS,
});

const NO_HEALTH: WebhookHealth = {
  last_delivered_at: null,
  last_failed_at: null,
  consecutive_failures: 0,
  attempts_24h: 0,
  delivered_24h: 0,
  failed_24h: 0,
  retried_24h: 0,
};

/** What a webhook view needs beyond the record: its health, and its headers opened (the view shows names only). */
export interface WebhookExtras {
  health?: WebhookHealth;
  headers: Record<string, string> | null;
  now: number;
}

export const webhookView = (w: Webhook, x: WebhookExtras) => {
  const health = x.health ?? NO_HEALTH;
  const graceUntil = secretInGrace(w, x.now) ? w.previous_secret_until : null;
  return {
    webhook_id: w.webhook_id,
    instance_id: w.instance_id,
    destination_url: w.destination_url,
    events: w.events,
    ignore_status: w.ignore_status,
    enabled: w.enabled,
    client_sign_secret_set: w.secret_sealed !== null,
    previous_secret_until: isoOrNull(graceUntil ?? null),
    filter: w.filter ?? null,
    headers: maskHeaders(x.headers),
    rate_limit: w.rate_limit ? { per_second: w.rate_limit } : null,
    standard_webhooks: w.standard_webhooks ?? false,
    ordering: w.ordering ?? 'none',
    health: {
      ...health,
      last_delivered_at: isoOrNull(health.last_delivered_at),
      last_failed_at: isoOrNull(health.last_failed_at),
    },
    disabled_reason: w.disabled_reason,
    disabled_at: isoOrNull(w.disabled_at),
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
  };
};

/** A portal link without its token (only its hash is kept anyway). */
export const portalLinkView = (l: PortalLink) => ({
  link_id: l.link_id,
  instance_id: l.instance_id,
  read_only: l.read_only,
  expires_at: iso(l.expires_at),
  created_at: iso(l.created_at),
});

export const deliveryView = (d: Delivery) => ({
  delivery_id: d.delivery_id,
  event_id: d.event_id,
  event: d.event,
  webhook_id: d.webhook_id,
  status: d.status,
  attempt_count: d.attempts,
  created_at: iso(d.created_at),
  last_attempt_at: isoOrNull(d.last_attempt_at),
  next_attempt_at: isoOrNull(d.next_attempt_at),
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  failure_reason: d.failure_reason,
  chat: d.chat,
  waiting_for: d.waiting_for ?? null,
});

/**
 * `note` says what the log should tell a person beyond the outcome: an attempt made at or after the moment the
 * body's media link expired (`mediaExpiresAt`) carried a link that no longer works (the body is never rewritten).
 */
export const attemptView = (a: Attempt, mediaExpiresAt: number | null = null) => ({
  attempt: a.attempt,
  trigger: a.trigger,
  started_at: iso(a.started_at),
  duration_ms: a.duration_ms,
  status_code: a.status_code,
  error: a.error,
  response_body: a.response_body,
  next_attempt_at: isoOrNull(a.next_attempt_at),
  next_attempt_reason: a.next_attempt_reason,
  note:
    mediaExpiresAt !== null && a.started_at >= mediaExpiresAt
      ? `media link expired at ${iso(mediaExpiresAt)}: the receiver can no longer download the file`
      : null,
});
