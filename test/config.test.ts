import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration (SPEC §1)', () => {
  test('defaults match the table', () => {
    const c = loadConfig({});
    assert.deepEqual(
      {
        port: c.port,
        host: c.host,
        dataDir: c.dataDir,
        databaseUrl: c.databaseUrl,
        adminApiKey: c.adminApiKey,
        secretKey: c.secretKey,
        publicUrl: c.publicUrl,
        retrySchedule: c.retrySchedule,
        deliveryTimeoutMs: c.deliveryTimeoutMs,
        maxRetryAfterS: c.maxRetryAfterS,
        allowPrivateDestinations: c.allowPrivateDestinations,
        retentionDays: c.retentionDays,
        logLevel: c.logLevel,
      },
      {
        port: 8080,
        host: '127.0.0.1',
        dataDir: './data',
        databaseUrl: null,
        adminApiKey: null,
        secretKey: null,
        publicUrl: null,
        retrySchedule: [5, 10, 20, 40, 80],
        deliveryTimeoutMs: 8000,
        maxRetryAfterS: 3600,
        allowPrivateDestinations: false,
        retentionDays: 14,
        logLevel: 'info',
      },
    );
  });

  test('every variable is read', () => {
    const hexKey = 'ab'.repeat(32);
    const c = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      DATA_DIR: '/var/lib/herald',
      DATABASE_URL: 'postgres://u@db/herald',
      ADMIN_API_KEY: 'an-admin-key-of-some-length',
      SECRET_KEY: hexKey,
      PUBLIC_URL: 'https://hooks.example.com/',
      RETRY_SCHEDULE: '1, 2,3.5',
      DELIVERY_TIMEOUT_MS: '2000',
      MAX_RETRY_AFTER_S: '60',
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      RETENTION_DAYS: '3',
      LOG_LEVEL: 'debug',
    });
    assert.equal(c.port, 0);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.dataDir, '/var/lib/herald');
    assert.equal(c.databaseUrl, 'postgres://u@db/herald');
    assert.equal(c.adminApiKey, 'an-admin-key-of-some-length');
    assert.deepEqual(c.secretKey, Buffer.from(hexKey, 'hex'));
    assert.equal(c.publicUrl, 'https://hooks.example.com');
    assert.deepEqual(c.retrySchedule, [1, 2, 3.5]);
    assert.equal(c.deliveryTimeoutMs, 2000);
    assert.equal(c.maxRetryAfterS, 60);
    assert.equal(c.allowPrivateDestinations, true);
    assert.equal(c.retentionDays, 3);
    assert.equal(c.logLevel, 'debug');
  });

  test('the safety limits have defaults and are read', () => {
    const d = loadConfig({});
    assert.deepEqual(
      [d.allowedDestinationCidrs, d.rateLimitIngest, d.rateLimitManagement, d.maxWebhooksPerInstance],
      [[], 1000, 100, 100],
    );
    const c = loadConfig({
      ALLOWED_DESTINATION_CIDRS: '10.1.0.0/16,fd00::/8',
      RATE_LIMIT_INGEST: '0',
      RATE_LIMIT_MANAGEMENT: '5',
      MAX_WEBHOOKS_PER_INSTANCE: '3',
    });
    assert.deepEqual(c.allowedDestinationCidrs, [
      { address: '10.1.0.0', prefix: 16, family: 4 },
      { address: 'fd00::', prefix: 8, family: 6 },
    ]);
    assert.deepEqual([c.rateLimitIngest, c.rateLimitManagement, c.maxWebhooksPerInstance], [0, 5, 3]);
  });

  test('SECRET_KEY may be base64', () => {
    const key = Buffer.alloc(32, 7);
    assert.deepEqual(loadConfig({ SECRET_KEY: key.toString('base64') }).secretKey, key);
  });

  test('the portal: origins that may frame it, its title and accent; none, "Herald" and none by default', () => {
    const set = loadConfig({
      PORTAL_FRAME_ANCESTORS: ' https://app.example.com  https://*.example.org:8443 ',
      PORTAL_TITLE: 'Acme hooks',
      PORTAL_ACCENT: '#0A7C59',
      PORTAL_MAX_LINKS: '5',
    });
    assert.deepEqual(set.portal, {
      frameAncestors: ['https://app.example.com', 'https://*.example.org:8443'],
      title: 'Acme hooks',
      accent: '#0a7c59',
      maxLinks: 5,
    });
    assert.deepEqual(loadConfig({}).portal, {
      frameAncestors: [],
      title: 'Herald',
      accent: null,
      maxLinks: 100,
    });
    assert.throws(() => loadConfig({ PORTAL_MAX_LINKS: '0' }), /PORTAL_MAX_LINKS: must be an integer from 1/);
  });

  test('failed authentications: 30 per address and minute by default, 0 turns the limit off', () => {
    assert.equal(loadConfig({}).authFailuresPerMin, 30);
    assert.equal(loadConfig({ AUTH_FAILURES_PER_MIN: '0' }).authFailuresPerMin, 0);
    assert.throws(
      () => loadConfig({ AUTH_FAILURES_PER_MIN: 'many' }),
      /AUTH_FAILURES_PER_MIN: must be an integer/,
    );
  });

  test('TRUST_PROXY: addresses, CIDRs and range names as Fastify takes them; none by default', () => {
    assert.deepEqual(loadConfig({}).trustProxy, []);
    assert.deepEqual(loadConfig({ TRUST_PROXY: ' 10.0.0.5, 10.1.0.0/16 ,fd00::/8,loopback' }).trustProxy, [
      '10.0.0.5',
      '10.1.0.0/16',
      'fd00::/8',
      'loopback',
    ]);
    for (const bad of ['true', 'proxy.internal', '10.0.0.0/33'])
      assert.throws(
        () => loadConfig({ TRUST_PROXY: bad }),
        new RegExp(`TRUST_PROXY: "${bad.replace(/\./g, '\\.')}" is not`),
      );
  });

  test('operational events: the operator destination, FAILING_AFTER 20 and DISABLE_AFTER_FAILING_S unset by default', () => {
    const none = loadConfig({});
    assert.equal(none.operator, null);
    assert.deepEqual(none.failing, { failingAfter: 20, disableAfterFailingMs: null });
    const set = loadConfig({
      OPERATOR_WEBHOOK_URL: 'https://ops.example.com/herald',
      OPERATOR_WEBHOOK_SECRET: 'ops-secret',
      FAILING_AFTER: '5',
      DISABLE_AFTER_FAILING_S: '3600',
    });
    assert.deepEqual(set.operator, { url: 'https://ops.example.com/herald', secret: 'ops-secret' });
    assert.deepEqual(set.failing, { failingAfter: 5, disableAfterFailingMs: 3_600_000 });
  });

  test('a bad value is refused with a message naming the variable', () => {
    const cases: [string, string][] = [
      ['PORT', '80a'],
      ['PORT', '70000'],
      ['DATABASE_URL', 'mysql://x'],
      ['ADMIN_API_KEY', 'short'],
      ['SECRET_KEY', 'c2hvcnQ='],
      ['PUBLIC_URL', 'not a url'],
      ['RETRY_SCHEDULE', '5,,10'],
      ['RETRY_SCHEDULE', '5,-1'],
      ['DELIVERY_TIMEOUT_MS', '0'],
      ['MAX_RETRY_AFTER_S', 'hour'],
      ['ALLOW_PRIVATE_DESTINATIONS', 'maybe'],
      ['RETENTION_DAYS', '0'],
      ['ALLOWED_DESTINATION_CIDRS', '10.0.0.0/33'],
      ['ALLOWED_DESTINATION_CIDRS', 'intranet.example'],
      ['RATE_LIMIT_INGEST', '-1'],
      ['RATE_LIMIT_MANAGEMENT', 'fast'],
      ['MAX_WEBHOOKS_PER_INSTANCE', '0'],
      ['LOG_LEVEL', 'loud'],
      ['PORTAL_FRAME_ANCESTORS', 'https://app.example.com/embed'],
      ['PORTAL_FRAME_ANCESTORS', "'self'"],
      ['PORTAL_TITLE', 'x'.repeat(101)],
      ['PORTAL_ACCENT', 'indigo'],
      ['OPERATOR_WEBHOOK_URL', 'ftp://ops.example.com/'],
      ['OPERATOR_WEBHOOK_URL', 'https://user:pw@ops.example.com/'],
      ['OPERATOR_WEBHOOK_SECRET', 'alone-without-a-url'],
      ['FAILING_AFTER', '0'],
      ['DISABLE_AFTER_FAILING_S', 'an hour'],
    ];
    for (const [name, value] of cases) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err instanceof ConfigError && err.message.startsWith(`${name}:`),
        `${name}=${value}`,
      );
    }
  });
});
