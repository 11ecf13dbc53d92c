/**
 * Examples for the success responses of /openapi.json (errors get theirs from docs-errors.ts). @fastify/swagger shows
 * none, and names a response its route did not describe "Default Response"; a reader wants a body to copy. Examples
 * are built from
 * each schema, with the shared resources (Instance, Webhook, Delivery…) taking the example written beside them in
 * schemas.ts, so an example can never list a field the schema lacks.
 */
// biome-ignore lint/suspicious/noExplicitAny: walks OpenAPI and JSON Schema objects, whose fields vary by keyword
type Schema = Record<string, any>;

/** The fallback name of a response whose route gave none (errors are described by docs-errors.ts). */
const STATUS_NAMES: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
};

/** The ids every example uses, so that examples of one resource agree with each other. */
export const EXAMPLE_IDS = {
  instance: 'ins_01jd5q7h2k9x4m8n3p6r0t1v2a',
  webhook: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
  event: 'evt_01jd5q7h2k9x4m8n3p6r0t1v2w',
  delivery: 'dlv_01jd5q7h3a8b2c4d6e8f0g2h4j',
  media: 'med_01jd5q7h3m5n7p9q1r3s5t7v9w',
  key: 'key_01jd5q7h2x4y6z8a0b2c4d6e8f',
  portalLink: 'lnk_01jd5q7h4b6c8d0e2f4g6h8j0k',
};
/** Plain strings named like these get a value of their kind rather than "string". */
const BY_NAME: Record<string, unknown> = {
  instance_id: EXAMPLE_IDS.instance,
  webhook_id: EXAMPLE_IDS.webhook,
  event_id: EXAMPLE_IDS.event,
  delivery_id: EXAMPLE_IDS.delivery,
  media_id: EXAMPLE_IDS.media,
  key_id: EXAMPLE_IDS.key,
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
 * gave one, else one built from its schema. Errors have theirs already (docs-errors.ts).
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
        json.example = exampleOf(json.schema, components);
      }
    }
  }
}
