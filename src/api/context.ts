/** What route handlers share: the store, the clock, the secret box and a way to wake the dispatcher. */
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { IngestObserver } from '../metrics/metrics.ts';
import type { Store } from '../store/store.ts';

export interface ApiContext {
  config: Config;
  store: Store;
  clock: Clock;
  secretBox: SecretBox;
  /** New work may be due now (ingest, redelivery). */
  onWork: () => void;
  /** Counts what ingest stored, and serves /metrics when it is a HeraldMetrics. */
  metrics?: IngestObserver & { contentType(): string; text(): Promise<string> };
}
