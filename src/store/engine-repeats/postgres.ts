/** The engine's repeats on PostgreSQL: which event first reported a thing, per instance (ports.ts, EngineRepeats). */
import type { EngineRepeats } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';

export class PostgresEngineRepeats implements EngineRepeats {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async rememberEngineEvent(instanceId: string, key: string, eventId: string, now: number, windowMs: number) {
    // The conflicting row is locked by the upsert, so a report that loses reads the winner's id.
    return this.#db.tx(async (sql) => {
      const [won] = await sql<{ event_id: string }[]>`
        INSERT INTO engine_repeats (instance_id, repeat_key, event_id, seen_at)
        VALUES (${instanceId}, ${key}, ${eventId}, ${now}::bigint)
        ON CONFLICT (instance_id, repeat_key) DO UPDATE SET event_id = EXCLUDED.event_id, seen_at = EXCLUDED.seen_at
        WHERE engine_repeats.seen_at <= ${now - windowMs}::bigint
        RETURNING event_id`;
      if (won) return won.event_id;
      const [held] = await sql<{ event_id: string }[]>`
        SELECT event_id FROM engine_repeats WHERE instance_id = ${instanceId} AND repeat_key = ${key}`;
      return held.event_id;
    });
  }
}
