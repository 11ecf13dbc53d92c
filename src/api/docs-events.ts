/**
 * What Herald sends to a destination, described in /openapi.json as OpenAPI 3.1 `webhooks`: the request body, the
 * headers, and what each answer does. Event kinds come from the catalog itself (EVENT_KINDS, samplePayload).
 *
 * Each kind's payload becomes `components.schemas["payload-<kind>"]`, made by the catalog from the rules that
 * validate it (payloadSchema), and a webhook of its own ("<kind>") whose body names it, with that kind's sample as
 * its example.
 */
import { EVENT_KINDS, payloadSchema } from '../domain/events.ts';
import { samplePayload } from '../domain/samples.ts';

type Schema = Record<string, unknown>;

/** The JSON Schema of each kind's payload, by kind. The one place the event catalog feeds the API reference. */
export function eventPayloadSchemas(): Record<string, Schema> {
  return Object.fromEntries(EVENT_KINDS.map((kind) => [kind, payloadSchema(kind)]));
}

const example = (kind: string) => ({
  event_id: 'evt_01jd5q7h2k9x4m8n3p6r0t1v2w',
  event: kind,
  instance_id: 'ins_01jd5q7h2k9x4m8n3p6r0t1v2a',
  timestamp: 1795341600000,
  payload: samplePayload(kind),
});

const deliveryBody = (payload: Schema): Schema => ({
  type: 'object',
  required: ['event_id', 'event', 'instance_id', 'timestamp', 'payload'],
  properties: {
    event_id: { type: 'string', description: 'evt_…, the same on every attempt: deduplicate by it' },
    event: { type: 'string', enum: [...EVENT_KINDS], description: 'the event kind' },
    instance_id: { type: 'string', description: 'ins_…, the session the event belongs to' },
    timestamp: {
      type: 'integer',
      description: 'when the event occurred, in milliseconds since the Unix epoch',
    },
    payload,
  },
});

const HEADERS = [
  ['X-Service-Event-Id', 'the event_id of the body', true],
  [
    'X-Service-Timestamp',
    'seconds since the Unix epoch, at this attempt; refuse one more than 300 s away',
    true,
  ],
  [
    'X-Service-Signature',
    'v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret; during a secret ' +
      'rotation two values separated by a space, accept either. Only when the webhook has a signing secret',
    false,
  ],
] as const;

function deliveryOperation(summary: string, body: Schema, kind: string): Schema {
  return {
    post: {
      summary,
      description:
        'Sent as `POST <destination_url>` with `Content-Type: application/json` and `User-Agent: Herald/<version>`. ' +
        'Verify the signature on the raw bytes, answer 2xx within 8 seconds and do long work afterwards.',
      parameters: HEADERS.map(([name, description, required]) => ({
        name,
        in: 'header',
        required,
        description,
        schema: { type: 'string' },
      })),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: body, example: example(kind) } },
      },
      responses: {
        '2XX': { description: 'Delivered: nothing more is sent for this event' },
        '410': {
          description: 'Gone: the webhook is disabled, nothing more is sent until it is enabled again',
        },
        '429': {
          description:
            'With Retry-After (seconds or an HTTP date): the next attempt waits that long, at most an hour',
        },
        default: {
          description:
            'Anything else, or no answer within 8 seconds: retried after 5, 10, 20, 40 and 80 s; failed after 6 attempts',
        },
      },
    },
  };
}

/** The `webhooks` section and the schemas it names, to merge into the document. */
export function deliveryDocs(): { webhooks: Record<string, Schema>; schemas: Record<string, Schema> } {
  const perKind = eventPayloadSchemas();
  const webhooks: Record<string, Schema> = {
    delivery: deliveryOperation(
      'A delivery, as your endpoint receives it',
      deliveryBody({ type: 'object', description: 'depends on the event kind' }),
      'message',
    ),
  };
  const schemas: Record<string, Schema> = {};
  for (const [kind, payload] of Object.entries(perKind)) {
    const name = `payload-${kind}`;
    schemas[name] = payload;
    webhooks[kind] = deliveryOperation(
      `${kind}`,
      deliveryBody({ $ref: `#/components/schemas/${name}` }),
      kind,
    );
  }
  return { webhooks, schemas };
}
