/**
 * The store's ports: what Herald keeps, in parts as narrow as the code that uses them. Opening a store (open/store.ts)
 * gives one object per part, each implemented once per database in the part's folder (`catalog/sqlite.ts`,
 * `catalog/postgres.ts`, …); a consumer names the parts it uses. Methods are async so that the embedded SQLite
 * adapter and a networked one share the same shape. The records they take and give are in records.ts.
 */
import type { WebhookHealth } from '../domain/health.ts';
import type { Delivery, EventDraft, Instance, Webhook } from '../domain/types.ts';
import type { LoggedAttempt } from '../domain/webhook-stats.ts';
import type {
  ApiKey,
  AttemptResult,
  ClaimedDelivery,
  DeliveryDetail,
  DeliveryFilter,
  HandOffRoom,
  IngestResult,
  InstanceChange,
  InstanceCounts,
  MediaJob,
  OperatorDestination,
  ParkedMessage,
  PortalLink,
  PurgeResult,
  QueueStats,
  RedeliverRange,
  RedeliverResult,
  Router,
  Source,
  SourceConfig,
  SourceCounts,
  SourceState,
  WebhookConfig,
  Work,
} from './records.ts';

/** Herald's settings, its instances and their API keys. */
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
}

/** The webhooks of each instance: their configuration, enablement and signing secrets. */
export interface Webhooks {
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
  /**
   * The operator's destination (OPERATOR_WEBHOOK_URL), which receives every instance's operational events: set,
   * enabled and subscribed to them all; or, for null, disabled (its log is kept).
   */
  setOperator(destination: OperatorDestination | null, now: number): Promise<void>;
}

/** How each webhook has been doing, as its outcomes are recorded (outcome/). */
export interface Health {
  /** Health of the instance's webhooks (of all, for null) at `now`, by webhook; one with no outcome yet is absent. */
  webhookHealth(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>>;
  /** The webhook's attempts that started at or after `from`, for its stats (webhook-stats.ts). */
  attemptsSince(webhookId: string, from: number): Promise<LoggedAttempt[]>;
}

/** Events in: each stored with its deliveries, in one transaction. */
export interface Events {
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
}

/** Due deliveries leased to a sender, and the queue at a glance. */
export interface Claims {
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
   * Earliest time after `after` at which a pending delivery becomes due (leases included), or null when there is
   * none. Deliveries due at `after` or earlier and still unclaimed are waiting for room, not for time.
   */
  nextDueAt(after: number): Promise<number | null>;
  /** Depth of the queue and how long its oldest due delivery has waited (see QueueStats). */
  queueStats(now: number): Promise<QueueStats>;
}

/** What came of the attempts, and claims given back unattempted. */
export interface Outcomes {
  /**
   * Logs the attempts and applies their decisions. A result whose lease was lost (ended by disabling the webhook,
   * or run out and taken by another holder) is logged and counted in the delivery's `attempts`, and becomes its last
   * result if none later is recorded, but its decision is dropped: whoever holds the delivery now decides.
   */
  recordAttempts(results: AttemptResult[], now: number): Promise<void>;
  /**
   * Gives back leases whose attempts were not made or not finished (a graceful stop): each delivery still held by
   * that lease becomes due at `now`, claimable at once by another process. No attempt is counted or logged.
   */
  releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number): Promise<number>;
}

/** Engine media to download before an event's deliveries go out. */
export interface MediaJobs {
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
}

/** Finished work removed once it is old. */
export interface Retention {
  /**
   * Retention: deletes up to `limit` finished (delivered or failed) deliveries whose last attempt (or creation,
   * when never attempted) is before `before`, with their attempts; then up to `limit` events created before
   * `before` that no delivery refers to any more. Pending deliveries are never touched.
   */
  purgeFinished(before: number, limit: number): Promise<PurgeResult>;
}

/** The delivery log as people read it, and redelivery from it. */
export interface DeliveryLog {
  listDeliveries(
    instanceId: string,
    filter: DeliveryFilter,
  ): Promise<{ deliveries: Delivery[]; next_cursor: string | null }>;
  /** `operator`: the operator's deliveries are found too (the admin's view). */
  getDelivery(instanceId: string, deliveryId: string, operator?: boolean): Promise<DeliveryDetail | null>;
  redeliver(
    instanceId: string,
    deliveryId: string,
    now: number,
    operator?: boolean,
  ): Promise<RedeliverResult>;
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

/** Links that hand one instance's session page to someone outside, until they expire or are revoked. */
export interface PortalLinks {
  /**
   * Stores the link unless its instance already has `maxLive` links not expired at its `created_at` (false then),
   * counted and inserted so that creates at once, from any number of processes, never pass it.
   */
  createPortalLink(link: PortalLink, maxLive?: number): Promise<boolean>;
  /** The instance's links not expired at `now`, oldest first. */
  listPortalLinks(instanceId: string, now: number): Promise<PortalLink[]>;
  /** The link whose token hashes to `tokenHash`, expired or not (the caller tells an expired one apart). */
  findPortalLinkByHash(tokenHash: string): Promise<PortalLink | null>;
  /** Revokes at once: false when the instance has no such link. */
  deletePortalLink(instanceId: string, linkId: string): Promise<boolean>;
  /** Retention: removes the links expired by `now`; returns how many. */
  forgetExpiredPortalLinks(now: number): Promise<number>;
}

/** Queues Herald consumes events from, shared by every process on the database, and what they parked. */
export interface Sources {
  createSource(source: Source): Promise<void>;
  /** Every source, oldest first. */
  listSources(): Promise<Source[]>;
  getSource(sourceId: string): Promise<Source | null>;
  /** Replaces the configuration; the state goes back to connecting. Null when there is no such source. */
  updateSource(sourceId: string, config: SourceConfig, now: number): Promise<Source | null>;
  /** Removes the source with what it parked. */
  deleteSource(sourceId: string): Promise<boolean>;
  setSourceState(sourceId: string, state: SourceState, lastError: string | null, now: number): Promise<void>;
  /** Adds to the counters (each process adds what it counted). */
  addSourceCounts(sourceId: string, counts: SourceCounts): Promise<void>;
  /** Keeps a message that can never be ingested, committed before the call returns (it is acked after). */
  parkMessage(sourceId: string, parked: ParkedMessage): Promise<void>;
  /** Parked messages, oldest first, after `cursor` (the last one's position, from the previous page). */
  listParked(
    sourceId: string,
    limit: number,
    cursor: number | null,
  ): Promise<{ parked: (ParkedMessage & { seq: number })[]; more: boolean }>;
}

/** Everything Herald keeps, part by part, on one database. */
export interface Store {
  catalog: Catalog;
  webhooks: Webhooks;
  health: Health;
  events: Events;
  claims: Claims;
  outcomes: Outcomes;
  mediaJobs: MediaJobs;
  retention: Retention;
  log: DeliveryLog;
  engineRepeats: EngineRepeats;
  lidPhones: LidPhones;
  portalLinks: PortalLinks;
  sources: Sources;
  /**
   * Calls `wake` whenever work is queued on this database (ingest, redelivery, released leases) once it is
   * committed: by any process on a shared database (PostgreSQL NOTIFY), by this one on the embedded store. The
   * dispatcher sleeps on this, so no caller of the store has to wake it. `work` says which work when the store
   * knows (deliveries due, or media to download); without it, any may be.
   */
  listenForWork(wake: (work?: Work) => void): Promise<void>;
  close(): Promise<void>;
  /** Resolves when the database answers; with `write`, when it also takes (and commits) a small write. */
  ping(options?: { write?: boolean }): Promise<void>;
}
