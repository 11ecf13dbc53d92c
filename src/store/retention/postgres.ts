/** Retention on PostgreSQL: finished deliveries (their attempts cascade) and then events nothing refers to any more. */

import type { Retention } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';
import type { PurgeResult } from '../records.ts';

export class PostgresRetention implements Retention {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Two short statements, each bounded by `limit`, so that a purge never holds rows for long. `FOR UPDATE SKIP
   * LOCKED` re-reads each row's current version before taking it: a delivery redelivered (pending again) since
   * the statement began is left alone, and two workers purging at once take different rows.
   */
  async purgeFinished(before: number, limit: number): Promise<PurgeResult> {
    const sql = this.#db.sql;
    // The expression and the status test match the partial index deliveries_finished.
    const deliveries = await sql`
      DELETE FROM deliveries WHERE delivery_id IN (
        SELECT delivery_id FROM deliveries
        WHERE status <> 'pending' AND COALESCE(last_attempt_at, created_at) < ${before}::bigint
        ORDER BY COALESCE(last_attempt_at, created_at) LIMIT ${limit}::integer
        FOR UPDATE SKIP LOCKED)`;
    // Also events that never had a delivery, or lost theirs when a webhook was deleted. An event being ingested
    // right now is not visible yet, and its deliveries are stored in the same transaction.
    const events = await sql`
      DELETE FROM events WHERE event_id IN (
        SELECT e.event_id FROM events e
        WHERE e.created_at < ${before}::bigint
          AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.event_id)
        ORDER BY e.created_at LIMIT ${limit}::integer
        FOR UPDATE SKIP LOCKED)`;
    // What engines reported that long ago is no repeat of anything still to come.
    await sql`
      DELETE FROM engine_repeats WHERE ctid IN (
        SELECT ctid FROM engine_repeats WHERE seen_at < ${before}::bigint LIMIT ${limit}::integer)`;
    return { deliveries: deliveries.count, events: events.count };
  }
}
