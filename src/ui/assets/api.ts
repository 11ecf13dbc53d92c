/** The public HTTP API, as the page uses it: the key as a bearer header, errors as ApiError. */
import { sessionKey } from './session-key.ts';

export interface Counts {
  webhooks: number;
  failed_deliveries: number;
  redeliverable_deliveries: number;
}

export interface Instance {
  instance_id: string;
  name: string;
  status: string;
  phone: string | null;
  created_at: string;
  counts: Counts;
}

export interface Webhook {
  webhook_id: string;
  destination_url: string;
  events: string[];
  ignore_status: boolean;
  enabled: boolean;
  client_sign_secret_set: boolean;
  previous_secret_until: string | null;
  filter: Record<string, unknown> | null;
  headers: Record<string, string> | null;
  rate_limit: { per_second: number } | null;
  standard_webhooks: boolean;
  /** "chat": each chat's deliveries start one at a time, in the order their events were accepted. */
  ordering: Ordering;
  health: WebhookHealth;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookHealth {
  last_delivered_at: string | null;
  last_failed_at: string | null;
  consecutive_failures: number;
  attempts_24h: number;
  delivered_24h: number;
  failed_24h: number;
  retried_24h: number;
}

/** One UTC hour of a webhook's stats: deliveries that ended in it, failed attempts retried, answer times. */
export interface StatsBucket {
  start: string;
  delivered: number;
  failed: number;
  retried_attempts: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

export type Ordering = 'none' | 'chat';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  delivery_id: string;
  event_id: string;
  event: string;
  webhook_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  failure_reason: string | null;
  /** The chat its event concerns, "*" for events of the whole session, null for deliveries from before chats. */
  chat: string | null;
  /** For a webhook ordered by chat: the delivery of its chat this one waits for (in flight or awaiting a retry). */
  waiting_for: string | null;
}

export interface Attempt {
  attempt: number;
  trigger: 'scheduled' | 'manual';
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  next_attempt_at: string | null;
  next_attempt_reason: string | null;
}

export interface DeliveryDetail extends Delivery {
  request_body: string;
  attempts: Attempt[];
  /** Why the engine's media file was not stored, or null. */
  media_failure: string | null;
}

export type KeyScope = 'manage' | 'publish';

export interface InstanceKey {
  key_id: string;
  scope: KeyScope;
  created_at: string;
}

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: FieldError[];

  constructor(status: number, code: string, message: string, details: FieldError[] = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Called when the key is refused (401): the page signs out. */
let onUnauthorized: () => void = () => {};
export const whenUnauthorized = (f: () => void) => {
  onUnauthorized = f;
};

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  key = sessionKey.get(),
): Promise<T> {
  if (!key) throw new ApiError(401, 'unauthorized', 'Sign in first');
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // The page reads every few seconds: Herald logs its reads at debug only (src/api/request-log.ts), its changes at info.
  if (method === 'GET') headers['x-herald-poll'] = '1';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'network', 'Herald cannot be reached; retrying while the page is open');
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const e = data?.error;
    const error = new ApiError(
      res.status,
      e?.code ?? 'internal',
      e?.message ?? `HTTP ${res.status}`,
      e?.details,
    );
    if (res.status === 401 && key === sessionKey.get()) onUnauthorized();
    throw error;
  }
  return data as T;
}

const ins = (id: string) => `/instances/${encodeURIComponent(id)}`;

export interface DeliveryQuery {
  status?: string;
  webhook_id?: string;
  event?: string;
  event_id?: string;
  /** One chat's deliveries; with status=pending, its queue. */
  chat?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit: number;
}

export interface PortalLinkInfo {
  link_id: string;
  instance_id: string;
  read_only: boolean;
  expires_at: string;
}

export const api = {
  /** The portal link whose token the page holds. */
  portalLink: () => call<{ link: PortalLinkInfo }>('GET', '/portal-link').then((r) => r.link),
  listInstances: (key?: string) =>
    call<{ instances: Instance[] }>('GET', '/instances', undefined, key).then((r) => r.instances),
  createInstance: (name: string) => call<{ instance_id: string }>('POST', '/instances', { name }),
  /** 403 for an instance key: how the page tells the two kinds of key apart. */
  listKeys: (id: string, key?: string) =>
    call<{ keys: InstanceKey[] }>('GET', `${ins(id)}/keys`, undefined, key).then((r) => r.keys),
  createKey: (id: string, scope: KeyScope) =>
    call<{ key_id: string; key: string; scope: KeyScope }>('POST', `${ins(id)}/keys`, { scope }),
  revokeKey: (id: string, keyId: string) => call('DELETE', `${ins(id)}/keys/${encodeURIComponent(keyId)}`),
  getInstance: (id: string) => call<{ instance: Instance }>('GET', ins(id)).then((r) => r.instance),
  deleteInstance: (id: string) => call('DELETE', ins(id)),
  listWebhooks: (id: string) =>
    call<{ webhooks: Webhook[] }>('GET', `${ins(id)}/webhooks`).then((r) => r.webhooks),
  webhookStats: (id: string, webhookId: string, hours = 24) =>
    call<{ buckets: StatsBucket[] }>('GET', `${ins(id)}/webhooks/${webhookId}/stats?hours=${hours}`).then(
      (r) => r.buckets,
    ),
  createWebhook: (id: string, body: Record<string, unknown>) =>
    call<{ webhook_id: string }>('POST', `${ins(id)}/webhooks`, body),
  updateWebhook: (id: string, webhookId: string, body: Record<string, unknown>) =>
    call<{ webhook: Webhook }>('PATCH', `${ins(id)}/webhooks/${webhookId}`, body).then((r) => r.webhook),
  setEnabled: (id: string, webhookId: string, enabled: boolean) =>
    call<{ webhook: Webhook }>('POST', `${ins(id)}/webhooks/${webhookId}/enabled`, { enabled }).then(
      (r) => r.webhook,
    ),
  rotateSecret: (id: string, webhookId: string, body: { client_sign_secret: string; grace_s: number }) =>
    call<{ webhook: Webhook }>('POST', `${ins(id)}/webhooks/${webhookId}/rotate-secret`, body),
  deleteWebhook: (id: string, webhookId: string) => call('DELETE', `${ins(id)}/webhooks/${webhookId}`),
  sendTest: (id: string, webhookId: string, event: string) =>
    call<{ event_id: string; delivery_id: string }>('POST', `${ins(id)}/webhooks/${webhookId}/test`, {
      event,
    }),
  listDeliveries(id: string, q: DeliveryQuery) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') params.set(k, String(v));
    return call<{ deliveries: Delivery[]; next_cursor: string | null }>(
      'GET',
      `${ins(id)}/deliveries?${params}`,
    );
  },
  getDelivery: (id: string, deliveryId: string) =>
    call<{ delivery: DeliveryDetail }>('GET', `${ins(id)}/deliveries/${deliveryId}`).then((r) => r.delivery),
  redeliver: (id: string, deliveryId: string) =>
    call<{ delivery: Delivery }>('POST', `${ins(id)}/deliveries/${deliveryId}/redeliver`).then(
      (r) => r.delivery,
    ),
  redeliverAllFailed: (id: string) =>
    call<{ redelivered: number }>('POST', `${ins(id)}/deliveries/redeliver`, {}).then((r) => r.redelivered),
};
