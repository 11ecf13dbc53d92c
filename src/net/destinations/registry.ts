/**
 * Every kind of destination, each with its provider, registered by the kind its URL's scheme names
 * (destination-kind.ts): the delivery thread sends every attempt here, and the registry gives it to its provider.
 * The providers are made with the registry, so closing it closes every connection any of them opened.
 */
import { type DestinationKind, destinationKind } from '../../domain/destination-kind.ts';
import { failed, outcomeOf } from '../../domain/reply.ts';
import type { AttemptOutcome } from '../../domain/types.ts';
import { natsProvider, rabbitmqProvider, redisProvider } from './brokers.ts';
import { HttpProvider } from './http.ts';
import type { DestinationProvider, ProviderOptions, Sending } from './provider.ts';

const PROVIDERS = {
  http: (o: ProviderOptions) => new HttpProvider(o),
  amqp: rabbitmqProvider,
  nats: natsProvider,
  redis: redisProvider,
} satisfies Record<DestinationKind, (o: ProviderOptions) => DestinationProvider>;

type Providers = { [K in DestinationKind]: ReturnType<(typeof PROVIDERS)[K]> };

export class Destinations {
  readonly providers: Providers;

  constructor(options: ProviderOptions) {
    this.providers = {
      http: PROVIDERS.http(options),
      amqp: PROVIDERS.amqp(options),
      nats: PROVIDERS.nats(options),
      redis: PROVIDERS.redis(options),
    };
  }

  /** One attempt, by the provider its URL names, as the attempt's log keeps it (`started_at` is the caller's). */
  async attempt(sending: Sending): Promise<AttemptOutcome> {
    const started = performance.now();
    const kind = destinationKind(sending.destination_url);
    // Refused when the webhook was saved: a fault of ours, logged with the attempt.
    const reply =
      kind === null ? failed('destination_url: unknown scheme') : await this.providers[kind].send(sending);
    return outcomeOf(reply, Math.round(performance.now() - started));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.providers).map((p) => p.close()));
  }
}
