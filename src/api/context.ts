/** What route handlers share: the store, the clock, the secret box, media and the metrics. */
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { Media } from '../media/media.ts';
import type { IngestObserver } from '../metrics/metrics.ts';
import type { DestinationPolicy } from '../net/destination.ts';
import type { Availability } from '../store/availability.ts';
import type { Events, Store } from '../store/ports.ts';
import type { Tracing } from '../telemetry/tracing.ts';

export interface ApiContext {
  config: Config;
  /** All of the store but its events port: events go in through `events`. */
  store: Omit<Store, 'events'>;
  /** Whether the database is available: what /readyz answers. */
  availability: Availability;
  clock: Clock;
  secretBox: SecretBox;
  /** The destination guard's policy, shared with the sender. */
  destinations: DestinationPolicy;
  media: Media;
  /**
   * Where events are stored: the store's own port, or, in a process that delivers too, that port handing what it
   * leases to the dispatcher (delivery/hand-off.ts). Whichever it is, the API only ingests.
   */
  events: Pick<Events, 'ingest'>;
  /** Where people reach Herald: PUBLIC_URL, or the address it listens on (known once it does). */
  publicUrl: () => string;
  /** Counts what ingest stored, and serves /metrics when it is a HeraldMetrics. */
  metrics?: IngestObserver & { contentType(): string; text(): Promise<string> };
  /** Traces publish requests (telemetry/publish-span.ts) when tracing is on. */
  tracing?: Tracing | null;
}
