/**
 * A webhook's own headers, sent with every attempt (tokens a receiver expects, a tenant id…). They never replace
 * what Herald itself sends: its X-Service-* headers, Standard Webhooks' webhook-* ones, and the ones that describe
 * the request. What the HTTP client (undici) would refuse to send is refused here, at save, so that it never
 * becomes a failed attempt later. Their values are write-only: views show `****`, and `****` given back keeps the
 * saved value.
 */
import type { FieldError } from './types.ts';

export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE = 1024;
/** What every view shows in place of a header's value, and what keeps the saved value when given back. */
export const MASKED_VALUE = '****';
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED = new Set([
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'connection',
  'transfer-encoding',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);
/**
 * Headers about the connection or a proxy, not for the receiver: undici throws on Expect, Upgrade and Keep-Alive;
 * TE, Trailer and Proxy-* would reach the receiver meaning nothing it can act on, or a proxy's credentials.
 */
const HOP_BY_HOP = new Set(['expect', 'upgrade', 'keep-alive', 'te', 'trailer']);
/** Control characters (C0 with tab, DEL, C1): undici refuses most, and none belongs in a header a person wrote. */
const CONTROL = /\p{Cc}/u;
/** undici sends a value as Latin-1 bytes and refuses any character above U+00FF. */
const BEYOND_LATIN1 = /[^\p{Cc}\x20-\xff]/u;

/** Why the header `name` (any case) cannot be set by a webhook, or null when it can. */
function refusedName(lower: string): string | null {
  if (RESERVED.has(lower) || lower.startsWith('x-service-'))
    return 'is set by Herald itself and cannot be replaced';
  if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) {
    return 'is about the connection or a proxy, not for the receiver, and cannot be sent (Expect, Upgrade, Keep-Alive, TE, Trailer and Proxy-* are refused)';
  }
  return null;
}

/** Why a header value cannot be sent, or null when it can. */
function refusedValue(value: string): string | null {
  if (value.length > MAX_HEADER_VALUE) return `must be at most ${MAX_HEADER_VALUE} characters`;
  if (CONTROL.test(value)) return 'must not contain a control character (CR, LF, NUL, tab…)';
  if (BEYOND_LATIN1.test(value)) {
    return 'must hold characters up to U+00FF only (Latin-1), as HTTP sends them; percent-encode others';
  }
  return null;
}

/** Why one header cannot be saved, or null; `seen` holds the names before it, in lower case. */
function headerProblem(name: string, value: unknown, seen: ReadonlySet<string>): string | null {
  if (!TOKEN.test(name)) return "is not a valid header name (letters, digits and !#$%&'*+.^_`|~-)";
  const lower = name.toLowerCase();
  const refused = refusedName(lower);
  if (refused) return refused;
  if (seen.has(lower)) return 'is given twice (header names ignore case)';
  if (typeof value !== 'string') return 'must be a string';
  return refusedValue(value);
}

/** The rules the headers break, each naming the header under `field` (e.g. `headers.X-Token`). */
export function checkHeaders(headers: unknown, field = 'headers'): FieldError[] {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return [{ field, message: 'must be an object of header names and values, such as {"X-Token": "…"}' }];
  }
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS)
    return [{ field, message: `must have at most ${MAX_HEADERS} headers, got ${entries.length}` }];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const problem = headerProblem(name, value, seen);
    if (problem) errors.push({ field: `${field}.${name}`, message: problem });
    seen.add(name.toLowerCase());
  }
  return errors;
}

/** The headers as every view shows them: each name, its value `****`. */
export function maskHeaders(headers: Readonly<Record<string, string>> | null): Record<string, string> | null {
  return headers === null
    ? null
    : Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED_VALUE]));
}

/**
 * The headers to save from those given (already checked): a value `****` is the saved value of the header of that
 * name (names ignore case, as in HTTP); one with no saved value is a complaint naming it.
 */
export function unmaskHeaders(
  given: Readonly<Record<string, string>>,
  saved: Readonly<Record<string, string>> | null,
  field = 'headers',
): { headers: Record<string, string>; errors: FieldError[] } {
  const savedByName = new Map(
    Object.entries(saved ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const headers: Record<string, string> = {};
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(given)) {
    const kept = value === MASKED_VALUE ? savedByName.get(name.toLowerCase()) : value;
    if (kept !== undefined) headers[name] = kept;
    else {
      errors.push({
        field: `${field}.${name}`,
        message: `is ${MASKED_VALUE}, which keeps a saved value, but this webhook has no saved ${name} header: give its value`,
      });
    }
  }
  return { headers, errors };
}
