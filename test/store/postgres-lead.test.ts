/**
 * The work channel's lead on PostgreSQL: of several workers on one database, one answers notifications of new
 * deliveries, so that a trickle is claimed once rather than once per worker; the others wake for media jobs only,
 * for a lead's full claim (a backlog is shared as before), and take the lead when its holder is gone. Each store
 * here is its own pool and listening connection, as a process has; the API's store only ingests.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import type { EventDraft } from '../../src/domain/types.ts';
import { openPostgresStore } from '../../src/store/open/postgres.ts';
import type { Store } from '../../src/store/ports.ts';
import type { Work } from '../../src/store/records.ts';
import { eventually } from '../support/herald.ts';
import { DATABASE_URL, dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { webhookRecord } from '../support/records.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);
const LEASE = 60_000;
let n = 0;
const id = (prefix: string) => `${prefix}_lead${String(++n).padStart(22, '0')}`;

/** What a store's listener woke its process for: `all` (the dispatcher and media jobs) or `media` only. */
class Wakes {
  readonly seen: ('all' | 'media')[] = [];
  readonly wake = (work?: Work) => {
    this.seen.push(work === 'media' ? 'media' : 'all');
  };
  clear(): void {
    this.seen.length = 0;
  }
  count(kind: 'all' | 'media'): number {
    return this.seen.filter((w) => w === kind).length;
  }
}

/** Waits until `check` holds (the project's `eventually`, for a synchronous check). */
const until = (check: () => boolean, what: string, timeoutMs = 5000) =>
  eventually(async () => (check() ? true : undefined), timeoutMs, what);

describe('postgres: one worker leads the work channel', { skip: postgresSkip }, () => {
  const schemas: string[] = [];
  const opened: Store[] = [];
  after(async () => {
    await Promise.all(opened.map((s) => s.close().catch(() => {})));
    for (const s of schemas) await dropSchema(s);
  });

  async function schema(): Promise<string> {
    const { schema, url } = await scratchSchema();
    schemas.push(schema);
    return url;
  }
  async function store(url: string): Promise<Store> {
    const s = await openPostgresStore(url);
    opened.push(s);
    return s;
  }
  /** A worker's store, listening: the first of a schema to listen leads. */
  async function worker(url: string): Promise<{ store: Store; wakes: Wakes }> {
    const s = await store(url);
    const wakes = new Wakes();
    await s.listenForWork(wakes.wake);
    return { store: s, wakes };
  }
  async function instance(api: Store): Promise<string> {
    const ins = id('ins');
    await api.catalog.createInstance({
      instance_id: ins,
      name: 'x',
      status: 'STOPPED',
      phone: null,
      created_at: T0,
    });
    await api.webhooks.createWebhook(webhookRecord({ webhook_id: id('whk'), instance_id: ins }, T0));
    return ins;
  }
  /** The API's store with an instance and its webhook, and two workers on a fresh schema: `a` (at `aUrl`) leads. */
  async function workers(aUrl = (url: string) => url) {
    const url = await schema();
    const api = await store(url);
    const a = await worker(aUrl(url));
    const b = await worker(url);
    return { api, a, b, ins: await instance(api) };
  }
  const draft = (ins: string): EventDraft => {
    const e = { event_id: id('evt'), event: 'presence.update', instance_id: ins, timestamp: T0, payload: {} };
    return { ...e, body: eventBody(e) };
  };
  /** Ingests one event through the API's store and waits until both workers heard of it. */
  async function ingestHeard(api: Store, ins: string, lead: Wakes, other: Wakes): Promise<void> {
    lead.clear();
    other.clear();
    await api.events.ingest(ins, [draft(ins)], route, T0);
    await until(() => lead.seen.length > 0 && other.seen.length > 0, 'both workers to hear of the ingest');
  }

  test('new deliveries wake the lead dispatcher only; media jobs wake on every worker', async () => {
    const { api, a, b, ins } = await workers();
    await ingestHeard(api, ins, a.wakes, b.wakes);
    assert.deepEqual(a.wakes.seen, ['all'], 'the first to listen leads: its dispatcher is woken');
    assert.deepEqual(b.wakes.seen, ['media'], 'the other is woken for media jobs, not to claim');
  });

  test('when the lead closes, another worker takes it within about a second and is woken at once', async () => {
    const { api, a, b, ins } = await workers();
    b.wakes.clear();
    await a.store.close();
    const closedAt = performance.now();
    await until(() => b.wakes.count('all') > 0, 'the second worker to take the lead', 4000);
    const tookMs = performance.now() - closedAt;
    assert.ok(tookMs < 2500, `took the lead after ${Math.round(tookMs)} ms`);
    b.wakes.clear();
    await api.events.ingest(ins, [draft(ins)], route, T0);
    await until(() => b.wakes.seen.length > 0, 'the new lead to hear of the ingest');
    assert.deepEqual(b.wakes.seen, ['all'], 'the new lead is woken for new deliveries');
  });

  test('a lead whose connection is cut hands the lead on, and follows when it is back', async () => {
    const proxy = await TcpProxy.start({
      host: '127.0.0.1',
      port: Number(new URL(DATABASE_URL as string).port || 5432),
    });
    after(() => proxy.close());
    const { api, a, b, ins } = await workers((url) => {
      const viaProxy = new URL(url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      return viaProxy.toString();
    });
    await ingestHeard(api, ins, a.wakes, b.wakes);
    assert.deepEqual([a.wakes.seen, b.wakes.seen], [['all'], ['media']], 'the worker behind the proxy leads');

    b.wakes.clear();
    await proxy.refuse();
    await until(() => b.wakes.count('all') > 0, 'the other worker to take the lead', 4000);
    await proxy.accept();
    // Back, it listens again (a wake-up, since notifications were lost meanwhile), and follows.
    a.wakes.clear();
    await until(() => a.wakes.seen.length > 0, 'the cut worker to listen again', 10_000);
    await ingestHeard(api, ins, b.wakes, a.wakes);
    assert.deepEqual(b.wakes.seen, ['all'], 'the lead stays where it went');
    assert.deepEqual(a.wakes.seen, ['media'], 'the worker that was cut follows');
  });

  test("the lead's full claim wakes every dispatcher; a claim with room to spare, or a follower's, does not", async () => {
    const { api, a, b, ins } = await workers();
    await api.events.ingest(ins, [draft(ins), draft(ins), draft(ins), draft(ins)], route, T0);
    await until(() => b.wakes.count('media') > 0, 'the follower to hear of the ingest');

    b.wakes.clear();
    assert.equal((await a.store.claims.claimDue(T0, 1, LEASE, () => 10)).length, 1);
    await until(() => b.wakes.count('all') > 0, "the lead's full claim to wake the follower's dispatcher");

    b.wakes.clear();
    assert.equal(
      (await b.store.claims.claimDue(T0, 1, LEASE, () => 10)).length,
      1,
      "the follower's claim is full",
    );
    assert.equal(
      (await a.store.claims.claimDue(T0, 10, LEASE, () => 10)).length,
      2,
      'the lead takes the rest',
    );
    // Notifications arrive in commit order: one the claims sent would come before the ingest's.
    await api.events.ingest(ins, [draft(ins)], route, T0);
    await until(() => b.wakes.count('media') > 0, 'the follower to hear of the ingest');
    assert.deepEqual(b.wakes.seen, ['media'], 'neither claim called the follower: only the ingest was heard');
  });
});
