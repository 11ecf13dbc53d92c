/**
 * The broker providers (RabbitMQ, NATS JetStream, Redis Streams), one per kind, each over its publisher (brokers/):
 * the same body and signed headers as an HTTP attempt, as the broker's message; delivered only on the broker's own
 * acknowledgement, whose words become the reply's (`broker_ack …`), or failed with the broker's reason. Each
 * publisher keeps one connection per broker address (brokers/connections.ts), and every connection, reconnects
 * included, goes to the addresses the destination guard approved at that moment (brokers/pinning.ts); a refusal
 * answers `destination_not_allowed`.
 */

import type { AmqpTarget, NatsTarget, RedisTarget } from '../../domain/broker-url.ts';
import { type BrokerTarget, isBrokerUrlProblem, parseBrokerUrl } from '../../domain/broker-url.ts';
import { eventKindOf } from '../../domain/event-body.ts';
import { failed, type Reply } from '../../domain/reply.ts';
import { HEADERS } from '../../domain/signature.ts';
import { AmqpPublisher } from '../brokers/amqp.ts';
import { NatsPublisher } from '../brokers/nats.ts';
import type { BrokerPublisher, PublisherOptions } from '../brokers/publisher.ts';
import { RedisPublisher } from '../brokers/redis.ts';
import { attemptHeaders, type DestinationProvider, type ProviderOptions, type Sending } from './provider.ts';

export class BrokerProvider<T extends BrokerTarget, P extends BrokerPublisher<T> = BrokerPublisher<T>>
  implements DestinationProvider
{
  readonly publisher: P;
  readonly #timeoutMs: number;
  /** Parsed once per destination URL: bounded by the webhooks' URLs. */
  readonly #targets = new Map<string, T | string>();

  constructor(publisher: P, timeoutMs: number) {
    this.publisher = publisher;
    this.#timeoutMs = timeoutMs;
  }

  async send(req: Sending): Promise<Reply> {
    const target = this.#target(req.destination_url);
    if (typeof target === 'string') return failed(target);
    const headers = attemptHeaders(req);
    return this.publisher.publish(
      target,
      {
        event_id: req.event_id,
        event: eventKindOf(req.body),
        timestamp: req.timestamp,
        signature: headers[HEADERS.signature] ?? null,
        headers,
        body: req.body,
        traceparent: req.traceparent ?? null,
      },
      this.#timeoutMs,
    );
  }

  close(): Promise<void> {
    return this.publisher.close();
  }

  #target(url: string): T | string {
    let target = this.#targets.get(url);
    if (target === undefined) {
      if (this.#targets.size >= 10_000) this.#targets.clear();
      const parsed = parseBrokerUrl(url);
      // Checked when the webhook was saved: a problem here is a fault of ours, logged with the attempt. The
      // registry sends a URL here only for this provider's schemes, so the target is this provider's kind.
      target = isBrokerUrlProblem(parsed) ? parsed.message : (parsed as T);
      this.#targets.set(url, target);
    }
    return target;
  }
}

/** A broker's connections open within the attempt's deadline too. */
const publisherOptions = (o: ProviderOptions): PublisherOptions => ({
  destinations: o.destinations,
  connectTimeoutMs: o.timeoutMs,
});

export const rabbitmqProvider = (o: ProviderOptions) =>
  new BrokerProvider<AmqpTarget, AmqpPublisher>(new AmqpPublisher(publisherOptions(o)), o.timeoutMs);
export const natsProvider = (o: ProviderOptions) =>
  new BrokerProvider<NatsTarget, NatsPublisher>(new NatsPublisher(publisherOptions(o)), o.timeoutMs);
export const redisProvider = (o: ProviderOptions) =>
  new BrokerProvider<RedisTarget, RedisPublisher>(new RedisPublisher(publisherOptions(o)), o.timeoutMs);
