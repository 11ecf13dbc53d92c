/**
 * A webhook's own headers, sent with every attempt (tokens a receiver expects, a tenant id…). They never replace
 * what Herald itself sends: its X-Service-* headers, Standard Webhooks' webhook-* ones, and the ones that describe
 * the request.
 */
import type { FieldError } from './types.ts';

export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE = 1024;
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
    const at = `${field}.${name}`;
    const lower = name.toLowerCase();
    if (!TOKEN.test(name))
      errors.push({ field: at, message: "is not a valid header name (letters, digits and !#$%&'*+.^_`|~-)" });
    else if (RESERVED.has(lower) || lower.startsWith('x-service-')) {
      errors.push({ field: at, message: 'is set by Herald itself and cannot be replaced' });
    } else if (seen.has(lower))
      errors.push({ field: at, message: 'is given twice (header names ignore case)' });
    else if (typeof value !== 'string') errors.push({ field: at, message: 'must be a string' });
    else if (value.length > MAX_HEADER_VALUE)
      errors.push({ field: at, message: `must be at most ${MAX_HEADER_VALUE} characters` });
    else if (/[\0\r\n]/.test(value))
      errors.push({ field: at, message: 'must not contain a line break (CR, LF) or NUL' });
    seen.add(lower);
  }
  return errors;
}
