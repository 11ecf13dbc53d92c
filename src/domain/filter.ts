/**
 * A webhook's payload filter: which events of its subscribed kinds it receives, judged on the delivery body
 * (`event`, `instance_id`, `timestamp`, `payload.…`). Pure.
 *
 *   { "payload.from": { "$prefix": "49" }, "payload.fromMe": false,
 *     "$or": [ { "event": "message" }, { "event": "message.ack" } ] }
 *
 * Keys are dotted paths (a number steps into an array); a value is a literal (string, number, boolean or null,
 * compared for equality) or one operator: $eq, $ne, $in, $nin, $exists, $prefix. `$and` and `$or` take arrays of
 * filters. Every key of an object must hold. A path that is absent is unequal to every literal and in no list.
 */
import { isObj } from './payload-rules.ts';
import type { FieldError, Filter } from './types.ts';

/** Largest filter accepted, as JSON: a filter is evaluated for every event of its webhook's kinds. */
export const MAX_FILTER_BYTES = 4096;

const OPERATORS = ['$eq', '$ne', '$in', '$nin', '$exists', '$prefix'];
const PATH = /^[A-Za-z0-9_@-]+(\.[A-Za-z0-9_@-]+)*$/;

type Literal = string | number | boolean | null;
const isLiteral = (v: unknown): v is Literal =>
  v === null ||
  typeof v === 'string' ||
  typeof v === 'boolean' ||
  (typeof v === 'number' && Number.isFinite(v));

/** The rules a filter breaks, each naming its key under `field` (e.g. `filter.$or[1].payload.from`). */
export function checkFilter(filter: unknown, field = 'filter'): FieldError[] {
  if (!isObj(filter))
    return [{ field, message: 'must be an object of conditions, such as {"payload.fromMe": false}' }];
  const size = Buffer.byteLength(JSON.stringify(filter));
  if (size > MAX_FILTER_BYTES)
    return [{ field, message: `must be at most ${MAX_FILTER_BYTES} bytes as JSON, got ${size}` }];
  return checkObject(filter, field);
}

function checkObject(filter: Record<string, unknown>, at: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0 || !value.every(isObj)) {
        errors.push({ field: `${at}.${key}`, message: 'must be a non-empty array of filter objects' });
      } else {
        for (const [i, f] of value.entries())
          errors.push(...checkObject(f as Record<string, unknown>, `${at}.${key}[${i}]`));
      }
    } else if (key.startsWith('$')) {
      errors.push({
        field: `${at}.${key}`,
        message: 'is not a known combinator: use $and or $or, or a dotted path',
      });
    } else if (!PATH.test(key)) {
      errors.push({ field: `${at}.${key}`, message: 'must be a dotted path such as payload.from' });
    } else {
      const rule = checkCondition(value);
      if (rule) errors.push({ field: `${at}.${key}`, message: rule });
    }
  }
  return errors;
}

function checkCondition(value: unknown): string | null {
  if (isLiteral(value)) return null;
  const literal = 'must be a string, number, boolean or null, or one operator such as {"$in": ["a", "b"]}';
  if (!isObj(value)) return literal;
  const ops = Object.keys(value);
  const unknown = ops.find((op) => op.startsWith('$') && !OPERATORS.includes(op));
  if (unknown !== undefined) {
    return `has ${JSON.stringify(unknown)}, which is not an operator; operators: ${OPERATORS.join(', ')}`;
  }
  if (ops.length !== 1 || !OPERATORS.includes(ops[0]))
    return `${literal}; operators: ${OPERATORS.join(', ')}`;
  const [op] = ops;
  const arg = value[op];
  switch (op) {
    case '$eq':
    case '$ne':
      return isLiteral(arg) ? null : `${op} takes a string, number, boolean or null`;
    case '$in':
    case '$nin':
      return Array.isArray(arg) && arg.every(isLiteral)
        ? null
        : `${op} takes an array of strings, numbers, booleans or nulls`;
    case '$exists':
      return typeof arg === 'boolean' ? null : '$exists takes true or false';
    default:
      return typeof arg === 'string' ? null : '$prefix takes a string';
  }
}

/** Whether `doc` (a delivery body) passes the filter; a filter is checked before it is stored. */
export function matches(filter: Filter, doc: unknown): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && !(value as Filter[]).every((f) => matches(f, doc))) return false;
    if (key === '$or' && !(value as Filter[]).some((f) => matches(f, doc))) return false;
    if (!key.startsWith('$') && !holds(valueAt(doc, key), value)) return false;
  }
  return true;
}

function holds(actual: unknown, condition: unknown): boolean {
  if (!isObj(condition)) return actual === condition;
  const [[op, arg]] = Object.entries(condition);
  switch (op) {
    case '$eq':
      return actual === arg;
    case '$ne':
      return actual !== arg;
    case '$in':
      return actual !== undefined && (arg as unknown[]).includes(actual);
    case '$nin':
      return !(arg as unknown[]).includes(actual);
    case '$exists':
      return (actual !== undefined) === arg;
    default:
      return typeof actual === 'string' && actual.startsWith(arg as string);
  }
}

function valueAt(doc: unknown, path: string): unknown {
  let at: unknown = doc;
  for (const part of path.split('.')) {
    if (Array.isArray(at) && /^\d+$/.test(part)) at = at[Number(part)];
    else if (isObj(at) && Object.hasOwn(at, part)) at = at[part];
    else return undefined;
  }
  return at;
}
