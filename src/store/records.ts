import type { Decision } from '../domain/retry-policy.ts';
import type {
  Attempt,
  AttemptOutcome,
  AttemptTrigger,
  Delivery,
  DeliveryStatus,
  EventDraft,
  Filter,
  Ordering,
  Webhook,
} from '../domain/types.ts';

export interface ApiKey {
  key_id: string;
  instance_id: string;
  key_hash: string;
  /** What the key may do: `manage` (its instance's webhooks, deliveries and events) or `publish` (events alone). */
  scope: KeyScope;
  created_at: number;
}

export type KeyScope = 'manage' | 'publish';

/**
 * A portal link: the session page of one instance for someone outside (a platform's customer), through a token of
 * which only the hash is kept; `read_only` allows reads alone. Revoking deletes it.
 */
export interface PortalLink {
  link_id: string;
  instance_id: string;
  token_hash: string;
  read_only: boolean;
  /** The key it was made with; revoking that key revokes the link. Null when the admin made it. */
  key_id: string | null;
  expires_at: number;
  created_at: number;
}

/** The operator's destination of operational events, its secret sealed. */
export interface OperatorDestination {
  destination_url: string;
  secret_sealed: string | null;
}

/** How PATCH treats the stored signing secret. */
export type SecretChange = { kind: 'keep' } | { kind: 'set'; sealed: string } | { kind: 'clear' };

export interface WebhookConfig {
  destination_url: string;
  destination_sealed: string | null;
  events: string[];
  ignore_status: boolean;
  secret: SecretChange;
  filter: Filter | null;
  headers_sealed: string | null;
  rate_limit: number | null;
  standard_webhooks: boolean;
  ordering: Ordering;
}

export type Router = (event: EventDraft, webhooks: readonly Webhook[]) => Webhook[];

export interface IngestResult {
  event_id: string;
  deliveries: number;
  duplicate: boolean;
  /** The event's fresh deliveries leased to the hand-off (ingest's `handOff`), committed; absent when none. */
  handedOff?: ClaimedDelivery[];
}

/**
 * What the dispatcher of the calling process can take of fresh deliveries as ingest stores them, so that an event to
 * a webhook with nothing waiting goes out at once, with no wake-up and no claim: per webhook, how many (only what a
 * claim would have taken), leased for `leaseMs` as a claim leases. Data the caller passes in; the store never calls
 * the dispatcher.
 */
export interface HandOffRoom {
  leaseMs: number;
  room: ReadonlyMap<string, number>;
  /**
   * The caller's continuation for this call: given the call's handed-off claims right after the commit, before the
   * flush that the result waits for (SQLite), so that their attempts need not wait for the disk. Each claim is also in
   * its event's result.
   */
  committed?: (claims: ClaimedDelivery[]) => void;
}

/** A change to an instance; a field left undefined stays as it is. */
export interface InstanceChange {
  name?: string;
  /** The sealed engine HMAC key, or null to remove it. */
  engine_hmac_sealed?: string | null;
  /** Where its engine media may come from, within ENGINE_MEDIA_PREFIXES, or null for any of them. */
  engine_media_prefix?: string | null;
}

/** An engine's media file to download for an event, leased to one process while it does. */
export interface MediaJob {
  event_id: string;
  instance_id: string;
  url: string;
  mimetype: string | null;
  filename: string | null;
  /** The engine could not get the file itself (its own `error`, in words): nothing to download. */
  engine_error: string | null;
  /** Its event came through an engine endpoint: only then may ENGINE_MEDIA_HEADERS go with the download. */
  via_engine: boolean;
  /** Its instance's engine_media_prefix (null: ENGINE_MEDIA_PREFIXES as a whole), read with the claim. */
  engine_media_prefix: string | null;
  /** Tries before this one that ended in a fault of Herald's own (the media store unreachable, say). */
  tries: number;
  lease_token: string;
  /** Its event's stored trace context (EventDraft.trace_context): the download's span joins that trace. */
  trace_context: string | null;
}

/** A delivery leased to one sender: everything needed to make the attempt without another query. */
export interface ClaimedDelivery {
  delivery_id: string;
  event_id: string;
  instance_id: string;
  webhook_id: string;
  destination_url: string;
  /** The destination with its password, sealed (a broker's), or null: destination_url is then the one. */
  destination_sealed: string | null;
  secret_sealed: string | null;
  /** A rotated-out secret still in its grace: signed with too. */
  previous_secret_sealed: string | null;
  headers_sealed: string | null;
  /** Standard Webhooks' headers too. */
  standard_webhooks: boolean;
  body: string;
  /** Not before (a rate limit's slot); 0 when it may start at once. */
  start_at: number;
  /** The webhook's rate limit, per second: its lane keeps its starts that far apart. */
  rate_limit: number | null;
  /** 1-based number of this attempt in the current cycle (for the retry policy). */
  cycle_attempt: number;
  /** 1-based number of this attempt over the delivery's whole life (for the log). */
  attempt: number;
  trigger: AttemptTrigger;
  lease_token: string;
  /** Its event's stored trace context (EventDraft.trace_context): the attempt's span joins that trace. */
  trace_context: string | null;
}

export interface AttemptResult {
  claim: ClaimedDelivery;
  outcome: AttemptOutcome;
  decision: Decision;
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  webhook_id?: string;
  event?: string;
  /** The deliveries of one event (one per webhook it was routed to). */
  event_id?: string;
  /** Created at or after (epoch ms). */
  since?: number;
  /** Created before (epoch ms). */
  until?: number;
  /** The deliveries of one chat (its queue, with status pending). */
  chat?: string;
  limit: number;
  cursor?: string;
  /** The operator's deliveries too (the admin's view). */
  operator?: boolean;
}

export interface DeliveryDetail extends Delivery {
  request_body: string;
  attempts_log: Attempt[];
  /** Why the event's engine media was not stored (settleMediaJob), or null. */
  media_failure: string | null;
}

export type RedeliverResult = { ok: true; delivery: Delivery } | { ok: false; conflict: string } | null;

/** What the instance list and "Redeliver all failed" show before anyone acts. */
export interface InstanceCounts {
  webhooks: number;
  failed_deliveries: number;
  /** Failed deliveries of enabled webhooks: exactly what redeliverFailed(instance, {}) would restart now. */
  redeliverable_deliveries: number;
}

export interface RedeliverRange {
  webhook_id?: string;
  since?: number;
  until?: number;
}

/** The queue at a glance, for /metrics. */
export interface QueueStats {
  /** Deliveries not finished: queued, waiting for a retry, or in flight. */
  pending: number;
  /** Of those, due at `now` and not leased: waiting for a sender. */
  due: number;
  /** Earliest due time among the due ones, or null when none is due. */
  oldest_due_at: number | null;
}

/** What one retention batch removed. */
export interface PurgeResult {
  deliveries: number;
  events: number;
}

/** The kinds of queued work a wake-up may name. */
export type Work = 'deliveries' | 'media';

/** The formats a source's messages may be in (domain/source-message.ts reads them). */
export type SourceFormat = 'herald' | 'waha' | 'evolution';
/** What the consumers of a source last reported: `failed` while the broker refuses its configuration. */
export type SourceState = 'connecting' | 'consuming' | 'reconnecting' | 'failed';

/** A queue Herald consumes events from; `url` shows its password as ****, `url_sealed` holds the real one. */
export interface Source {
  source_id: string;
  url: string;
  url_sealed: string | null;
  format: SourceFormat;
  instance_id: string | null;
  state: SourceState;
  last_error: string | null;
  received: number;
  ingested: number;
  duplicates: number;
  parked: number;
  created_at: number;
  updated_at: number;
}

/** What a PATCH of a source changes: its whole configuration. */
export type SourceConfig = Pick<Source, 'url' | 'url_sealed' | 'format' | 'instance_id'>;

/** A source as it is created: connecting, nothing counted yet. */
export function newSource(source_id: string, config: SourceConfig, now: number): Source {
  return {
    source_id,
    ...config,
    state: 'connecting',
    last_error: null,
    received: 0,
    ingested: 0,
    duplicates: 0,
    parked: 0,
    created_at: now,
    updated_at: now,
  };
}

/** Counts to add to a source's counters, from any process. */
export type SourceCounts = Pick<Source, 'received' | 'ingested' | 'duplicates' | 'parked'>;

/** A message that can never be ingested: why, and the first 4 KiB of its body as text. */
export interface ParkedMessage {
  parked_at: number;
  reason: string;
  body: string;
}
