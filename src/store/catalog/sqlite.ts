/** Settings, instances and their API keys on SQLite. */
import type { Instance } from '../../domain/types.ts';
import type { Catalog } from '../ports.ts';
import type { ApiKey, InstanceChange } from '../records.ts';
import { toInstance, toKey } from '../rows.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteCatalog implements Catalog {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async getSetting(name: string): Promise<string | null> {
    const row = this.#db.q('SELECT value FROM settings WHERE name = ?').get(name);
    return row ? (row.value as string) : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    writeSetting(this.#db, name, value);
  }

  async resealSecrets(reseal: (sealed: string) => string, setting: { name: string; value: string }) {
    return this.#db.tx(() => {
      const rows = this.#db
        .q(
          `SELECT webhook_id, secret_sealed, previous_secret_sealed, headers_sealed FROM webhooks
           WHERE secret_sealed IS NOT NULL OR previous_secret_sealed IS NOT NULL OR headers_sealed IS NOT NULL`,
        )
        .all();
      const update = this.#db.q(
        'UPDATE webhooks SET secret_sealed = ?, previous_secret_sealed = ?, headers_sealed = ? WHERE webhook_id = ?',
      );
      const again = (sealed: unknown) => (sealed === null ? null : reseal(sealed as string));
      for (const row of rows) {
        update.run(
          again(row.secret_sealed),
          again(row.previous_secret_sealed),
          again(row.headers_sealed),
          row.webhook_id as string,
        );
      }
      const keys = this.#db
        .q('SELECT instance_id, engine_hmac_sealed FROM instances WHERE engine_hmac_sealed IS NOT NULL')
        .all();
      const updateKey = this.#db.q('UPDATE instances SET engine_hmac_sealed = ? WHERE instance_id = ?');
      for (const k of keys) updateKey.run(reseal(k.engine_hmac_sealed as string), k.instance_id as string);
      writeSetting(this.#db, setting.name, setting.value);
      return rows.length + keys.length;
    });
  }

  async createInstance(i: Instance): Promise<void> {
    this.#db
      .q(
        `INSERT INTO instances (instance_id, name, status, phone, engine_hmac_sealed, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(i.instance_id, i.name, i.status, i.phone, i.engine_hmac_sealed ?? null, i.created_at);
  }

  async updateInstance(instanceId: string, change: InstanceChange) {
    const { name, engine_hmac_sealed: hmac, engine_media_prefix: prefix } = change;
    this.#db
      .q(
        `UPDATE instances SET name = COALESCE(?, name),
           engine_hmac_sealed = CASE WHEN ? THEN ? ELSE engine_hmac_sealed END,
           engine_media_prefix = CASE WHEN ? THEN ? ELSE engine_media_prefix END
         WHERE instance_id = ?`,
      )
      .run(
        name ?? null,
        hmac === undefined ? 0 : 1,
        hmac ?? null,
        prefix === undefined ? 0 : 1,
        prefix ?? null,
        instanceId,
      );
    return this.getInstance(instanceId);
  }

  async listInstances() {
    return this.#db.q('SELECT * FROM instances ORDER BY created_at, instance_id').all().map(toInstance);
  }

  async getInstance(instanceId: string) {
    const row = this.#db.q('SELECT * FROM instances WHERE instance_id = ?').get(instanceId);
    return row ? toInstance(row) : null;
  }

  async deleteInstance(instanceId: string): Promise<boolean> {
    return this.#db.tx(() => {
      // Deliveries first, so the cascade does not walk them twice (through events and through webhooks).
      this.#db.q('DELETE FROM deliveries WHERE instance_id = ?').run(instanceId);
      return this.#db.q('DELETE FROM instances WHERE instance_id = ?').run(instanceId).changes > 0;
    });
  }

  async createKey(k: ApiKey): Promise<void> {
    this.#db
      .q('INSERT INTO api_keys (key_id, instance_id, key_hash, scope, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(k.key_id, k.instance_id, k.key_hash, k.scope, k.created_at);
  }

  async listKeys(instanceId: string) {
    return this.#db
      .q('SELECT * FROM api_keys WHERE instance_id = ? ORDER BY created_at')
      .all(instanceId)
      .map(toKey);
  }

  async findKeyByHash(keyHash: string) {
    const row = this.#db.q('SELECT * FROM api_keys WHERE key_hash = ?').get(keyHash);
    return row ? toKey(row) : null;
  }

  async deleteKey(instanceId: string, keyId: string): Promise<boolean> {
    return (
      this.#db.q('DELETE FROM api_keys WHERE instance_id = ? AND key_id = ?').run(instanceId, keyId).changes >
      0
    );
  }
}

/** A setting written in the caller's transaction (or on its own). */
export function writeSetting(db: SqliteDatabase, name: string, value: string): void {
  db.q(
    'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
  ).run(name, value);
}
