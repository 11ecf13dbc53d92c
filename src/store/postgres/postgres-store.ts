/**
 * The scale-out store: PostgreSQL, shared by any number of API and worker processes on any number of machines.
 * Instances, keys and webhooks live here; the queue and the delivery log have files of their own.
 */
import type { Row } from 'postgres';
import { toInstance, toKey } from '../rows.ts';
import type { ApiKey, InstanceChange, Store } from '../store.ts';
import { PostgresClaims } from './claims.ts';

export { postgresUnavailable } from './connection.ts';

import { PostgresDatabase, type Tx } from './database.ts';
import { PostgresDeliveryLog } from './delivery-log.ts';
import { PostgresEngineRepeats } from './engine-repeats.ts';
import { PostgresIngest } from './ingest.ts';
import { PostgresLidPhones } from './lid-phones.ts';
import { PostgresMediaJobs } from './media-jobs.ts';
import { PostgresOutcomes } from './outcomes.ts';
import { PostgresRetention } from './retention.ts';
import { PostgresWebhooks } from './webhooks.ts';

export class PostgresStore implements Store {
  readonly #db: PostgresDatabase;
  readonly #ingest: PostgresIngest;
  readonly #outcomes: PostgresOutcomes;
  readonly #log: PostgresDeliveryLog;
  readonly #retention: PostgresRetention;
  readonly #mediaJobs: PostgresMediaJobs;
  readonly #webhooks: PostgresWebhooks;
  readonly #claims: PostgresClaims;
  readonly #repeats: PostgresEngineRepeats;
  readonly #lidPhones: PostgresLidPhones;

  private constructor(db: PostgresDatabase) {
    this.#db = db;
    this.#ingest = new PostgresIngest(db);
    this.#outcomes = new PostgresOutcomes(db, (sql, changes) => this.#webhooks.applyHealth(sql, changes));
    this.#webhooks = new PostgresWebhooks(db, (...args) => this.#outcomes.disable(...args));
    this.#claims = new PostgresClaims(db);
    this.#log = new PostgresDeliveryLog(db);
    this.#retention = new PostgresRetention(db);
    this.#mediaJobs = new PostgresMediaJobs(db);
    this.#repeats = new PostgresEngineRepeats(db);
    this.#lidPhones = new PostgresLidPhones(db);
  }

  /** Connects and migrates (safe when several processes start at once). */
  static async open(url: string): Promise<PostgresStore> {
    return new PostgresStore(await PostgresDatabase.open(url));
  }

  ingest: Store['ingest'] = (...args) => this.#ingest.ingest(...args);
  claimDue: Store['claimDue'] = (...args) => this.#claims.claimDue(...args);
  recordAttempts: Store['recordAttempts'] = (...args) => this.#outcomes.recordAttempts(...args);
  nextDueAt: Store['nextDueAt'] = (...args) => this.#claims.nextDueAt(...args);
  queueStats: Store['queueStats'] = (...args) => this.#claims.queueStats(...args);
  releaseClaims: Store['releaseClaims'] = (...args) => this.#outcomes.releaseClaims(...args);
  claimMediaJobs: Store['claimMediaJobs'] = (...args) => this.#mediaJobs.claim(...args);
  settleMediaJob: Store['settleMediaJob'] = (...args) => this.#mediaJobs.settle(...args);
  retryMediaJob: Store['retryMediaJob'] = (...args) => this.#mediaJobs.retry(...args);
  purgeFinished: Store['purgeFinished'] = (...args) => this.#retention.purgeFinished(...args);
  listDeliveries: Store['listDeliveries'] = (...args) => this.#log.listDeliveries(...args);
  getDelivery: Store['getDelivery'] = (...args) => this.#log.getDelivery(...args);
  redeliver: Store['redeliver'] = (...args) => this.#log.redeliver(...args);
  redeliverFailed: Store['redeliverFailed'] = (...args) => this.#log.redeliverFailed(...args);
  instanceCounts: Store['instanceCounts'] = (...args) => this.#log.instanceCounts(...args);
  listenForWork: Store['listenForWork'] = (wake) => this.#db.listen(wake);
  rememberEngineEvent: Store['rememberEngineEvent'] = (...args) => this.#repeats.remember(...args);
  phonesOfLids: Store['phonesOfLids'] = (...args) => this.#lidPhones.phonesOf(...args);
  learnLidPhones: Store['learnLidPhones'] = (...args) => this.#lidPhones.learn(...args);

  async close(): Promise<void> {
    await this.#db.close();
  }

  async ping({ write = false } = {}): Promise<void> {
    if (write) await this.#setSetting(this.#db.sql, 'write_probe', String(Date.now()));
    else await this.#db.sql`SELECT 1`;
  }

  async getSetting(name: string): Promise<string | null> {
    const [row] = await this.#db.sql<{ value: string }[]>`SELECT value FROM settings WHERE name = ${name}`;
    return row ? row.value : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    await this.#setSetting(this.#db.sql, name, value);
  }

  async #setSetting(sql: Tx | PostgresDatabase['sql'], name: string, value: string): Promise<void> {
    await sql`
      INSERT INTO settings (name, value) VALUES (${name}, ${value})
      ON CONFLICT (name) DO UPDATE SET value = excluded.value`;
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
      await this.#setSetting(sql, setting.name, setting.value);
      return rows.length + keys.length;
    });
  }

  async createInstance(i: Parameters<Store['createInstance']>[0]): Promise<void> {
    await this.#db.sql`
      INSERT INTO instances (instance_id, name, status, phone, engine_hmac_sealed, created_at)
      VALUES (${i.instance_id}, ${i.name}, ${i.status}, ${i.phone}, ${i.engine_hmac_sealed ?? null},
        ${i.created_at}::bigint)`;
  }

  async updateInstance(instanceId: string, change: InstanceChange) {
    const { name, engine_hmac_sealed: hmac } = change;
    const [row] = await this.#db.sql<Row[]>`
      UPDATE instances SET name = COALESCE(${name ?? null}::text, name),
        engine_hmac_sealed = CASE WHEN ${hmac !== undefined}::boolean THEN ${hmac ?? null}::text
                             ELSE engine_hmac_sealed END
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
      INSERT INTO api_keys (key_id, instance_id, key_hash, created_at)
      VALUES (${k.key_id}, ${k.instance_id}, ${k.key_hash}, ${k.created_at}::bigint)`;
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

  createWebhook: Store['createWebhook'] = (...args) => this.#webhooks.create(...args);
  listWebhooks: Store['listWebhooks'] = (...args) => this.#webhooks.list(...args);
  getWebhook: Store['getWebhook'] = (...args) => this.#webhooks.get(...args);
  updateWebhook: Store['updateWebhook'] = (...args) => this.#webhooks.update(...args);
  setWebhookEnabled: Store['setWebhookEnabled'] = (...args) => this.#webhooks.setEnabled(...args);
  deleteWebhook: Store['deleteWebhook'] = (...args) => this.#webhooks.delete(...args);
  rotateSecret: Store['rotateSecret'] = (...args) => this.#webhooks.rotateSecret(...args);
  forgetRotatedSecrets: Store['forgetRotatedSecrets'] = (...args) =>
    this.#webhooks.forgetRotatedSecrets(...args);
  webhookHealth: Store['webhookHealth'] = (...args) => this.#webhooks.health(...args);
}
