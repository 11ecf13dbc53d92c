/** Shared shapes of the domain. Times are epoch milliseconds inside Herald and ISO strings at the API. */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type FailureReason = 'attempts_exhausted' | 'gone' | 'webhook_disabled' | 'destination_not_allowed';
export type AttemptTrigger = 'scheduled' | 'manual';

export interface Instance {
  instance_id: string;
  name: string;
  status: string;
  phone: string | null;
  /** AES-GCM sealed key the engine signs its webhook with (X-Webhook-Hmac), or null when it signs nothing. */
  engine_hmac_sealed?: string | null;
  /** Where this instance's engine media may be downloaded from, within ENGINE_MEDIA_PREFIXES; null: any of them. */
  engine_media_prefix?: string | null;
  created_at: number;
}

export type Ordering = 'none' | 'chat';

export interface Webhook {
  webhook_id: string;
  instance_id: string;
  /** As shown and logged: a broker URL's password as ****. */
  destination_url: string;
  /** A broker destination's URL with its password, sealed; null when it has none (and for http). */
  destination_sealed?: string | null;
  events: string[];
  ignore_status: boolean;
  enabled: boolean;
  /** AES-GCM sealed signing secret, or null when the webhook signs nothing. */
  secret_sealed: string | null;
  /** The secret a rotation replaced, still signed with until `previous_secret_until`. */
  previous_secret_sealed?: string | null;
  previous_secret_until?: number | null;
  /** Which events of its kinds it receives (filter.ts), or null for all. */
  filter?: Filter | null;
  /** Its own headers, as sealed JSON (they often carry tokens), or null. */
  headers_sealed?: string | null;
  /** Deliveries started per second at most, across every process, or null for no limit. */
  rate_limit?: number | null;
  /** Standard Webhooks' headers beside Herald's; its secret is then a `whsec_` one. */
  standard_webhooks?: boolean;
  /** "chat": a chat's deliveries one at a time, in ingest order (ordered delivery per chat). */
  ordering?: Ordering;
  disabled_reason: string | null;
  disabled_at: number | null;
  created_at: number;
  updated_at: number;
}

/** An event as accepted by ingest, before it is stored. */
export interface EventDraft {
  event_id: string;
  event: string;
  instance_id: string;
  timestamp: number;
  /**
   * What breaks a tie of two session.status at one millisecond (domain/session-status.ts): the publisher's own name
   * for the event (WAHA's envelope id, which grows with time), else the event_id. Not delivered.
   */
  order_id?: string;
  /**
   * When a session.status happened, for the order of the instance's statuses, when not its `timestamp`: Evolution's
   * `date_time` (its local time labelled UTC: no time to deliver, but it orders one server's updates). Not delivered.
   */
  status_at?: number | null;
  payload: Record<string, unknown>;
  /** The delivery request body, serialised once (see event-body.ts). */
  body: string;
  /** The engine's media file to fetch before the deliveries start (they wait until it is settled), or null. */
  download?: MediaDownload | null;
  /** The W3C traceparent of the ingest that stored it (tracing on), which its attempts' spans join; else null. */
  trace_context?: string | null;
}

/** What one attempt to send a delivery came back with. */
export interface AttemptOutcome {
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  /** Set when no HTTP answer arrived: timeout, connection_error, destination_not_allowed… */
  error: string | null;
  response_body: string | null;
  /** The raw Retry-After header of a 429, when present. */
  retry_after: string | null;
  /** A broker acknowledged the message (its words in response_body): delivered, with no status to read. */
  acknowledged?: boolean;
}

export interface Attempt extends AttemptOutcome {
  delivery_id: string;
  attempt: number;
  trigger: AttemptTrigger;
  next_attempt_at: number | null;
  /** Why the next attempt is at that time: "schedule" or "retry-after". */
  next_attempt_reason: string | null;
}

export interface Delivery {
  delivery_id: string;
  event_id: string;
  event: string;
  instance_id: string;
  webhook_id: string;
  status: DeliveryStatus;
  attempts: number;
  created_at: number;
  last_attempt_at: number | null;
  next_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  failure_reason: FailureReason | null;
  /** Its event's chat (chat-key.ts); null for deliveries stored before chats were kept. */
  chat: string | null;
  /** Waiting in its chat's queue (a webhook ordered by chat): the delivery it waits for, its chat's head. */
  waiting_for?: string | null;
}

/** A field-level complaint about input, turned into a 400 by the API. */
export interface FieldError {
  field: string;
  message: string;
}

/** A webhook's payload filter (filter.ts has its rules). */
export type Filter = { [key: string]: unknown };

/**
 * A file on the engine's file server that Herald must download before the event's deliveries start; or, with
 * `engine_error`, one the engine itself could not get, settled the same way so that the failure is recorded once.
 */
export interface MediaDownload {
  url: string;
  mimetype: string | null;
  filename: string | null;
  /** The engine's own `error`, in words. */
  engine_error?: string | null;
  /**
   * Its event came through an engine endpoint (POST …/engine/waha), not Herald's event API: only then may
   * ENGINE_MEDIA_HEADERS go with the download (media-prefix.ts says where).
   */
  via_engine?: boolean;
}
