/**
 * Starts a real Herald (in-process, real HTTP, real SQLite file in a temp dir) for integration tests. With
 * HERALD_TEST_STORE=postgres (the second pass of `npm test`) it runs on PostgreSQL, in a schema of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Herald, type HeraldOptions, startHerald } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { dropSchema, ensureSchema, onPostgres, schemaFor } from './postgres.ts';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

/** What every Herald under test runs with, in process or as a child, before a test's own variables. */
export const TEST_ENV = {
  PORT: '0',
  ADMIN_API_KEY: ADMIN_KEY,
  ALLOW_PRIVATE_DESTINATIONS: 'true',
  // Tests fire requests far faster than a client should; test/api/rate-limit.test.ts sets its own limits.
  RATE_LIMIT_INGEST: '0',
  RATE_LIMIT_MANAGEMENT: '0',
  // Tests provoke 401s by the dozen from one address; test/api/auth-failures.test.ts sets its own limit.
  AUTH_FAILURES_PER_MIN: '0',
};

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, with the given content type (default application/json). */
  rawBody?: string | Uint8Array;
  contentType?: string;
  /** API key; default the admin key, null for none. */
  key?: string | null;
  /** Further request headers. */
  headers?: Record<string, string>;
}

export interface TestHerald {
  url: string;
  dataDir: string;
  herald: Herald;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  createInstance(name?: string): Promise<string>;
  /** Creates a webhook and (by default) enables it; returns its id. */
  createWebhook(instanceId: string, body: Record<string, unknown>, enable?: boolean): Promise<string>;
  publish(instanceId: string, event: Record<string, unknown>): Promise<Reply>;
  close(options?: { keepData?: boolean }): Promise<void>;
}

export async function startTestHerald(
  env: Record<string, string> = {},
  options: HeraldOptions & { dataDir?: string } = {},
): Promise<TestHerald> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'herald-test-'));
  const config = loadConfig({
    ...TEST_ENV,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ...(onPostgres ? { DATABASE_URL: await ensureSchema(schemaFor(dataDir)) } : {}),
    ...env,
  });
  const herald = await startHerald(config, options);

  const request = (method: string, path: string, o?: RequestOptions) =>
    apiRequest(herald.url, method, path, o);

  function expectStatus(reply: Reply, status: number, what: string): Reply {
    if (reply.status !== status)
      throw new Error(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply;
  }

  return {
    url: herald.url,
    dataDir,
    herald,
    request,
    async createInstance(name = 'test') {
      const r = expectStatus(await request('POST', '/instances', { body: { name } }), 201, 'create instance');
      return r.body.instance_id;
    },
    async createWebhook(instanceId, body, enable = true) {
      const r = expectStatus(
        await request('POST', `/instances/${instanceId}/webhooks`, { body }),
        201,
        'create webhook',
      );
      const id = r.body.webhook_id as string;
      if (enable) {
        expectStatus(
          await request('POST', `/instances/${instanceId}/webhooks/${id}/enabled`, {
            body: { enabled: true },
          }),
          200,
          'enable webhook',
        );
      }
      return id;
    },
    async publish(instanceId, event) {
      return request('POST', `/instances/${instanceId}/events`, { body: event });
    },
    async close({ keepData = false } = {}) {
      await herald.close();
      if (keepData) return;
      rmSync(dataDir, { recursive: true, force: true });
      if (onPostgres) await dropSchema(schemaFor(dataDir));
    },
  };
}

/** One API call with a key (admin by default), the answer parsed as JSON when it is JSON. */
export async function apiRequest(
  baseUrl: string,
  method: string,
  path: string,
  o: RequestOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  const key = o.key === undefined ? ADMIN_KEY : o.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Uint8Array | undefined;
  if (o.rawBody !== undefined) body = o.rawBody;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Polls `check` until it returns a value other than undefined, failing after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A sample incoming message payload (seed §2.3). */
export function messagePayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'false_491701234567@c.us_3EB0C767D26A',
    from: '491701234567@c.us',
    from_phone: '491701234567',
    fromMe: false,
    body: 'Hello',
    hasMedia: false,
    ...overrides,
  };
}
