/** Learned phones of hidden ids on SQLite, per instance (ports.ts, LidPhones). */
import type { LidPhones } from '../ports.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteLidPhones implements LidPhones {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async phonesOfLids(instanceId: string, lids: string[]): Promise<Map<string, string>> {
    if (lids.length === 0) return new Map();
    const rows = this.#db
      .rows(
        `SELECT lid, phone FROM lid_phones
         WHERE instance_id = ? AND lid IN (SELECT value FROM json_each(?))`,
      )
      .all(instanceId, JSON.stringify(lids)) as unknown as [string, string][];
    return new Map(rows);
  }

  async learnLidPhones(instanceId: string, pairs: [string, string][], now: number): Promise<void> {
    if (pairs.length === 0) return;
    // A learned pair is a hint, never worth a flush of its own: the next commit's flush or checkpoint covers it.
    this.#db.tx(() => {
      this.#db
        .q(
          `INSERT INTO lid_phones (instance_id, lid, phone, updated_at)
           SELECT ?1, key, value, ?3 FROM json_each(?2) WHERE true
           ON CONFLICT (instance_id, lid) DO UPDATE SET phone = excluded.phone, updated_at = excluded.updated_at`,
        )
        .run(instanceId, JSON.stringify(Object.fromEntries(pairs)), now);
    }, 'lazy');
  }
}
