/** Settings, instances and their API keys on PostgreSQL. */
import type { Row } from 'postgres';
import type { Instance } from '../../domain/types.ts';
import type { Catalog } from '../ports.ts';
import type { PostgresDatabase, Tx } from '../postgres/database.ts';
import type { ApiKey, InstanceChange } from '../records.ts';
import { toInstance, toKey } from '../rows.ts';

export class PostgresCatalog implements Catalog {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async getSetting(name: string): Promise<string | null> {
    const [row] = await this.#db.sql<{ value: string }[]>`SELECT value FROM settings WHERE name = ${name}`;
    return row ? row.value : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    await writeSetting(this.#db.sql, name, value);
  }

  /**
   * The secrets are locked while they are re-sealed, so that a PATCH meanwhile waits and is not overwritten with
   * a secret re-sealed from its old value; `reseal` throwing rolls everything back.
   */
  async resealSecrets(reseal: (sealed: string) => string, setting: { name: string; value: string }) {
    return this.#db.tx(async (sql) => {
      type Sealed = string | null;
      const rows = await sql<{ webhook_id: string; s: Sealed; p: Sealed; h: Sealed }[]>`
        SELECT webhook_id, secret_sealed AS s, previous_secret_sealed AS p, headers_sealed AS h FROM webhooks
        WHERE secret_sealed IS NOT NULL OR previous_secret_sealed IS NOT NULL OR headers_sealed IS NOT NULL
        ORDER BY webhook_id FOR NO KEY UPDATE`;
      const ids = rows.map((r) => r.webhook_id);
      const again = (sealed: Sealed) => (sealed === null ? null : reseal(sealed));
      await sql`
        UPDATE webhooks w SET secret_sealed = r.s, previous_secret_sealed = r.p, headers_sealed = r.h
        FROM unnest(${ids}::text[], ${rows.map((r) => again(r.s))}::text[], ${rows.map((r) => again(r.p))}::text[],
                    ${rows.map((r) => again(r.h))}::text[]) AS r(webhook_id, s, p, h)
        WHERE w.webhook_id = ANY(${ids}::text[]) AND w.webhook_id = r.webhook_id`;
      const keys = await sql<{ instance_id: string; engine_hmac_sealed: string }[]>`
        SELECT instance_id, engine_hmac_sealed FROM instances WHERE engine_hmac_sealed IS NOT NULL
        ORDER BY instance_id FOR NO KEY UPDATE`;
      for (const k of keys) {
        await sql`UPDATE instances SET engine_hmac_sealed = ${reseal(k.engine_hmac_sealed)}
                  WHERE instance_id = ${k.instance_id}`;
      }
      await writeSetting(sql, setting.name, setting.value);
      return rows.length + keys.length;
    });
  }

  async createInstance(i: Instance): Promise<void> {
    await this.#db.sql`
      INSERT INTO instances (instance_id, name, status, phone, engine_hmac_sealed, created_at)
      VALUES (${i.instance_id}, ${i.name}, ${i.status}, ${i.phone}, ${i.engine_hmac_sealed ?? null},
        ${i.created_at}::bigint)`;
  }

  async updateInstance(instanceId: string, change: InstanceChange) {
    const { name, engine_hmac_sealed: hmac, engine_media_prefix: prefix } = change;
    const [row] = await this.#db.sql<Row[]>`
      UPDATE instances SET name = COALESCE(${name ?? null}::text, name),
        engine_hmac_sealed = CASE WHEN ${hmac !== undefined}::boolean THEN ${hmac ?? null}::text
                             ELSE engine_hmac_sealed END,
        engine_media_prefix = CASE WHEN ${prefix !== undefined}::boolean THEN ${prefix ?? null}::text
                              ELSE engine_media_prefix END
      WHERE instance_id = ${instanceId} RETURNING *`;
    return row ? toInstance(row) : null;
  }

  async listInstances() {
    return (await this.#db.sql<Row[]>`SELECT * FROM instances ORDER BY created_at, instance_id`).map(
      toInstance,
    );
  }

  async getInstance(instanceId: string) {
    const [row] = await this.#db.sql<Row[]>`SELECT * FROM instances WHERE instance_id = ${instanceId}`;
    return row ? toInstance(row) : null;
  }

  async deleteInstance(instanceId: string): Promise<boolean> {
    return this.#db.tx(async (sql) => {
      // Deliveries first, so the cascade does not walk them twice (through events and through webhooks).
      await sql`DELETE FROM deliveries WHERE instance_id = ${instanceId}`;
      return (await sql`DELETE FROM instances WHERE instance_id = ${instanceId}`).count > 0;
    });
  }

  async createKey(k: ApiKey): Promise<void> {
    await this.#db.sql`
      INSERT INTO api_keys (key_id, instance_id, key_hash, scope, created_at)
      VALUES (${k.key_id}, ${k.instance_id}, ${k.key_hash}, ${k.scope}, ${k.created_at}::bigint)`;
  }

  async listKeys(instanceId: string) {
    return (
      await this.#db.sql<Row[]>`SELECT * FROM api_keys WHERE instance_id = ${instanceId} ORDER BY created_at`
    ).map(toKey);
  }

  async findKeyByHash(keyHash: string) {
    const [row] = await this.#db.sql<Row[]>`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`;
    return row ? toKey(row) : null;
  }

  async deleteKey(instanceId: string, keyId: string): Promise<boolean> {
    const result = await this.#db.sql`
      DELETE FROM api_keys WHERE instance_id = ${instanceId} AND key_id = ${keyId}`;
    return result.count > 0;
  }
}

/** A setting written in the caller's transaction (or on its own). */
export async function writeSetting(
  sql: Tx | PostgresDatabase['sql'],
  name: string,
  value: string,
): Promise<void> {
  await sql`
    INSERT INTO settings (name, value) VALUES (${name}, ${value})
    ON CONFLICT (name) DO UPDATE SET value = excluded.value`;
}
