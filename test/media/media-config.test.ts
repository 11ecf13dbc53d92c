/** MEDIA_MAX_BYTES, MEDIA_TTL and MEDIA_STORE (issue 8): defaults, parsing, and the TTL's lower bound. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { retryHorizonMs } from '../../src/domain/retry-horizon.ts';

describe('media configuration', () => {
  test('defaults: 64 MiB, 24 h, the data directory', () => {
    const c = loadConfig({});
    assert.equal(c.mediaMaxBytes, 64 * 1024 * 1024);
    assert.equal(c.mediaTtlMs, 24 * 3600_000);
    assert.deepEqual(c.mediaStore, { kind: 'fs' });
  });

  test('MEDIA_TTL takes seconds or a unit; MEDIA_MAX_BYTES bytes', () => {
    assert.equal(loadConfig({ MEDIA_TTL: '90000' }).mediaTtlMs, 90_000_000);
    assert.equal(loadConfig({ MEDIA_TTL: '7d' }).mediaTtlMs, 7 * 86_400_000);
    assert.equal(loadConfig({ MEDIA_TTL: '600m' }).mediaTtlMs, 36_000_000);
    assert.equal(loadConfig({ MEDIA_MAX_BYTES: '1048576' }).mediaMaxBytes, 1048576);
    assert.throws(
      () => loadConfig({ MEDIA_TTL: '1 day' }),
      /^Error: MEDIA_TTL: must be seconds or a duration/,
    );
    assert.throws(
      () => loadConfig({ MEDIA_MAX_BYTES: '64MiB' }),
      /^Error: MEDIA_MAX_BYTES: must be an integer/,
    );
    assert.throws(() => loadConfig({ MEDIA_MAX_BYTES: '0' }), ConfigError);
  });

  test('the retry horizon: every wait stretched to MAX_RETRY_AFTER_S, every attempt timing out', () => {
    // Defaults: 5 waits of up to 3600 s (a 429 each time) + 6 attempts of 8 s = 18048 s.
    assert.equal(
      retryHorizonMs({ schedule: [5, 10, 20, 40, 80], maxRetryAfterS: 3600, deliveryTimeoutMs: 8000 }),
      18_048_000,
    );
    // Without Retry-After stretching, the schedule itself: 155 s + 48 s.
    assert.equal(
      retryHorizonMs({ schedule: [5, 10, 20, 40, 80], maxRetryAfterS: 0, deliveryTimeoutMs: 8000 }),
      203_000,
    );
  });

  test('MEDIA_TTL shorter than the retry horizon stops the start, naming the rule', () => {
    assert.throws(
      () => loadConfig({ MEDIA_TTL: '5h' }),
      (err: Error) =>
        err instanceof ConfigError &&
        /^MEDIA_TTL: must be at least the retry horizon, 18048 s \(.*MAX_RETRY_AFTER_S.*\), got 18000 s$/.test(
          err.message,
        ),
    );
    assert.equal(loadConfig({ MEDIA_TTL: '18048' }).mediaTtlMs, 18_048_000);
    // A shorter schedule allows a shorter TTL.
    assert.equal(
      loadConfig({
        MEDIA_TTL: '60',
        MAX_RETRY_AFTER_S: '0',
        RETRY_SCHEDULE: '1,1',
        DELIVERY_TIMEOUT_MS: '1000',
      }).mediaTtlMs,
      60_000,
    );
  });

  test('MEDIA_STORE=s3://bucket/prefix with the AWS variables; path-style at a custom endpoint', () => {
    assert.deepEqual(
      loadConfig({ MEDIA_STORE: 's3://herald-media/prod/files/', AWS_REGION: 'eu-central-1' }).mediaStore,
      {
        kind: 's3',
        bucket: 'herald-media',
        prefix: 'prod/files/',
        endpoint: null,
        region: 'eu-central-1',
        pathStyle: false,
      },
    );
    const minio = loadConfig({
      MEDIA_STORE: 's3://media',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
    }).mediaStore;
    assert.deepEqual(minio, {
      kind: 's3',
      bucket: 'media',
      prefix: '',
      endpoint: 'http://127.0.0.1:9000',
      region: 'us-east-1',
      pathStyle: true,
    });
    const forced = loadConfig({
      MEDIA_STORE: 's3://media',
      AWS_ENDPOINT_URL: 'https://r2.example.com',
      MEDIA_S3_PATH_STYLE: 'false',
    });
    assert.equal(forced.mediaStore.kind === 's3' && forced.mediaStore.pathStyle, false);
    for (const bad of ['/var/media', 's3://', 's3://Bad_Bucket/x', 'gs://bucket']) {
      assert.throws(
        () => loadConfig({ MEDIA_STORE: bad }),
        /^Error: MEDIA_STORE: must be s3:\/\/bucket\/prefix/,
      );
    }
  });

  test('ENGINE_MEDIA_PREFIXES: comma-separated http(s) URL prefixes, each checked at start-up', () => {
    assert.deepEqual(loadConfig({}).engineMediaPrefixes, []);
    assert.deepEqual(
      loadConfig({ ENGINE_MEDIA_PREFIXES: 'http://waha:3000/api/files/, https://files.example/waha' })
        .engineMediaPrefixes,
      ['http://waha:3000/api/files/', 'https://files.example/waha'],
    );
    for (const [bad, rule] of [
      ['waha:3000/api/files/', 'must be an absolute http or https URL'],
      ['ftp://waha/api/files/', 'must be an absolute http or https URL'],
      ['http://key@waha:3000/api/files/', 'must not contain user information'],
      ['http://waha:3000/api/files/?session=a', 'must not have a query or fragment'],
      ['http://waha:3000/api/files/../', 'must not have a "." or ".." segment in its path'],
    ]) {
      assert.throws(
        () => loadConfig({ ENGINE_MEDIA_PREFIXES: `http://ok/files/,${bad}` }),
        (err: Error) =>
          err instanceof ConfigError &&
          err.message ===
            `ENGINE_MEDIA_PREFIXES: "${bad}" is not a URL prefix such as http://waha:3000/api/files/: it ${rule}`,
        bad,
      );
    }
  });

  test('ENGINE_MEDIA_HEADERS without ENGINE_MEDIA_PREFIXES stops the start, saying what to set', () => {
    assert.throws(
      () => loadConfig({ ENGINE_MEDIA_HEADERS: 'X-Api-Key: k' }),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message ===
          'ENGINE_MEDIA_HEADERS: set without ENGINE_MEDIA_PREFIXES; set ENGINE_MEDIA_PREFIXES to where the engine ' +
            'serves its files (e.g. ENGINE_MEDIA_PREFIXES=http://waha:3000/api/files/): the headers are sent there ' +
            'and nowhere else',
    );
    const c = loadConfig({
      ENGINE_MEDIA_HEADERS: 'X-Api-Key: k',
      ENGINE_MEDIA_PREFIXES: 'http://waha:3000/api/files/',
    });
    assert.deepEqual(c.engineMediaHeaders, { 'x-api-key': 'k' });
  });
});
