/** Learned phones of hidden ids on PostgreSQL, per instance (ports.ts, LidPhones). */
import type { LidPhones } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';

export class PostgresLidPhones implements LidPhones {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async phonesOfLids(instanceId: string, lids: string[]): Promise<Map<string, string>> {
    if (lids.length === 0) return new Map();
    const rows = await this.#db.sql<{ lid: string; phone: string }[]>`
      SELECT lid, phone FROM lid_phones WHERE instance_id = ${instanceId} AND lid = ANY(${lids}::text[])`;
    return new Map(rows.map((r) => [r.lid, r.phone]));
  }

  async learnLidPhones(instanceId: string, pairs: [string, string][], now: number): Promise<void> {
    // One row per hidden id: an upsert may not touch the same row twice.
    const unique = new Map(pairs);
    if (unique.size === 0) return;
    await this.#db.sql`
      INSERT INTO lid_phones (instance_id, lid, phone, updated_at)
      SELECT ${instanceId}, lid, phone, ${now}::bigint
      FROM unnest(${[...unique.keys()]}::text[], ${[...unique.values()]}::text[]) AS t(lid, phone)
      ON CONFLICT (instance_id, lid) DO UPDATE SET phone = EXCLUDED.phone, updated_at = EXCLUDED.updated_at`;
  }
}
