/**
 * Makes one attempt to a broker destination (amqp, nats, redis), in the delivery thread, as the Poster makes one to an
 * HTTP one: the same body and signed headers, as the broker's message; delivered only on the broker's own proof
 * (brokers/), whose words become the attempt's answer (`broker_ack …`) or its error. The destination guard is
 * applied where the connection is made: each broker connection, and each of its reconnects, goes to the addresses
 * the guard resolved and approved at that moment (brokers/pinning.ts); a refusal answers `destination_not_allowed`.
 */
import { type BrokerTarget, isBrokerUrlProblem, parseBrokerUrl } from '../domain/broker-url.ts';
import { HEADERS, signedHeaders } from '../domain/signature.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import { type Brokers, createBrokerPublisher } from './brokers/index.ts';
import type { DestinationPolicy } from './destination.ts';
import type { PostRequest } from './poster.ts';

export interface BrokerPosterOptions {
  timeoutMs: number;
  destinations: DestinationPolicy;
}

export class BrokerPoster {
  readonly #options: BrokerPosterOptions;
  readonly #brokers: Brokers;
  /** Parsed once per destination URL: bounded by the webhooks' URLs. */
  readonly #targets = new Map<string, BrokerTarget | string>();

  constructor(options: BrokerPosterOptions) {
    this.#options = options;
    this.#brokers = createBrokerPublisher({
      destinations: options.destinations,
      connectTimeoutMs: options.timeoutMs,
    });
  }

  async post(req: PostRequest): Promise<AttemptOutcome> {
    const started = performance.now();
    const target = this.#target(req.destination_url);
    if (typeof target === 'string') return outcome({ ok: false, error: target }, started);
    const headers = signedHeaders(req);
    const answer = await this.#brokers.publish(
      target,
      {
        event_id: req.event_id,
        event: kindOf(req.body),
        timestamp: req.timestamp,
        signature: headers[HEADERS.signature] ?? null,
        headers,
        body: req.body,
      },
      this.#options.timeoutMs,
    );
    return outcome(answer, started);
  }

  async close(): Promise<void> {
    await this.#brokers.close();
  }

  #target(url: string): BrokerTarget | string {
    let target = this.#targets.get(url);
    if (target === undefined) {
      if (this.#targets.size >= 10_000) this.#targets.clear();
      const parsed = parseBrokerUrl(url);
      // Checked when the webhook was saved: a problem here is a fault of ours, logged with the attempt.
      target = isBrokerUrlProblem(parsed) ? parsed.message : parsed;
      this.#targets.set(url, target);
    }
    return target;
  }
}

/** A broker's acknowledgement has no status code and no error: retry-policy.ts counts it delivered. */
const outcome = (
  answer: { ok: true; answer: string } | { ok: false; error: string },
  started: number,
): AttemptOutcome => ({
  started_at: 0,
  duration_ms: Math.round(performance.now() - started),
  status_code: null,
  error: answer.ok ? null : answer.error,
  response_body: answer.ok ? answer.answer : null,
  retry_after: null,
});

/** The event kind, read off the start of the delivery body (event-body.ts writes event_id, then event). */
function kindOf(body: string): string {
  const head = /^\{"event_id":"[^"]*","event":"([^"\\]*)"/.exec(body);
  if (head) return head[1];
  try {
    return String(JSON.parse(body).event ?? '');
  } catch {
    return '';
  }
}
