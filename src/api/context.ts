/** What route handlers share: the store, the clock, the secret box, media and the metrics. */
import type { Config } from '../config.ts';
import type { Dispatcher } from '../delivery/dispatcher.ts';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { Media } from '../media/media.ts';
import type { IngestObserver } from '../metrics/metrics.ts';
import type { DestinationPolicy } from '../net/destination.ts';
import type { Availability } from '../store/availability.ts';
import type { Store } from '../store/ports.ts';

export interface ApiContext {
  config: Config;
  store: Store;
  /** Whether the database is available: what /readyz answers. */
  availability: Availability;
  clock: Clock;
  secretBox: SecretBox;
  /** The destination guard's policy, shared with the sender. */
  destinations: DestinationPolicy;
  media: Media;
  /**
   * The dispatcher of this process, when it delivers too: ingest hands it the fresh deliveries it has room for
   * (store/records.ts, HandOffRoom), and they go out without a claim.
   */
  handOff?: Pick<Dispatcher, 'handOffRoom' | 'takeHandOff'>;
  /** Where people reach Herald: PUBLIC_URL, or the address it listens on (known once it does). */
  publicUrl: () => string;
  /** Counts what ingest stored, and serves /metrics when it is a HeraldMetrics. */
  metrics?: IngestObserver & { contentType(): string; text(): Promise<string> };
}
