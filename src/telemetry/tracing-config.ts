/**
 * Tracing's configuration from the standard OTEL_* variables, read as every OpenTelemetry SDK reads them. Pure: a
 * bad value comes back as words naming the variable (config.ts throws them as a ConfigError). Tracing is off unless
 * an OTLP endpoint is set. The exporter's own variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION,
 * _CERTIFICATE…) are left to the exporter, which reads them itself.
 */

export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number];

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  /** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: TraceProtocol;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  ratio: number;
  /** Resource attributes (OTEL_RESOURCE_ATTRIBUTES), service.name among them (OTEL_SERVICE_NAME, default herald). */
  resource: Record<string, string>;
  /** How often finished spans are sent (OTEL_BSP_SCHEDULE_DELAY), in ms. */
  scheduleDelayMs: number;
  /** Spans kept waiting at most (OTEL_BSP_MAX_QUEUE_SIZE); past it new ones are dropped, never waited for. */
  maxQueueSize: number;
}

type Get = (name: string) => string | undefined;

/** The tracing configuration, null when tracing is off, or a sentence saying what is wrong. */
export function tracingConfig(get: Get): TracingConfig | null | { error: string } {
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporter = get('OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return null;
  if (exporter !== undefined && exporter !== 'otlp') {
    return { error: `OTEL_TRACES_EXPORTER: must be otlp or none, got "${exporter}"` };
  }
  const url = endpoint(get);
  if (url === null) return null;
  if ('error' in url) return url;
  const protocol =
    get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? get('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (!(TRACE_PROTOCOLS as readonly string[]).includes(protocol)) {
    const name = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    return {
      error: `${name}: must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`,
    };
  }
  const sampler = (get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(sampler)) {
    return { error: `OTEL_TRACES_SAMPLER: must be one of ${SAMPLERS.join(', ')}, got "${sampler}"` };
  }
  const rawRatio = get('OTEL_TRACES_SAMPLER_ARG');
  const ratio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (sampler.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) {
    return { error: `OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1, got "${rawRatio}"` };
  }
  const resource = resourceAttributes(get('OTEL_RESOURCE_ATTRIBUTES'));
  if ('error' in resource) return resource;
  const serviceName = get('OTEL_SERVICE_NAME') ?? resource.attributes['service.name'] ?? 'herald';
  const scheduleDelayMs = integer(get, 'OTEL_BSP_SCHEDULE_DELAY', 5000);
  if (typeof scheduleDelayMs !== 'number') return scheduleDelayMs;
  const maxQueueSize = integer(get, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  if (typeof maxQueueSize !== 'number') return maxQueueSize;
  return {
    url: url.url,
    protocol: protocol as TraceProtocol,
    sampler: sampler as SamplerName,
    ratio,
    resource: { ...resource.attributes, 'service.name': serviceName },
    scheduleDelayMs,
    maxQueueSize: Math.max(1, maxQueueSize),
  };
}

function endpoint(get: Get): { url: string } | { error: string } | null {
  const traces = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = get('OTEL_EXPORTER_OTLP_ENDPOINT');
  const [name, raw] = traces
    ? ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces]
    : ['OTEL_EXPORTER_OTLP_ENDPOINT', base];
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return {
      error: `${name}: must be an http:// or https:// URL such as http://collector:4318, got "${raw}"`,
    };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return {
      error: `${name}: must be an http:// or https:// URL such as http://collector:4318, got "${raw}"`,
    };
  }
  // The signal's own endpoint is used as given; the shared one is a base the signal's path is appended to.
  return { url: traces ? raw : `${raw.replace(/\/+$/, '')}/v1/traces` };
}

/** OTEL_RESOURCE_ATTRIBUTES: key=value pairs, comma-separated, values percent-encoded. */
function resourceAttributes(
  raw: string | undefined,
): { attributes: Record<string, string> } | { error: string } {
  const attributes: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || key === '') {
      return {
        error: `OTEL_RESOURCE_ATTRIBUTES: "${pair.trim()}" is not key=value (e.g. deployment.environment=prod)`,
      };
    }
    try {
      attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return { error: `OTEL_RESOURCE_ATTRIBUTES: the value of ${key} is not valid percent-encoding` };
    }
  }
  return { attributes };
}

function integer(get: Get, name: string, fallback: number): number | { error: string } {
  const raw = get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) return { error: `${name}: must be a whole number, got "${raw}"` };
  return Number(raw);
}
