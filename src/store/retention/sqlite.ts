/** Retention on SQLite: finished deliveries (their attempts cascade) and then events nothing refers to any more. */
import type { Retention } from '../ports.ts';
import type { PurgeResult } from '../records.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteRetention implements Retention {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /** Two short statements, each bounded by `limit`, so that a purge never holds the database for long. */
  async purgeFinished(before: number, limit: number): Promise<PurgeResult> {
    // The expression and the status test match the partial index deliveries_finished.
    const deliveries = this.#db
      .q(
        `DELETE FROM deliveries WHERE delivery_id IN (
           SELECT delivery_id FROM deliveries
           WHERE status <> 'pending' AND COALESCE(last_attempt_at, created_at) < ? LIMIT ?)`,
      )
      .run(before, limit).changes;
    // Also events that never had a delivery, or lost theirs when a webhook was deleted.
    const events = this.#db
      .q(
        `DELETE FROM events WHERE event_id IN (
           SELECT e.event_id FROM events e
           WHERE e.created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.event_id)
           ORDER BY e.created_at LIMIT ?)`,
      )
      .run(before, limit).changes;
    // What engines reported that long ago is no repeat of anything still to come.
    this.#db
      .q(
        `DELETE FROM engine_repeats WHERE rowid IN (SELECT rowid FROM engine_repeats WHERE seen_at < ? LIMIT ?)`,
      )
      .run(before, limit);
    return { deliveries: Number(deliveries), events: Number(events) };
  }
}
