/**
 * The building blocks of the payload rules: a check says in words what a value breaks, and carries the same rule as
 * JSON Schema, so the API reference describes each event kind from the very code that validates it. Pure.
 */
import { toUtc } from './iso-time.ts';
import type { FieldError } from './types.ts';

export type Obj = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;

/** Returns the rule a value breaks, or null when it is fine; `schema` is that rule in JSON Schema. */
export interface Check {
  (v: unknown): string | null;
  readonly schema: JsonSchema;
}
/** A named field: its check, or a nested shape. Absent and null are the same, and fine unless required. */
export interface Field {
  check?: Check;
  shape?: Shape;
  required?: boolean;
}
export type Shape = Record<string, Field>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const present = (v: unknown): boolean => v !== undefined && v !== null;

const rule = (schema: JsonSchema, check: (v: unknown) => string | null): Check =>
  Object.assign(check, { schema });

export const str = rule({ type: 'string' }, (v) => (typeof v === 'string' ? null : 'must be a string'));
export const nonEmpty = rule({ type: 'string', minLength: 1 }, (v) =>
  typeof v === 'string' && v !== '' ? null : 'must be a non-empty string',
);
export const bool = rule({ type: 'boolean' }, (v) =>
  typeof v === 'boolean' ? null : 'must be true or false (a JSON boolean)',
);
export const digits = rule(
  { type: 'string', pattern: '^[0-9]+$' },
  (v) => str(v) ?? (/^\d+$/.test(v as string) ? null : 'must contain digits only'),
);
export const prefixed = (p: string): Check =>
  rule({ type: 'string', pattern: `^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.+` }, (v) =>
    typeof v === 'string' && v.startsWith(p) && v.length > p.length
      ? null
      : `must be a string starting with "${p}"`,
  );
export const oneOf = (values: readonly (string | number)[]): Check =>
  rule({ enum: [...values] }, (v) =>
    values.includes(v as string | number) ? null : `must be one of ${values.join(', ')}`,
  );
export const httpUrl = rule({ type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' }, (v) =>
  typeof v === 'string' && /^https?:\/\//i.test(v) && URL.canParse(v)
    ? null
    : 'must be an absolute http(s) URL',
);
export const upperWord = rule({ type: 'string', pattern: '^[A-Z][A-Z0-9_]{0,63}$' }, (v) =>
  typeof v === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(v)
    ? null
    : 'must be a session status in upper case, such as WORKING or SCAN_QR_CODE',
);
export const ack = rule({ type: 'integer', minimum: -1, maximum: 4 }, (v) =>
  Number.isInteger(v) && (v as number) >= -1 && (v as number) <= 4
    ? null
    : 'must be an integer from -1 (ERROR) to 4 (PLAYED)',
);
export const isoTime = rule({ type: 'string', format: 'date-time' }, (v) =>
  typeof v === 'string' && toUtc(v) !== null
    ? null
    : 'must be an ISO 8601 time with an offset, such as 2026-11-21T10:00:00Z',
);

export const required = (check: Check): Field => ({ check, required: true });

export function checkShape(obj: Obj, shape: Shape, path: string, errors: FieldError[]): void {
  for (const [name, field] of Object.entries(shape)) {
    const v = obj[name];
    const at = path + name;
    if (!present(v)) {
      if (field.required) errors.push({ field: at, message: 'is required' });
      continue;
    }
    if (field.shape) {
      if (isObj(v)) checkShape(v, field.shape, `${at}.`, errors);
      else errors.push({ field: at, message: 'must be an object' });
      continue;
    }
    const broken = field.check?.(v);
    if (broken) errors.push({ field: at, message: broken });
  }
}

/** A field that may be absent may also be null (the engines send both for "none"). */
export function orNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...schema.enum, null] };
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** The shape as JSON Schema: its named fields; any other field passes unchanged, as the check lets it. */
export function shapeSchema(shape: Shape, extra: Record<string, JsonSchema> = {}): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(shape)) {
    const schema = field.shape ? shapeSchema(field.shape) : (field.check?.schema ?? {});
    properties[name] = field.required ? schema : orNull(schema);
  }
  const required = Object.entries(shape)
    .filter(([, f]) => f.required)
    .map(([name]) => name);
  return {
    type: 'object',
    properties: { ...properties, ...extra },
    ...(required.length ? { required } : {}),
    additionalProperties: true,
  };
}
