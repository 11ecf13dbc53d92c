import { LeaseTokens } from '../../domain/ids.ts';
import { toInstance, toKey } from '../rows.ts';
import type { ApiKey, InstanceChange, Store } from '../store.ts';
import { SqliteClaims } from './claims.ts';
import { SqliteDatabase } from './database.ts';
import { SqliteDeliveryLog } from './delivery-log.ts';
import { SqliteEngineRepeats } from './engine-repeats.ts';
import { Leases } from './leases.ts';
import { SqliteLidPhones } from './lid-phones.ts';
import { SqliteMediaJobs } from './media-jobs.ts';
import { SqliteOutcomes } from './outcomes.ts';
import { SqliteQueue } from './queue.ts';
import { SqliteRetention } from './retention.ts';
import { SqliteWebhooks } from './webhooks.ts';

export class SqliteStore implements Store {
  readonly #db: SqliteDatabase;
  readonly #queue: SqliteQueue;
  readonly #claims: SqliteClaims;
  readonly #outcomes: SqliteOutcomes;
  readonly #log: SqliteDeliveryLog;
  readonly #retention: SqliteRetention;
  readonly #mediaJobs: SqliteMediaJobs;
  readonly #webhooks: SqliteWebhooks;
  readonly #repeats: SqliteEngineRepeats;
  readonly #lidPhones: SqliteLidPhones;

  constructor(file: string) {
    this.#db = new SqliteDatabase(file);
    // Ingest, claims and outcomes share this process's leases: one process owns the database.
    const leases = new Leases();
    const tokens = new LeaseTokens();
    this.#queue = new SqliteQueue(this.#db, leases, tokens);
    this.#claims = new SqliteClaims(this.#db, leases, tokens);
    this.#outcomes = new SqliteOutcomes(
      this.#db,
      leases,
      (changes) => this.#webhooks.applyHealth(changes),
      (...args) => this.#queue.disable(...args),
    );
    this.#webhooks = new SqliteWebhooks(this.#db, (...args) => this.#queue.disable(...args));
    this.#log = new SqliteDeliveryLog(this.#db);
    this.#retention = new SqliteRetention(this.#db);
    this.#mediaJobs = new SqliteMediaJobs(this.#db);
    this.#repeats = new SqliteEngineRepeats(this.#db);
    this.#lidPhones = new SqliteLidPhones(this.#db);
  }

  ingest: Store['ingest'] = (...args) => this.#queue.ingest(...args);
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
  listenForWork: Store['listenForWork'] = async (wake) => this.#db.listen(wake);
  rememberEngineEvent: Store['rememberEngineEvent'] = (...args) => this.#repeats.remember(...args);
  phonesOfLids: Store['phonesOfLids'] = (...args) => this.#lidPhones.phonesOf(...args);
  learnLidPhones: Store['learnLidPhones'] = (...args) => this.#lidPhones.learn(...args);

  async close(): Promise<void> {
    await this.#db.close();
  }

  async ping({ write = false } = {}): Promise<void> {
    this.#db.q('SELECT 1').get();
    // A row rewritten and flushed: a full disk fails it as it fails every other write.
    if (write) await this.#db.durableTx(() => this.#setSetting('write_probe', String(Date.now())));
  }

  async getSetting(name: string): Promise<string | null> {
    const row = this.#db.q('SELECT value FROM settings WHERE name = ?').get(name);
    return row ? (row.value as string) : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.#setSetting(name, value);
  }

  #setSetting(name: string, value: string): void {
    this.#db
      .q(
        'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      )
      .run(name, value);
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
      this.#setSetting(setting.name, setting.value);
      return rows.length + keys.length;
    });
  }

  async createInstance(i: Parameters<Store['createInstance']>[0]): Promise<void> {
    this.#db
      .q(
        `INSERT INTO instances (instance_id, name, status, phone, engine_hmac_sealed, created_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(i.instance_id, i.name, i.status, i.phone, i.engine_hmac_sealed ?? null, i.created_at);
  }

  async updateInstance(instanceId: string, change: InstanceChange) {
    const { name, engine_hmac_sealed: hmac } = change;
    this.#db
      .q(
        `UPDATE instances SET name = COALESCE(?, name),
           engine_hmac_sealed = CASE WHEN ? THEN ? ELSE engine_hmac_sealed END
         WHERE instance_id = ?`,
      )
      .run(name ?? null, hmac === undefined ? 0 : 1, hmac ?? null, instanceId);
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
      .q('INSERT INTO api_keys (key_id, instance_id, key_hash, created_at) VALUES (?, ?, ?, ?)')
      .run(k.key_id, k.instance_id, k.key_hash, k.created_at);
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
