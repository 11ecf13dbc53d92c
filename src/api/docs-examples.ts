/**
 * Names and examples for every response of /openapi.json. @fastify/swagger calls each one "Default Response" and
 * shows no example; a reader wants "Accepted: stored, deliveries queued" and a body to copy. Examples are built from
 * each schema, with the shared resources (Instance, Webhook, Delivery…) taking the example written beside them in
 * schemas.ts, so an example can never list a field the schema lacks.
 */
// biome-ignore lint/suspicious/noExplicitAny: walks OpenAPI and JSON Schema objects, whose fields vary by keyword
type Schema = Record<string, any>;

/** What each status means, said once for every operation. */
const STATUS_NAMES: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '206': 'Partial content (a Range request)',
  '304': 'Not modified (If-None-Match matched)',
  '400': 'Invalid request: the message names the field and the rule',
  '401': 'Missing or unknown API key',
  '403': 'The key may not do this (an instance key outside its instance, or an admin operation)',
  '404': 'No such resource (or no such route)',
  '409': 'Conflict with what is stored; the message says why',
  '410': 'Gone: the link has expired',
  '413': 'Request body too large',
  '415': 'The body is not JSON (Content-Type: application/json)',
  '416': 'Range not satisfiable',
  '422': 'Destination not allowed: the address is not globally reachable',
  '429': 'Rate limited: retry after the Retry-After header',
  '500': 'Internal error (details are in Herald’s log, never in the answer)',
  '503':
    'Unavailable: the database cannot be reached or cannot write (disk full); retry after the Retry-After header',
};

const ERROR_EXAMPLES: Record<string, [string, string, { field: string; message: string }[]?]> = {
  '400': [
    'invalid_request',
    'events: choose at least one event kind',
    [{ field: 'events', message: 'choose at least one event kind' }],
  ],
  '401': ['unauthorized', 'missing or unknown API key'],
  '403': ['forbidden', 'this key belongs to another instance'],
  '404': ['not_found', 'webhook whk_01jd5q7h2k9x4m8n3p6r0t1v2w does not exist'],
  '409': ['conflict', 'delivery is delivered; only failed deliveries can be redelivered'],
  '410': ['gone', 'the media link expired at 2026-11-22T10:00:00.000Z'],
  '413': ['payload_too_large', 'request body is larger than the limit for this endpoint'],
  '415': ['unsupported_media_type', 'request body must be JSON with Content-Type: application/json'],
  '416': ['range_not_satisfiable', 'range bytes=900-999 is outside the file (480 bytes)'],
  '422': [
    'destination_not_allowed',
    'destination_url: 10.0.0.5 is not a globally reachable address (private, 10.0.0.0/8); to send to it, set ALLOW_PRIVATE_DESTINATIONS=true (development) or add it to ALLOWED_DESTINATION_CIDRS',
    [
      {
        field: 'destination_url',
        message: '10.0.0.5 is not a globally reachable address (private, 10.0.0.0/8); …',
      },
    ],
  ],
  '429': ['rate_limited', 'too many requests for this key; retry after 1 s'],
  '500': ['internal', 'internal error'],
  '503': ['unavailable', 'the database is unavailable; retry in 5 seconds (Retry-After)'],
};

/** The error body of `status`, as Herald sends it. */
export function errorExample(status: string) {
  const [code, message, details = []] = ERROR_EXAMPLES[status] ?? ERROR_EXAMPLES['500'];
  return { success: false, error: { code, message, details } };
}

const IDS = {
  ins: '01jd5q7h2k9x4m8n3p6r0t1v2a',
  whk: '01jd5q7j0c3v8n2m5x7z9b4d6f',
  evt: '01jd5q7h2k9x4m8n3p6r0t1v2w',
};
/** Plain strings named like these get a value of their kind rather than "string". */
const BY_NAME: Record<string, unknown> = {
  instance_id: `ins_${IDS.ins}`,
  webhook_id: `whk_${IDS.whk}`,
  event_id: `evt_${IDS.evt}`,
  delivery_id: 'dlv_01jd5q7h3a8b2c4d6e8f0g2h4j',
  media_id: 'med_01jd5q7h3m5n7p9q1r3s5t7v9w',
  key_id: 'key_01jd5q7h2x4y6z8a0b2c4d6e8f',
  key: 'hk_9Qm4c2Wv7bXn1LpZ8rT5yU3sK0dF6gH2jA4eV7wQ1cE',
  event: 'message',
  name: 'Sales line',
  next_cursor: null,
  mimetype: 'image/jpeg',
  sha256: '9f2c1e7d4b8a6f3e0c5d2b9a7e4f1c8d6b3a0e7f4c1d8b5a2e9f6c3d0b7a4e1f',
  client_sign_secret: 'whsec_3b8f0c2a9d4e6f1b7c5a8e2d0f9b4c6a',
  url: 'https://hooks.example.com/media/med_01jd5q7h3m5n7p9q1r3s5t7v9w?expires=1795341600&sig=…',
};

/** An example value for `schema` (a property called `name`), taking shared resources' own examples through $ref. */
export function exampleOf(
  schema: Schema | undefined,
  components: Record<string, Schema>,
  depth = 0,
  name = '',
): unknown {
  if (!schema || depth > 8) return null;
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop() ?? '';
    return exampleOf(components[name], components, depth + 1);
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (name in BY_NAME && BY_NAME[name] === null) return null;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) {
    const first = branches.find((b: Schema) => b.type !== 'null') ?? branches[0];
    return exampleOf(first, components, depth + 1, name);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        out[name] = exampleOf(prop, components, depth + 1, name);
      }
      return out;
    }
    case 'array':
      return [exampleOf(schema.items, components, depth + 1, name)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return '2026-11-21T10:00:00.000Z';
      return BY_NAME[name] ?? 'string';
    default:
      return null;
  }
}

/**
 * Every response of `doc` gets its name and, when it has a JSON body, an example: the operation's own when a route
 * gave one, else one built from its schema (errors: the error of that status).
 */
export function nameResponses(doc: Schema): void {
  const components = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  for (const operations of Object.values((doc.paths ?? {}) as Record<string, Record<string, Schema>>)) {
    for (const op of Object.values(operations)) {
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Schema>)) {
        if (!response.description || response.description === 'Default Response') {
          response.description = STATUS_NAMES[status] ?? `HTTP ${status}`;
        }
        const json = response.content?.['application/json'];
        if (!json || json.example !== undefined || json.examples !== undefined) continue;
        json.example = Number(status) >= 400 ? errorExample(status) : exampleOf(json.schema, components);
      }
    }
  }
}
