/**
 * Herald's Prometheus metrics, in one place: the rest of the code reports through small interfaces
 * (DeliveryObserver for the dispatcher, IngestObserver for the API, MediaObserver for the media jobs) and never
 * touches prom-client. Queue depth and in-flight counts are read when scraped, so they cost nothing between scrapes.
 * Label values are bounded, whatever a client sends: event kinds are the catalog's (an engine's kind outside it is
 * counted as "other"), attempt results status classes, "ack" for a broker's acknowledgement, or the sender's fixed
 * error codes (a broker's refusal in words is "other"), media failures a fixed list of reasons; and no series is
 * per webhook (health-gauges.ts says why), so neither made-up kinds nor thousands of webhooks can blow up the
 * series count, and with it the memory and the size of /metrics.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { isEventKind } from '../domain/events.ts';
import type { WebhookHealth } from '../domain/health.ts';
import { MEDIA_FAILURE_REASONS } from '../domain/media-failures.ts';
import type { Decision } from '../domain/retry-policy.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import type { QueueStats } from '../store/records.ts';
import { registerHealthGauges } from './health-gauges.ts';
import { type SourceObserver, sourceMetrics } from './source-metrics.ts';

export interface DeliveryObserver {
  attemptFinished(outcome: AttemptOutcome, decision: Decision): void;
}

export interface IngestObserver {
  /** Kinds of the events newly stored (repeats of a known event_id left out). */
  eventsIngested(kinds: readonly string[]): void;
  /** An engine's webhook body refused for its size (ENGINE_MAX_BODY_BYTES). */
  engineBodyTooLarge(): void;
}

export interface MediaObserver {
  /** An engine's media file not stored, by reason (media-failure.ts). */
  engineMediaFailed(reason: string): void;
}

export interface MetricsSources {
  queueStats: () => Promise<QueueStats>;
  /** Attempts in flight per webhook in this process. */
  inFlight: () => ReadonlyMap<string, number>;
  /** Every webhook's health (health-gauges.ts). */
  webhookHealth: () => Promise<Map<string, WebhookHealth>>;
  now: () => number;
}

/** The label of any value outside a label's fixed list. */
export const OTHER = 'other';
/** The result of an attempt a broker acknowledged. */
export const ACK = 'ack';

/**
 * The error codes an attempt without an answer ends with (src/net/destinations/http.ts, the thread's
 * internal_error, the guard's destination_not_allowed); a broker's words (src/net/brokers) are counted as "other".
 */
const ATTEMPT_ERRORS: readonly string[] = [
  'timeout',
  'connection_refused',
  'connection_reset',
  'connection_error',
  'dns_error',
  'host_unreachable',
  'tls_error',
  'destination_not_allowed',
  'internal_error',
];

export class HeraldMetrics implements DeliveryObserver, IngestObserver, MediaObserver {
  readonly registry = new Registry();
  /** The sources' series (source-metrics.ts). */
  readonly sources: SourceObserver = sourceMetrics(this.registry);
  readonly #ingested: Counter<'event'>;
  readonly #mediaFailures: Counter<'reason'>;
  readonly #engineTooLarge: Counter;
  readonly #deliveries: Counter<'outcome'>;
  readonly #attempts: Counter<'result'>;
  readonly #latency: Histogram;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.#ingested = new Counter({
      name: 'herald_events_ingested_total',
      help: 'Events stored by ingest, by kind (a repeated event_id is not counted again)',
      labelNames: ['event'],
      registers,
    });
    this.#engineTooLarge = new Counter({
      name: 'herald_engine_bodies_too_large_total',
      help: "Engine webhook bodies refused with 413 for exceeding ENGINE_MAX_BODY_BYTES (the log names each one's kind and id)",
      registers,
    });
    this.#mediaFailures = new Counter({
      name: 'herald_engine_media_failures_total',
      help: `Engine media files not stored, by reason: ${MEDIA_FAILURE_REASONS.join(', ')}`,
      labelNames: ['reason'],
      registers,
    });
    // Every reason from the start, at 0: an alert on its rate needs the series before the first failure.
    for (const reason of MEDIA_FAILURE_REASONS) this.#mediaFailures.inc({ reason }, 0);
    this.#deliveries = new Counter({
      name: 'herald_deliveries_total',
      help: 'Deliveries that reached an end: delivered, or failed with reason attempts_exhausted, gone or destination_not_allowed',
      labelNames: ['outcome'],
      registers,
    });
    this.#attempts = new Counter({
      name: 'herald_attempts_total',
      help: `Attempts made, by result: the status class (2xx, 4xx, 5xx…), 410, 429, ack (a broker acknowledged it: delivered), an error code (${ATTEMPT_ERRORS.join(', ')}), or other`,
      labelNames: ['result'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'herald_attempt_duration_seconds',
      help: 'Time from the start of an attempt to its answer (or timeout)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 8, 10],
      registers,
    });
    // The three queue gauges are collected together on a scrape: one query, shared while it runs.
    let reading: Promise<QueueStats> | null = null;
    const queueStats = () => {
      reading ??= sources.queueStats().finally(() => {
        reading = null;
      });
      return reading;
    };
    new Gauge({
      name: 'herald_queue_depth',
      help: 'Deliveries not finished: queued, waiting for a retry, or in flight',
      registers,
      async collect() {
        this.set((await queueStats()).pending);
      },
    });
    new Gauge({
      name: 'herald_queue_due',
      help: 'Deliveries due now and waiting for a sender',
      registers,
      async collect() {
        this.set((await queueStats()).due);
      },
    });
    new Gauge({
      name: 'herald_queue_oldest_due_age_seconds',
      help: 'How long the oldest due delivery has been waiting for a sender (0 when none is due)',
      registers,
      async collect() {
        const oldest = (await queueStats()).oldest_due_at;
        this.set(oldest === null ? 0 : Math.max(0, sources.now() - oldest) / 1000);
      },
    });
    new Gauge({
      name: 'herald_in_flight_attempts',
      help: 'Attempts in flight in this process',
      registers,
      collect() {
        let total = 0;
        for (const n of sources.inFlight().values()) total += n;
        this.set(total);
      },
    });
    new Gauge({
      name: 'herald_in_flight_attempts_busiest_webhook',
      help: 'Attempts in flight in this process for the one webhook with the most (each webhook has a cap of its own)',
      registers,
      collect() {
        this.set(Math.max(0, ...sources.inFlight().values()));
      },
    });
    registerHealthGauges(this.registry, sources.webhookHealth);
  }

  engineBodyTooLarge(): void {
    this.#engineTooLarge.inc();
  }

  engineMediaFailed(reason: string): void {
    this.#mediaFailures.inc({
      reason: (MEDIA_FAILURE_REASONS as readonly string[]).includes(reason) ? reason : OTHER,
    });
  }

  eventsIngested(kinds: readonly string[]): void {
    for (const event of kinds) this.#ingested.inc({ event: isEventKind(event) ? event : OTHER });
  }

  attemptFinished(outcome: AttemptOutcome, decision: Decision): void {
    this.#attempts.inc({ result: attemptResult(outcome) });
    this.#latency.observe(outcome.duration_ms / 1000);
    if (decision.kind === 'delivered') this.#deliveries.inc({ outcome: 'delivered' });
    else if (decision.kind === 'failed') this.#deliveries.inc({ outcome: decision.reason });
  }

  contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

function attemptResult(o: AttemptOutcome): string {
  // A broker's acknowledgement has no status: it is a delivery, never an error.
  if (o.acknowledged === true) return ACK;
  if (o.status_code === null) return o.error !== null && ATTEMPT_ERRORS.includes(o.error) ? o.error : OTHER;
  if (o.status_code === 410 || o.status_code === 429) return String(o.status_code);
  // A status is three digits (undici refuses any other answer), so its class is one of 1xx…9xx.
  return `${Math.floor(o.status_code / 100)}xx`;
}
