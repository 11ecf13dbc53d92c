/** Configuration from environment variables. Parsing is pure: a bad value throws a ConfigError naming it. */

import { normalisePrefix } from './domain/media-prefix.ts';
import { FAILING_AFTER, type FailingPolicy } from './domain/operational-events.ts';
import { retryHorizonMs } from './domain/retry-horizon.ts';
import { type Cidr, parseCidrList } from './net/address-allow-list.ts';
import { checkDestinationSyntax } from './net/destination.ts';
import { type TracingConfig, tracingConfig } from './telemetry/tracing-config.ts';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  adminApiKey: string | null;
  /** The 32-byte key that seals signing secrets; null means "generated in DATA_DIR". */
  secretKey: Buffer | null;
  /** null means http://HOST:PORT, known only once the port is bound. */
  publicUrl: string | null;
  retrySchedule: number[];
  deliveryTimeoutMs: number;
  maxRetryAfterS: number;
  allowPrivateDestinations: boolean;
  /** Private addresses let through narrowly (ALLOWED_DESTINATION_CIDRS). */
  allowedDestinationCidrs: Cidr[];
  /** Requests per second per API key; 0 turns the limit off. The bucket holds two seconds' worth. */
  rateLimitIngest: number;
  rateLimitManagement: number;
  /** Failed authentications allowed per client address and minute (AUTH_FAILURES_PER_MIN); 0 turns it off. */
  authFailuresPerMin: number;
  /** The reverse proxies whose X-Forwarded-For names the client (TRUST_PROXY), as Fastify's trustProxy takes them. */
  trustProxy: string[];
  maxWebhooksPerInstance: number;
  retentionDays: number;
  logLevel: string;
  /** Largest accepted media upload, in bytes. */
  mediaMaxBytes: number;
  /** How long a media link lives after the event that carries it was accepted. */
  mediaTtlMs: number;
  mediaStore: MediaStoreConfig;
  /** Headers sent when Herald downloads engine media (ENGINE_MEDIA_HEADERS), e.g. WAHA's X-Api-Key. */
  engineMediaHeaders: Record<string, string>;
  /** Where engine media may be downloaded from, any address, those headers with it (ENGINE_MEDIA_PREFIXES). */
  engineMediaPrefixes: string[];
  /** The largest engine webhook body taken (ENGINE_MAX_BODY_BYTES), engine data (`_data`) included. */
  engineMaxBodyBytes: number;
  /** How long an engine's repeat of a message is dropped at ingest (ENGINE_DEDUPE_S, in ms); 0 keeps every one. */
  engineDedupeMs: number;
  /** Unacknowledged messages at most per source and process (SOURCE_PREFETCH). */
  sourcePrefetch: number;
  /** A Redis source's entry left unacknowledged this long by a consumer is taken over (SOURCE_RECLAIM_S, in ms). */
  sourceReclaimMs: number;
  portal: PortalConfig;
  /** Where every instance's operational events also go (OPERATOR_WEBHOOK_URL, signed with OPERATOR_WEBHOOK_SECRET). */
  operator: { url: string; secret: string | null } | null;
  /** When a webhook is failing (FAILING_AFTER) and when failing disables it (DISABLE_AFTER_FAILING_S). */
  failing: FailingPolicy;
  /** OpenTelemetry traces (the standard OTEL_* variables), or null: off, as it is without an OTLP endpoint. */
  tracing: TracingConfig | null;
}

/** The session page that portal links hand out: who may frame it, and its branding. */
export interface PortalConfig {
  /** Origins that may show /portal in a frame (PORTAL_FRAME_ANCESTORS); none when empty. */
  frameAncestors: string[];
  /** Its title (PORTAL_TITLE). */
  title: string;
  /** Its accent colour, #rrggbb (PORTAL_ACCENT), or null for Herald's. */
  accent: string | null;
  /** Live links per instance at most (PORTAL_MAX_LINKS). */
  maxLinks: number;
}

/** Where media files live: DATA_DIR/media, or an S3-compatible bucket (endpoint and credentials: AWS_* variables). */
export type MediaStoreConfig =
  | { kind: 'fs' }
  | {
      kind: 's3';
      bucket: string;
      prefix: string;
      endpoint: string | null;
      region: string;
      pathStyle: boolean;
    };

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env): Config {
  const get = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new ConfigError(`${name}: must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };

  const config: Config = {
    port: integer('PORT', 8080, 0, 65535),
    host: get('HOST') ?? '127.0.0.1',
    dataDir: get('DATA_DIR') ?? './data',
    databaseUrl: databaseUrl(get('DATABASE_URL')),
    adminApiKey: adminKey(get('ADMIN_API_KEY')),
    secretKey: optional(get('SECRET_KEY'), (raw) => parseSecretKey('SECRET_KEY', raw)),
    publicUrl: publicUrl(get('PUBLIC_URL')),
    retrySchedule: retrySchedule(get('RETRY_SCHEDULE')),
    deliveryTimeoutMs: integer('DELIVERY_TIMEOUT_MS', 8000, 1, 600_000),
    maxRetryAfterS: integer('MAX_RETRY_AFTER_S', 3600, 0, 86_400),
    allowPrivateDestinations: boolean('ALLOW_PRIVATE_DESTINATIONS', get('ALLOW_PRIVATE_DESTINATIONS')),
    allowedDestinationCidrs: cidrs(get('ALLOWED_DESTINATION_CIDRS')),
    rateLimitIngest: integer('RATE_LIMIT_INGEST', 1000, 0, 1_000_000),
    rateLimitManagement: integer('RATE_LIMIT_MANAGEMENT', 100, 0, 1_000_000),
    authFailuresPerMin: integer('AUTH_FAILURES_PER_MIN', 30, 0, 1_000_000),
    trustProxy: trustProxy(get('TRUST_PROXY')),
    maxWebhooksPerInstance: integer('MAX_WEBHOOKS_PER_INSTANCE', 100, 1, 100_000),
    retentionDays: integer('RETENTION_DAYS', 14, 1, 36_500),
    logLevel: logLevel(get('LOG_LEVEL')),
    mediaMaxBytes: integer('MEDIA_MAX_BYTES', 64 * 1024 * 1024, 1, 5 * 1024 ** 3),
    mediaTtlMs: duration('MEDIA_TTL', get('MEDIA_TTL'), 24 * 3600),
    mediaStore: mediaStore(get),
    engineMediaHeaders: headerList('ENGINE_MEDIA_HEADERS', get('ENGINE_MEDIA_HEADERS')),
    engineMediaPrefixes: mediaPrefixes(get('ENGINE_MEDIA_PREFIXES')),
    engineMaxBodyBytes: integer('ENGINE_MAX_BODY_BYTES', 4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    engineDedupeMs: integer('ENGINE_DEDUPE_S', 3600, 0, 30 * 86_400) * 1000,
    sourcePrefetch: integer('SOURCE_PREFETCH', 256, 1, 65_535),
    sourceReclaimMs: integer('SOURCE_RECLAIM_S', 60, 1, 86_400) * 1000,
    portal: {
      frameAncestors: frameAncestors(get('PORTAL_FRAME_ANCESTORS')),
      title: portalTitle(get('PORTAL_TITLE')),
      accent: optional(get('PORTAL_ACCENT'), portalAccent),
      maxLinks: integer('PORTAL_MAX_LINKS', 100, 1, 1_000_000),
    },
    operator: operator(get('OPERATOR_WEBHOOK_URL'), get('OPERATOR_WEBHOOK_SECRET')),
    failing: {
      failingAfter: integer('FAILING_AFTER', FAILING_AFTER, 1, 1_000_000),
      disableAfterFailingMs: optional(
        get('DISABLE_AFTER_FAILING_S'),
        () => integer('DISABLE_AFTER_FAILING_S', 0, 1, 365 * 86_400) * 1000,
      ),
    },
    tracing: null,
  };
  const tracing = tracingConfig(get);
  if (tracing !== null && 'error' in tracing) throw new ConfigError(tracing.error);
  config.tracing = tracing;
  checkMediaTtl(config);
  checkEngineMedia(config);
  return config;
}

/** The entries of a comma-separated variable, trimmed, empty ones left out. */
const commaList = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');

/** ENGINE_MEDIA_PREFIXES: comma-separated URL prefixes, each an absolute http(s) URL that media-prefix.ts accepts. */
function mediaPrefixes(raw: string | undefined): string[] {
  const prefixes = commaList(raw);
  for (const prefix of prefixes) {
    const n = normalisePrefix(prefix);
    if ('why' in n) {
      throw new ConfigError(
        `ENGINE_MEDIA_PREFIXES: "${prefix}" is not a URL prefix such as http://waha:3000/api/files/: it ${n.why}`,
      );
    }
  }
  return prefixes;
}

/** The engine's key goes only where the operator said: headers without prefixes would have nowhere to go. */
function checkEngineMedia(c: Config): void {
  if (Object.keys(c.engineMediaHeaders).length > 0 && c.engineMediaPrefixes.length === 0) {
    throw new ConfigError(
      'ENGINE_MEDIA_HEADERS: set without ENGINE_MEDIA_PREFIXES; set ENGINE_MEDIA_PREFIXES to where the engine serves ' +
        'its files (e.g. ENGINE_MEDIA_PREFIXES=http://waha:3000/api/files/): the headers are sent there and nowhere else',
    );
  }
}

/** Names proxy-addr gives to address ranges, which Fastify's trustProxy takes besides addresses and CIDRs. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: comma-separated addresses, CIDRs or range names; none: the connection's address is the client's. */
function trustProxy(raw: string | undefined): string[] {
  const entries = commaList(raw);
  for (const entry of entries) {
    if (PROXY_RANGES.includes(entry)) continue;
    try {
      parseCidrList(entry);
    } catch {
      throw new ConfigError(
        `TRUST_PROXY: "${entry}" is not an address, a CIDR or one of ${PROXY_RANGES.join(', ')} ` +
          '(e.g. TRUST_PROXY=10.0.0.5,10.1.0.0/16)',
      );
    }
  }
  return entries;
}

/** Seconds, or a number with a unit: 90s, 30m, 24h, 7d. */
function duration(name: string, raw: string | undefined, fallbackS: number): number {
  if (raw === undefined) return fallbackS * 1000;
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(raw);
  if (!m)
    throw new ConfigError(`${name}: must be seconds or a duration such as 90m, 24h or 7d, got "${raw}"`);
  const unit: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
  return Number(m[1]) * unit[m[2] ?? 's'] * 1000;
}

/** A media link must still be live when the last scheduled attempt of its delivery ends (retry-horizon.ts). */
function checkMediaTtl(c: Config): void {
  const horizon = retryHorizonMs({
    schedule: c.retrySchedule,
    maxRetryAfterS: c.maxRetryAfterS,
    deliveryTimeoutMs: c.deliveryTimeoutMs,
  });
  if (c.mediaTtlMs < horizon) {
    throw new ConfigError(
      `MEDIA_TTL: must be at least the retry horizon, ${Math.ceil(horizon / 1000)} s ` +
        '(each RETRY_SCHEDULE wait stretched to MAX_RETRY_AFTER_S, plus every attempt at DELIVERY_TIMEOUT_MS), ' +
        `got ${c.mediaTtlMs / 1000} s`,
    );
  }
}

/** MEDIA_STORE, with the AWS SDK's usual variables for the endpoint and region (credentials: the SDK's chain). */
function mediaStore(get: (name: string) => string | undefined): MediaStoreConfig {
  const raw = get('MEDIA_STORE');
  if (raw === undefined) return { kind: 'fs' };
  // Bucket names per S3's rules: 3-63 lowercase letters, digits, dots and hyphens.
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!m) {
    throw new ConfigError(
      `MEDIA_STORE: must be s3://bucket/prefix (or unset for DATA_DIR/media), got "${raw}"`,
    );
  }
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  const endpoint = get('AWS_ENDPOINT_URL_S3') ?? get('AWS_ENDPOINT_URL') ?? null;
  if (endpoint !== null && !URL.canParse(endpoint)) {
    throw new ConfigError('AWS_ENDPOINT_URL_S3: must be an absolute URL such as http://127.0.0.1:9000');
  }
  const style = get('MEDIA_S3_PATH_STYLE');
  return {
    kind: 's3',
    bucket: m[1],
    prefix: prefix ? `${prefix}/` : '',
    endpoint,
    region: get('AWS_REGION') ?? get('AWS_DEFAULT_REGION') ?? 'us-east-1',
    // S3-compatible servers at their own endpoint mostly want bucket-in-path; AWS itself the bucket host name.
    pathStyle: style === undefined ? endpoint !== null : boolean('MEDIA_S3_PATH_STYLE', style),
  };
}

/** `Name: value; Name: value`, as WAHA writes its own custom headers. */
function headerList(name: string, raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  const parts = (raw ?? '').split(';').filter((p) => p.trim() !== '');
  for (const [i, part] of parts.entries()) {
    const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*?)\s*$/.exec(part);
    // The value is not repeated: it is often a key.
    if (!m || /[\0\r\n]/.test(m[2])) {
      throw new ConfigError(`${name}: must be "Name: value" pairs separated by ";"; pair ${i + 1} is not`);
    }
    headers[m[1].toLowerCase()] = m[2];
  }
  return headers;
}

function databaseUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError('DATABASE_URL: must be a postgres:// URL');
  return raw;
}

function adminKey(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (raw.length < 16) throw new ConfigError('ADMIN_API_KEY: must be at least 16 characters');
  return raw;
}

const optional = <T>(raw: string | undefined, parse: (raw: string) => T): T | null =>
  raw === undefined ? null : parse(raw);

/** A 32-byte key as 64 hex digits or base64 (SECRET_KEY, and NEW_SECRET_KEY of rotate-secret-key). */
export function parseSecretKey(name: string, raw: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name}: must be 32 bytes, as 64 hex digits or base64`);
  return key;
}

function publicUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) {
    throw new ConfigError('PUBLIC_URL: must be an absolute http or https URL');
  }
  return raw.replace(/\/+$/, '');
}

/** Origins as CSP's frame-ancestors takes them: scheme, host (a leading *. for subdomains) and port, no path. */
function frameAncestors(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  const origins = raw.split(/\s+/);
  for (const origin of origins) {
    if (!/^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin)) {
      throw new ConfigError(
        `PORTAL_FRAME_ANCESTORS: "${origin}" is not an origin such as https://app.example.com (space-separated, no path)`,
      );
    }
  }
  return origins;
}

function operator(url: string | undefined, secret: string | undefined): Config['operator'] {
  if (url === undefined) {
    if (secret !== undefined)
      throw new ConfigError('OPERATOR_WEBHOOK_SECRET: set without OPERATOR_WEBHOOK_URL');
    return null;
  }
  const problem = checkDestinationSyntax(url);
  if (problem) throw new ConfigError(problem.message.replace('destination_url', 'OPERATOR_WEBHOOK_URL'));
  if (secret !== undefined && secret.length > 1024) {
    throw new ConfigError('OPERATOR_WEBHOOK_SECRET: must be at most 1024 characters');
  }
  return { url, secret: secret ?? null };
}

function portalTitle(raw: string | undefined): string {
  if (raw === undefined) return 'Herald';
  if (raw.length > 100) throw new ConfigError('PORTAL_TITLE: must be at most 100 characters');
  return raw;
}

function portalAccent(raw: string): string {
  if (!/^#[0-9a-fA-F]{6}$/.test(raw))
    throw new ConfigError(`PORTAL_ACCENT: must be a colour such as #4f46e5, got "${raw}"`);
  return raw.toLowerCase();
}

function cidrs(raw: string | undefined): Cidr[] {
  if (raw === undefined) return [];
  try {
    return parseCidrList(raw);
  } catch (err) {
    throw new ConfigError(`ALLOWED_DESTINATION_CIDRS: ${(err as Error).message}`);
  }
}

function retrySchedule(raw: string | undefined): number[] {
  if (raw === undefined) return [5, 10, 20, 40, 80];
  const parts = raw.split(',').map((p) => p.trim());
  // Fractions are allowed so that tests can run the schedule quickly.
  if (!parts.every((p) => /^\d+(\.\d+)?$/.test(p))) {
    throw new ConfigError(
      `RETRY_SCHEDULE: must be comma-separated seconds such as "5,10,20,40,80", got "${raw}"`,
    );
  }
  return parts.map(Number);
}

function boolean(name: string, raw: string | undefined): boolean {
  if (raw === undefined) return false;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name}: must be true or false, got "${raw}"`);
}

function logLevel(raw: string | undefined): string {
  if (raw === undefined) return 'info';
  if (!LOG_LEVELS.includes(raw)) throw new ConfigError(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}`);
  return raw;
}
