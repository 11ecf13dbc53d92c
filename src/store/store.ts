/**
 * The store ports: what Herald keeps, in three parts (the catalog, the queue, the delivery log), each used through
 * its own interface, with one adapter per database implementing all three.
 * Methods are async so that the embedded SQLite adapter and a networked one share the same shape.
 */
import type { WebhookHealth } from '../domain/health.ts';
import type { Decision } from '../domain/retry-policy.ts';
import type {
  Attempt,
  AttemptOutcome,
  AttemptTrigger,
  Delivery,
  DeliveryStatus,
  EventDraft,
  Filter,
  Instance,
  Webhook,
} from '../domain/types.ts';

export interface ApiKey {
  key_id: string;
  instance_id: string;
  key_hash: string;
  created_at: number;
}

/** How PATCH treats the stored signing secret. */
export type SecretChange = { kind: 'keep' } | { kind: 'set'; sealed: string } | { kind: 'clear' };

export interface WebhookConfig {
  destination_url: string;
  events: string[];
  ignore_status: boolean;
  secret: SecretChange;
  filter: Filter | null;
  headers_sealed: string | null;
  rate_limit: number | null;
}

export type Router = (event: EventDraft, webhooks: readonly Webhook[]) => Webhook[];

/** One ingest call, as the adapters gather the calls of one event-loop turn (same-turn.ts). */
export interface IngestArrival {
  instanceId: string;
  events: EventDraft[];
  router: Router;
  now: number;
  handOff?: HandOffRoom;
}

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
  /** Tries before this one that ended in a fault of Herald's own (the media store unreachable, say). */
  tries: number;
  lease_token: string;
}

/** A write refused because of what is already stored; the whole operation is rolled back. */
export class StoreConflict extends Error {}

/** A write for an instance that does not exist (never created, or deleted); nothing is stored. */
export class InstanceMissing extends Error {}

/**
 * The database could not do the work now, for a reason of its own (connection lost or refused, disk full): the
 * call's writes are not known to be stored, and the same call may simply be made again later.
 */
export class StoreUnavailable extends Error {
  /** What went wrong, in the database's words (e.g. "database or disk is full (SQLITE_FULL)"). */
  readonly reason: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(`database unavailable: ${reason}`, options);
    this.reason = reason;
  }
}

/** A delivery leased to one sender: everything needed to make the attempt without another query. */
export interface ClaimedDelivery {
  delivery_id: string;
  event_id: string;
  instance_id: string;
  webhook_id: string;
  destination_url: string;
  secret_sealed: string | null;
  /** A rotated-out secret still in its grace: signed with too. */
  previous_secret_sealed: string | null;
  headers_sealed: string | null;
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
  limit: number;
  cursor?: string;
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

/** What Herald knows of its instances, their keys and webhooks, and its settings: what the API manages. */
export interface Catalog {
  getSetting(name: string): Promise<string | null>;
  setSetting(name: string, value: string): Promise<void>;
  /**
   * Key rotation: replaces every stored sealed signing secret `s` with `reseal(s)` and sets the setting
   * `setting.name` to `setting.value`, in one transaction; when `reseal` throws, nothing changes. Returns how
   * many secrets were re-sealed.
   */
  resealSecrets(
    reseal: (sealed: string) => string,
    setting: { name: string; value: string },
  ): Promise<number>;

  createInstance(instance: Instance): Promise<void>;
  listInstances(): Promise<Instance[]>;
  getInstance(instanceId: string): Promise<Instance | null>;
  deleteInstance(instanceId: string): Promise<boolean>;
  updateInstance(instanceId: string, change: InstanceChange): Promise<Instance | null>;

  createKey(key: ApiKey): Promise<void>;
  listKeys(instanceId: string): Promise<ApiKey[]>;
  findKeyByHash(keyHash: string): Promise<ApiKey | null>;
  deleteKey(instanceId: string, keyId: string): Promise<boolean>;

  /**
   * Stores the webhook unless its instance already has `maxPerInstance` webhooks: false then, and nothing stored.
   * The count and the insert are one atomic step, so creates at once, from any number of processes, never go past it.
   */
  createWebhook(webhook: Webhook, maxPerInstance?: number): Promise<boolean>;
  listWebhooks(instanceId: string): Promise<Webhook[]>;
  getWebhook(instanceId: string, webhookId: string): Promise<Webhook | null>;
  updateWebhook(
    instanceId: string,
    webhookId: string,
    config: WebhookConfig,
    now: number,
  ): Promise<Webhook | null>;
  /** Disabling ends the webhook's pending deliveries as failed with `reason`. */
  setWebhookEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason?: string,
  ): Promise<Webhook | null>;
  /** Cancels the webhook's pending deliveries and removes its log. */
  deleteWebhook(instanceId: string, webhookId: string): Promise<boolean>;
  /**
   * A new signing secret; the current one is still signed with until `graceUntil` (null: forgotten at once).
   * The secret a PATCH sets or clears ends any grace.
   */
  rotateSecret(
    instanceId: string,
    webhookId: string,
    sealed: string,
    graceUntil: number | null,
    now: number,
  ): Promise<Webhook | null>;
  /** Forgets the rotated-out secrets whose grace has ended by `now`. */
  forgetRotatedSecrets(now: number): Promise<number>;
  /** Health of the instance's webhooks (of all, for null) at `now`, by webhook; one with no outcome yet is absent. */
  webhookHealth(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>>;
}

/** The queue of deliveries and media jobs: what ingest fills and the dispatcher and the media jobs work through. */
export interface Queue {
  /**
   * Stores events with their deliveries in one transaction, routed by `router` over the instance's webhooks
   * as they are inside that transaction. An event_id seen before is answered as it was, nothing queued twice.
   * A `session.status` event also sets the instance's status and phone. An event_id already used by another
   * instance throws StoreConflict, an instance that does not exist InstanceMissing, and either stores nothing of
   * the call (the API reads no instance before an ingest: this is where a missing one is found). An event with a
   * `download` and deliveries gets
   * a media job; its deliveries wait (next_attempt_at null) until the job is settled. With `handOff`, fresh
   * deliveries within its room are leased in the same transaction and returned with their event's result (never
   * those of an event whose media is to come, nor of a rate-limited webhook, whose starts the claims pace); what is
   * left due wakes the listeners.
   */
  ingest(
    instanceId: string,
    events: EventDraft[],
    router: Router,
    now: number,
    handOff?: HandOffRoom,
  ): Promise<IngestResult[]>;

  /**
   * Leases up to `limit` media jobs due at `now` (see EventDraft.download), for `leaseMs`: a process that dies
   * with a job leaves it to be claimed again once the lease runs out.
   */
  claimMediaJobs(now: number, limit: number, leaseMs: number): Promise<MediaJob[]>;
  /**
   * Ends a job still held by its lease: the event's body gets `media` as its payload's media object, the event
   * `failure` (why no file was kept, or null), and its deliveries become due at `now`. False when the lease was lost
   * (another process settles it).
   */
  settleMediaJob(
    job: MediaJob,
    media: Record<string, unknown>,
    now: number,
    failure?: string | null,
  ): Promise<boolean>;
  /** Gives a job back to be tried again at `at`, one more try counted. */
  retryMediaJob(job: MediaJob, at: number): Promise<void>;

  /**
   * Leases up to `limit` due deliveries, at most `room(webhook_id, leased)` per webhook. `leased` is how many of
   * the webhook's deliveries are under an unexpired lease held by the OTHER processes sharing the database, so that
   * a per-webhook cap holds across workers; an adapter only ever used by one process passes 0.
   */
  claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    room: (webhookId: string, leased: number) => number,
  ): Promise<ClaimedDelivery[]>;
  /**
   * Logs the attempts and applies their decisions. A result whose lease was lost (ended by disabling the webhook,
   * or run out and taken by another holder) is logged and counted in the delivery's `attempts`, and becomes its last
   * result if none later is recorded, but its decision is dropped: whoever holds the delivery now decides.
   */
  recordAttempts(results: AttemptResult[], now: number): Promise<void>;
  /**
   * Earliest time after `after` at which a pending delivery becomes due (leases included), or null when there is
   * none. Deliveries due at `after` or earlier and still unclaimed are waiting for room, not for time.
   */
  nextDueAt(after: number): Promise<number | null>;
  /** Depth of the queue and how long its oldest due delivery has waited (see QueueStats). */
  queueStats(now: number): Promise<QueueStats>;
  /**
   * Gives back leases whose attempts were not made or not finished (a graceful stop): each delivery still held by
   * that lease becomes due at `now`, claimable at once by another process. No attempt is counted or logged.
   */
  releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number): Promise<number>;
  /**
   * Retention: deletes up to `limit` finished (delivered or failed) deliveries whose last attempt (or creation,
   * when never attempted) is before `before`, with their attempts; then up to `limit` events created before
   * `before` that no delivery refers to any more. Pending deliveries are never touched.
   */
  purgeFinished(before: number, limit: number): Promise<PurgeResult>;
  /**
   * Calls `wake` whenever work is queued on this database (ingest, redelivery, released leases) once it is
   * committed: by any process on a shared database (PostgreSQL NOTIFY), by this one on the embedded store. The
   * dispatcher sleeps on this, so no caller of the store has to wake it. `work` says which work when the store
   * knows (deliveries due, or media to download); without it, any may be.
   */
  listenForWork(wake: (work?: Work) => void): Promise<void>;
}

/** The kinds of queued work a wake-up may name. */
export type Work = 'deliveries' | 'media';

/** The delivery log as people read it, and redelivery from it. */
export interface DeliveryLog {
  listDeliveries(
    instanceId: string,
    filter: DeliveryFilter,
  ): Promise<{ deliveries: Delivery[]; next_cursor: string | null }>;
  getDelivery(instanceId: string, deliveryId: string): Promise<DeliveryDetail | null>;
  redeliver(instanceId: string, deliveryId: string, now: number): Promise<RedeliverResult>;
  redeliverFailed(instanceId: string, range: RedeliverRange, now: number): Promise<number>;
  /** Counts per instance: of one, or of all when `instanceId` is omitted; an instance without webhooks is absent. */
  instanceCounts(instanceId?: string): Promise<Map<string, InstanceCounts>>;
}

/** What an engine reported first (domain/engine-dedupe.ts), so that its repeats are dropped at ingest. */
export interface EngineRepeats {
  /**
   * Records that `eventId` reports the thing `key` names at the instance, unless another event reported it less
   * than `windowMs` ago: returns the event that holds the key now (`eventId` itself, or the earlier one). Atomic, so
   * that two reports at once from any processes keep one. Forgotten with the instance.
   */
  rememberEngineEvent(
    instanceId: string,
    key: string,
    eventId: string,
    now: number,
    windowMs: number,
  ): Promise<string>;
}

/** The phone of each hidden id (`@lid`) an instance has seen beside one (domain/lid-phone.ts). Forgotten with it. */
export interface LidPhones {
  /** What the instance learned for those of `lids` it knows: phone digits by hidden id. */
  phonesOfLids(instanceId: string, lids: string[]): Promise<Map<string, string>>;
  /** Learns each `[lid, phone]` (a later pair for a hidden id replaces the earlier), in one statement. */
  learnLidPhones(instanceId: string, pairs: [string, string][], now: number): Promise<void>;
}

/** Everything Herald keeps, behind one adapter per database; each part is used through its own port. */
export interface Store extends Catalog, Queue, DeliveryLog, EngineRepeats, LidPhones {
  close(): Promise<void>;
  /** Resolves when the database answers; with `write`, when it also takes (and commits) a small write. */
  ping(options?: { write?: boolean }): Promise<void>;
}
