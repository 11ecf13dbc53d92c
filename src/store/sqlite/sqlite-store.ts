/** The embedded store: node:sqlite in WAL mode. Synchronous inside, so each method is one atomic step. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { newId, randomToken } from '../../domain/ids.ts';
import type { EventDraft, Webhook } from '../../domain/types.ts';
import type {
  ApiKey,
  AttemptResult,
  ClaimedDelivery,
  DeliveryDetail,
  DeliveryFilter,
  IngestResult,
  RedeliverRange,
  RedeliverResult,
  Router,
  Store,
  WebhookConfig,
} from '../store.ts';
import { StoreConflict } from '../store.ts';
import { MIGRATIONS } from './migrations.ts';
import { toAttempt, toDelivery, toInstance, toKey, toWebhook } from './rows.ts';

type Row = Record<string, SQLInputValue>;

export class SqliteStore implements Store {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    // FULL: a 202 means the event survives a power loss, not only a process crash.
    this.#db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
    );
    this.#migrate();
  }

  #migrate(): void {
    this.#tx(() => {
      const { user_version } = this.#db.prepare('PRAGMA user_version').get() as { user_version: number };
      for (let v = user_version; v < MIGRATIONS.length; v++) this.#db.exec(MIGRATIONS[v]);
      this.#db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    });
  }

  /** One prepared statement per query text, reused. */
  #q(sql: string): StatementSync {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  #tx<T>(fn: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }

  async ping(): Promise<void> {
    this.#q('SELECT 1').get();
  }

  async getSetting(name: string): Promise<string | null> {
    const row = this.#q('SELECT value FROM settings WHERE name = ?').get(name);
    return row ? (row.value as string) : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.#q(
      'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    ).run(name, value);
  }

  async createInstance(i: Parameters<Store['createInstance']>[0]): Promise<void> {
    this.#q(
      'INSERT INTO instances (instance_id, name, status, phone, created_at) VALUES (?, ?, ?, ?, ?)',
    ).run(i.instance_id, i.name, i.status, i.phone, i.created_at);
  }

  async listInstances() {
    return this.#q('SELECT * FROM instances ORDER BY created_at, instance_id').all().map(toInstance);
  }

  async getInstance(instanceId: string) {
    const row = this.#q('SELECT * FROM instances WHERE instance_id = ?').get(instanceId);
    return row ? toInstance(row) : null;
  }

  async deleteInstance(instanceId: string): Promise<boolean> {
    return this.#tx(() => {
      // Deliveries first, so the cascade does not walk them twice (through events and through webhooks).
      this.#q('DELETE FROM deliveries WHERE instance_id = ?').run(instanceId);
      return this.#q('DELETE FROM instances WHERE instance_id = ?').run(instanceId).changes > 0;
    });
  }

  async createKey(k: ApiKey): Promise<void> {
    this.#q('INSERT INTO api_keys (key_id, instance_id, key_hash, created_at) VALUES (?, ?, ?, ?)').run(
      k.key_id,
      k.instance_id,
      k.key_hash,
      k.created_at,
    );
  }

  async listKeys(instanceId: string) {
    return this.#q('SELECT * FROM api_keys WHERE instance_id = ? ORDER BY created_at')
      .all(instanceId)
      .map(toKey);
  }

  async findKeyByHash(keyHash: string) {
    const row = this.#q('SELECT * FROM api_keys WHERE key_hash = ?').get(keyHash);
    return row ? toKey(row) : null;
  }

  async deleteKey(instanceId: string, keyId: string): Promise<boolean> {
    return (
      this.#q('DELETE FROM api_keys WHERE instance_id = ? AND key_id = ?').run(instanceId, keyId).changes > 0
    );
  }

  async createWebhook(w: Webhook): Promise<void> {
    this.#q(
      `INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
        disabled_reason, disabled_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      w.webhook_id,
      w.instance_id,
      w.destination_url,
      JSON.stringify(w.events),
      w.ignore_status ? 1 : 0,
      w.enabled ? 1 : 0,
      w.secret_sealed,
      w.disabled_reason,
      w.disabled_at,
      w.created_at,
      w.updated_at,
    );
  }

  async listWebhooks(instanceId: string) {
    return this.#webhooksOf(instanceId);
  }

  #webhooksOf(instanceId: string): Webhook[] {
    return this.#q('SELECT * FROM webhooks WHERE instance_id = ? ORDER BY created_at, webhook_id')
      .all(instanceId)
      .map(toWebhook);
  }

  async getWebhook(instanceId: string, webhookId: string) {
    return this.#webhook(instanceId, webhookId);
  }

  #webhook(instanceId: string, webhookId: string): Webhook | null {
    const row = this.#q('SELECT * FROM webhooks WHERE instance_id = ? AND webhook_id = ?').get(
      instanceId,
      webhookId,
    );
    return row ? toWebhook(row) : null;
  }

  async updateWebhook(instanceId: string, webhookId: string, c: WebhookConfig, now: number) {
    const secretSql = c.secret.kind === 'keep' ? 'secret_sealed' : '?';
    const params: SQLInputValue[] = [
      c.destination_url,
      JSON.stringify(c.events),
      c.ignore_status ? 1 : 0,
      now,
    ];
    if (c.secret.kind !== 'keep') params.push(c.secret.kind === 'set' ? c.secret.sealed : null);
    const changed = this.#q(
      `UPDATE webhooks SET destination_url = ?, events = ?, ignore_status = ?, updated_at = ?, secret_sealed = ${secretSql}
       WHERE instance_id = ? AND webhook_id = ?`,
    ).run(...params, instanceId, webhookId).changes;
    return changed ? this.#webhook(instanceId, webhookId) : null;
  }

  async setWebhookEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason = 'disabled',
  ) {
    return this.#tx(() => {
      if (!this.#webhook(instanceId, webhookId)) return null;
      if (enabled) {
        this.#q(
          'UPDATE webhooks SET enabled = 1, disabled_reason = NULL, disabled_at = NULL, updated_at = ? WHERE webhook_id = ?',
        ).run(now, webhookId);
      } else {
        this.#disable(webhookId, reason, now);
      }
      return this.#webhook(instanceId, webhookId);
    });
  }

  /** Disabling ends pending retries (SPEC §6); clearing the lease turns in-flight results into log entries only. */
  #disable(webhookId: string, reason: string, now: number): void {
    this.#q(
      `UPDATE webhooks SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ?
       WHERE webhook_id = ? AND enabled = 1`,
    ).run(reason, now, now, webhookId);
    this.#q(
      `UPDATE deliveries SET status = 'failed', failure_reason = 'webhook_disabled', next_attempt_at = NULL, lease_token = NULL
       WHERE webhook_id = ? AND status = 'pending'`,
    ).run(webhookId);
  }

  async deleteWebhook(instanceId: string, webhookId: string): Promise<boolean> {
    return (
      this.#q('DELETE FROM webhooks WHERE instance_id = ? AND webhook_id = ?').run(instanceId, webhookId)
        .changes > 0
    );
  }

  async ingest(
    instanceId: string,
    events: EventDraft[],
    router: Router,
    now: number,
  ): Promise<IngestResult[]> {
    return this.#tx(() => {
      const webhooks = this.#webhooksOf(instanceId);
      return events.map((e) => this.#ingestOne(e, webhooks, router, now));
    });
  }

  #ingestOne(e: EventDraft, webhooks: Webhook[], router: Router, now: number): IngestResult {
    const seen = this.#q('SELECT instance_id, deliveries FROM events WHERE event_id = ?').get(e.event_id);
    if (seen) {
      if (seen.instance_id !== e.instance_id) {
        throw new StoreConflict(`event_id ${e.event_id} was already published to another instance`);
      }
      return { event_id: e.event_id, deliveries: seen.deliveries as number, duplicate: true };
    }
    // The one serialisation of the body: every attempt to every webhook sends these bytes.
    const body = JSON.stringify({
      event_id: e.event_id,
      event: e.event,
      instance_id: e.instance_id,
      timestamp: e.timestamp,
      payload: e.payload,
    });
    const targets = router(e, webhooks);
    this.#q(
      'INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(e.event_id, e.instance_id, e.event, body, targets.length, now);
    const insert = this.#q(
      `INSERT INTO deliveries (delivery_id, event_id, instance_id, webhook_id, event, status, created_at, next_attempt_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    );
    for (const w of targets)
      insert.run(newId('dlv', now), e.event_id, e.instance_id, w.webhook_id, e.event, now, now);
    if (e.event === 'session.status') {
      const phone = typeof e.payload.phone === 'string' ? e.payload.phone : null;
      this.#q('UPDATE instances SET status = ?, phone = ? WHERE instance_id = ?').run(
        e.payload.status as string,
        phone,
        e.instance_id,
      );
    }
    return { event_id: e.event_id, deliveries: targets.length, duplicate: false };
  }

  async claimDue(now: number, limit: number, leaseMs: number, room: (webhookId: string) => number) {
    return this.#tx(() => {
      const due = this.#q(
        `SELECT d.delivery_id, d.event_id, d.instance_id, d.webhook_id, d.attempts, d.cycle_attempts, d.next_trigger,
                w.destination_url, w.secret_sealed, w.enabled, e.body
         FROM deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id JOIN events e ON e.event_id = d.event_id
         WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY d.next_attempt_at LIMIT ?`,
      );
      const token = randomToken(12);
      const lease = this.#q(
        'UPDATE deliveries SET next_attempt_at = ?, lease_token = ? WHERE delivery_id = ?',
      );
      const taken = new Map<string, number>();
      /** Webhooks out of room in this claim: skipped by the next pass, so their backlog cannot starve the others. */
      const full = new Set<string>();
      const claimed: ClaimedDelivery[] = [];
      for (;;) {
        const want = limit - claimed.length;
        const rows = due.all(now, JSON.stringify([...full]), want);
        for (const r of rows) {
          const webhookId = r.webhook_id as string;
          if (r.enabled !== 1) {
            this.#disable(webhookId, 'disabled', now);
            continue;
          }
          const n = taken.get(webhookId) ?? 0;
          if (n >= room(webhookId)) {
            full.add(webhookId);
            continue;
          }
          taken.set(webhookId, n + 1);
          lease.run(now + leaseMs, token, r.delivery_id as string);
          claimed.push({
            delivery_id: r.delivery_id as string,
            event_id: r.event_id as string,
            instance_id: r.instance_id as string,
            webhook_id: webhookId,
            destination_url: r.destination_url as string,
            secret_sealed: r.secret_sealed as string | null,
            body: r.body as string,
            cycle_attempt: (r.cycle_attempts as number) + 1,
            attempt: (r.attempts as number) + 1,
            trigger: r.next_trigger as ClaimedDelivery['trigger'],
            lease_token: token,
          });
        }
        // Done when nothing more is due or the batch is full; otherwise every pass that stops short has found
        // another full webhook (or failed a disabled one's rows), so this ends.
        if (rows.length < want || claimed.length >= limit) return claimed;
      }
    });
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    this.#tx(() => {
      const log = this.#q(
        `INSERT INTO attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body,
          next_attempt_at, next_attempt_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const apply = this.#q(
        `UPDATE deliveries SET attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, next_trigger = 'scheduled',
           last_attempt_at = ?, last_status_code = ?, last_error = ?, status = ?, next_attempt_at = ?, failure_reason = ?,
           lease_token = NULL
         WHERE delivery_id = ? AND lease_token = ?`,
      );
      for (const { claim, outcome: o, decision: d } of results) {
        const retryAt = d.kind === 'retry' ? d.at : null;
        log.run(
          claim.delivery_id,
          claim.attempt,
          claim.trigger,
          o.started_at,
          o.duration_ms,
          o.status_code,
          o.error,
          o.response_body,
          retryAt,
          d.kind === 'retry' ? d.reason : null,
        );
        const status = d.kind === 'retry' ? 'pending' : d.kind;
        const reason = d.kind === 'failed' ? d.reason : null;
        apply.run(
          o.started_at,
          o.status_code,
          o.error,
          status,
          retryAt,
          reason,
          claim.delivery_id,
          claim.lease_token,
        );
        if (d.kind === 'failed' && d.disableWebhook) this.#disable(claim.webhook_id, 'gone', now);
      }
    });
  }

  async nextDueAt(after: number): Promise<number | null> {
    const row = this.#q(
      "SELECT MIN(next_attempt_at) AS due FROM deliveries WHERE status = 'pending' AND next_attempt_at > ?",
    ).get(after);
    return (row?.due as number | null) ?? null;
  }

  async listDeliveries(instanceId: string, f: DeliveryFilter) {
    const where = ['instance_id = ?'];
    const params: SQLInputValue[] = [instanceId];
    const add = (sql: string, value: SQLInputValue | undefined) => {
      if (value === undefined) return;
      where.push(sql);
      params.push(value);
    };
    add('status = ?', f.status);
    add('webhook_id = ?', f.webhook_id);
    add('event = ?', f.event);
    add('seq < ?', f.cursor === undefined ? undefined : Number(f.cursor));
    const rows = this.#q(
      `SELECT * FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`,
    ).all(...params, f.limit + 1);
    const page = rows.slice(0, f.limit);
    const next_cursor = rows.length > f.limit ? String(page[page.length - 1].seq) : null;
    return { deliveries: page.map(toDelivery), next_cursor };
  }

  async getDelivery(instanceId: string, deliveryId: string): Promise<DeliveryDetail | null> {
    const row = this.#q(
      `SELECT d.*, e.body FROM deliveries d JOIN events e ON e.event_id = d.event_id
       WHERE d.instance_id = ? AND d.delivery_id = ?`,
    ).get(instanceId, deliveryId);
    if (!row) return null;
    const attempts = this.#q('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt, started_at').all(
      deliveryId,
    );
    return { ...toDelivery(row), request_body: row.body as string, attempts_log: attempts.map(toAttempt) };
  }

  async redeliver(instanceId: string, deliveryId: string, now: number): Promise<RedeliverResult> {
    return this.#tx(() => {
      const row = this.#q(
        `SELECT d.status, d.webhook_id, w.enabled FROM deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id
         WHERE d.instance_id = ? AND d.delivery_id = ?`,
      ).get(instanceId, deliveryId) as Row | undefined;
      if (!row) return null;
      if (row.status !== 'failed') {
        return {
          ok: false,
          conflict: `delivery is ${row.status}; only failed deliveries can be redelivered`,
        };
      }
      if (row.enabled !== 1) {
        return {
          ok: false,
          conflict: `webhook ${row.webhook_id} is disabled; enable it before redelivering`,
        };
      }
      this.#q(`${RESTART} WHERE delivery_id = ?`).run(now, deliveryId);
      const updated = this.#q('SELECT * FROM deliveries WHERE delivery_id = ?').get(deliveryId) as Row;
      return { ok: true, delivery: toDelivery(updated) };
    });
  }

  async redeliverFailed(instanceId: string, range: RedeliverRange, now: number): Promise<number> {
    const where = [
      'instance_id = ?',
      "status = 'failed'",
      'webhook_id IN (SELECT webhook_id FROM webhooks WHERE instance_id = ? AND enabled = 1)',
    ];
    const params: SQLInputValue[] = [now, instanceId, instanceId];
    if (range.webhook_id !== undefined) {
      where.push('webhook_id = ?');
      params.push(range.webhook_id);
    }
    if (range.since !== undefined) {
      where.push('created_at >= ?');
      params.push(range.since);
    }
    if (range.until !== undefined) {
      where.push('created_at < ?');
      params.push(range.until);
    }
    return Number(this.#q(`${RESTART} WHERE ${where.join(' AND ')}`).run(...params).changes);
  }
}

/** A manual redelivery: a fresh cycle of attempts, the first at once and marked manual (SPEC §8). */
const RESTART = `UPDATE deliveries SET status = 'pending', cycle_attempts = 0, next_trigger = 'manual', next_attempt_at = ?,
  failure_reason = NULL, lease_token = NULL`;
