/**
 * The schema validator's complaints, said as sentences a person acts on: "events: choose at least one event kind",
 * "status: must be one of pending, delivered, failed". The validator (Ajv, with `verbose` so each error carries its
 * schema) reports what failed; this file is the one place that turns that into words.
 */
import type { FieldError } from '../domain/types.ts';

/** The part of an Ajv error this file reads. */
export interface ValidatorError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
  schema?: unknown;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

/** Every complaint of one failed validation, one per field, in the validator's order. */
export function validationDetails(errors: readonly ValidatorError[], context = 'body'): FieldError[] {
  // A union reports each branch that failed and then itself: the union alone says it (one sentence per field),
  // unless the value's type picked one branch (an object where "object or null" is asked): that branch says
  // precisely what is wrong inside it.
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const chosen = new Map(unions.map((u) => [u, chosenBranch(u)]));
  const kept = errors.filter((e) => {
    if (chosen.get(e) !== undefined && chosen.get(e) !== null) return false;
    return !unions.some((u) => {
      if (u === e || !e.schemaPath.startsWith(`${u.schemaPath}/`)) return false;
      const branch = chosen.get(u);
      return branch === null || !e.schemaPath.startsWith(`${u.schemaPath}/${branch}/`);
    });
  });
  const seen = new Set<string>();
  const details: FieldError[] = [];
  for (const e of kept) {
    const detail = describe(e, context);
    const key = `${detail.field}\n${detail.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push(detail);
  }
  return details;
}

/** The branch of a union whose type alone matches the value's, when exactly one does. */
function chosenBranch(u: ValidatorError): number | null {
  const branches = Array.isArray(u.schema) ? (u.schema as Record<string, unknown>[]) : [];
  const kind =
    u.data === null
      ? 'null'
      : Array.isArray(u.data)
        ? 'array'
        : Number.isInteger(u.data)
          ? 'integer'
          : typeof u.data;
  const fits = branches.flatMap((b, i) => {
    const types = [b.type].flat();
    return types.includes(kind) || (kind === 'integer' && types.includes('number')) ? [i] : [];
  });
  return fits.length === 1 ? fits[0] : null;
}

function describe(e: ValidatorError, context: string): FieldError {
  const base = fieldPath(e.instancePath);
  if (e.keyword === 'required')
    return { field: join(base, String(e.params.missingProperty)), message: 'is required' };
  if (e.keyword === 'additionalProperties') {
    return { field: join(base, String(e.params.additionalProperty)), message: 'is not a known field' };
  }
  return { field: base || context, message: sentence(e, base) };
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  integer: 'an integer',
  number: 'a number',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMATS: Record<string, string> = {
  'date-time': 'an RFC 3339 date-time such as 2026-01-31T12:00:00Z',
  uri: 'an absolute URL',
};

function sentence(e: ValidatorError, field: string): string {
  const schema = e.parentSchema ?? {};
  const n = Number(e.schema);
  switch (e.keyword) {
    case 'type':
      return `must be ${typeName(e.schema)}`;
    case 'enum':
      return `must be one of ${(e.schema as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(e.schema)}`;
    case 'anyOf':
    case 'oneOf':
      return union(e.schema as Record<string, unknown>[]);
    case 'minItems':
      return n === 1
        ? `choose at least one ${noun(schema, field)}`
        : `must have at least ${n} ${noun(schema, field)}s`;
    case 'maxItems':
      return `must have at most ${n} ${noun(schema, field)}${n === 1 ? '' : 's'}`;
    case 'uniqueItems':
      return `must not list the same ${noun(schema, field)} twice`;
    case 'minLength':
      return n === 1 ? 'must not be empty' : `must be at least ${n} characters`;
    case 'maxLength':
      return `must be at most ${n} characters`;
    case 'minimum':
      return `must be at least ${n}`;
    case 'maximum':
      return `must be at most ${n}`;
    case 'minProperties':
      return n === 1 ? 'must not be empty' : `must have at least ${n} fields`;
    case 'maxProperties':
      return `must have at most ${n} fields`;
    case 'pattern': {
      // A regex means little to a reader: the schema's description states the rule.
      const description = typeof schema.description === 'string' ? schema.description : '';
      return description ? `must be ${description.split(';')[0]}` : 'is not in the expected form';
    }
    case 'format':
      return `must be ${FORMATS[String(e.schema)] ?? `a valid ${e.schema}`}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/** "a string", "true or false", "a string or null". */
function typeName(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

/** A union of constants lists them; a type or null says so; anything else names the alternatives' types. */
function union(branches: Record<string, unknown>[]): string {
  if (branches.every((b) => 'const' in b))
    return `must be one of ${branches.map((b) => String(b.const)).join(', ')}`;
  if (branches.every((b) => typeof b.type === 'string' && Object.keys(b).length <= 2)) {
    return `must be ${branches.map((b) => typeName(b.type)).join(' or ')}`;
  }
  return `must be ${branches.map((b) => (b.type ? typeName(b.type) : 'a valid value')).join(' or ')}`;
}

/** What an array holds: its items' title ("event kind"), else its name in the singular ("events" → "event"). */
function noun(arraySchema: Record<string, unknown>, field: string): string {
  const items = arraySchema.items as { title?: unknown } | undefined;
  if (typeof items?.title === 'string') return items.title;
  const name = /(\w+?)s$/.exec(field.split('.').pop() ?? '')?.[1];
  return name ?? 'item';
}

/** "/events/1/payload" → "events[1].payload" */
export function fieldPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : join(acc, p)), '');
}

const join = (base: string, name: string) => (base ? `${base}.${name}` : name);
