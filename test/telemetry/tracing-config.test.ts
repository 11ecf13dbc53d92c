/** The OTEL_* variables as tracing reads them: off without an endpoint, the standard defaults, bad values named. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { tracingConfig } from '../../src/telemetry/tracing-config.ts';

const read = (env: Record<string, string>) => tracingConfig((name) => env[name]);

test('off unless an OTLP endpoint is set, or when the SDK or the exporter is disabled', () => {
  assert.equal(read({}), null);
  assert.equal(read({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), null);
  assert.equal(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }), null);
  assert.equal(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }), null);
  assert.equal(loadConfig({}).tracing, null);
});

test('the standard defaults: /v1/traces under the endpoint, protobuf, parent-based always on, service herald', () => {
  assert.deepEqual(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), {
    url: 'http://collector:4318/v1/traces',
    protocol: 'http/protobuf',
    sampler: 'parentbased_always_on',
    ratio: 1,
    resource: { 'service.name': 'herald' },
    scheduleDelayMs: 5000,
    maxQueueSize: 2048,
  });
});

test('the traces endpoint as given, the signal protocol first, the sampler and resource attributes', () => {
  const c = read({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/traces',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes, deployment.environment=prod,team=a%2Cb',
  });
  assert.ok(c && !('error' in c));
  assert.equal(c.url, 'https://tempo.example/otlp/traces');
  assert.equal(c.protocol, 'http/json');
  assert.equal(c.sampler, 'parentbased_traceidratio');
  assert.equal(c.ratio, 0.25);
  assert.deepEqual(c.resource, {
    'service.name': 'from-attributes',
    'deployment.environment': 'prod',
    team: 'a,b',
  });
  const named = read({
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
    OTEL_SERVICE_NAME: 'edge',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=x',
  });
  assert.equal(
    named && !('error' in named) && named.resource['service.name'],
    'edge',
    'OTEL_SERVICE_NAME wins',
  );
});

test('a bad value refuses to start, naming the variable and the rule', () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/],
    [
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c' },
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /grpc is not supported/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_SAMPLER: 'sometimes' },
      /^OTEL_TRACES_SAMPLER: must be one of/,
    ],
    [
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '2',
      },
      /^OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_RESOURCE_ATTRIBUTES: 'novalue' },
      /^OTEL_RESOURCE_ATTRIBUTES: "novalue" is not key=value/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_BSP_SCHEDULE_DELAY: 'soon' },
      /^OTEL_BSP_SCHEDULE_DELAY: must be a whole number/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'zipkin' },
      /^OTEL_TRACES_EXPORTER: must be otlp or none/,
    ],
  ];
  for (const [env, message] of bad) {
    assert.throws(
      () => loadConfig(env),
      (err: Error) => err instanceof ConfigError && message.test(err.message),
      JSON.stringify(env),
    );
  }
});
