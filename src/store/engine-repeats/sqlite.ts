/** The engine's repeats on SQLite: which event first reported a thing, per instance (ports.ts, EngineRepeats). */
import type { EngineRepeats } from '../ports.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteEngineRepeats implements EngineRepeats {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async rememberEngineEvent(instanceId: string, key: string, eventId: string, now: number, windowMs: number) {
    return this.#db.tx(() => {
      // A report older than the window gives the key up to this one.
      this.#db
        .q(
          `INSERT INTO engine_repeats (instance_id, repeat_key, event_id, seen_at) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (instance_id, repeat_key) DO UPDATE SET event_id = excluded.event_id, seen_at = excluded.seen_at
           WHERE engine_repeats.seen_at <= ?4 - ?5`,
        )
        .run(instanceId, key, eventId, now, windowMs);
      const row = this.#db
        .q('SELECT event_id FROM engine_repeats WHERE instance_id = ? AND repeat_key = ?')
        .get(instanceId, key);
      return row?.event_id as string;
    });
  }
}
