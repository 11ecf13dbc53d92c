/**
 * The payloads of Herald's operational events (operational-events.ts builds them), as JSON Schema for the API
 * reference and the typed client. Written out, not derived from payload rules: nobody publishes these, so nothing
 * validates them; every field is always present.
 */
import type { JsonSchema } from './payload-rules.ts';

const WEBHOOK = {
  webhook_id: { type: 'string', pattern: '^whk_.+', description: 'the webhook the event is about' },
  destination_url: { type: 'string', description: "the webhook's destination, as it was then" },
};

const object = (properties: Record<string, JsonSchema>, description: string): JsonSchema => ({
  type: 'object',
  description,
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

const time = (description: string) => ({ type: 'string', format: 'date-time', description });

export const OPERATIONAL_SCHEMAS: Record<string, JsonSchema> = {
  'webhook.disabled': object(
    {
      ...WEBHOOK,
      reason: {
        enum: ['gone', 'failing', 'manual'],
        description:
          'gone: the destination answered 410; failing: its attempts all failed for DISABLE_AFTER_FAILING_S; manual: by request',
      },
      disabled_at: time('when it was disabled'),
    },
    'A webhook was disabled: nothing is sent to it until it is enabled again.',
  ),
  'webhook.failing': object(
    {
      ...WEBHOOK,
      consecutive_failures: { type: 'integer', minimum: 1, description: 'failed attempts in a row so far' },
      failing_since: time('when the first of them failed'),
    },
    "A webhook's failed attempts in a row reached FAILING_AFTER; sent once per streak.",
  ),
  'webhook.recovered': object(
    {
      ...WEBHOOK,
      after_failures: { type: 'integer', minimum: 1, description: 'the failed attempts in a row it ended' },
    },
    'The first delivered attempt of a webhook after a webhook.failing.',
  ),
  'delivery.failed': object(
    {
      delivery_id: { type: 'string', pattern: '^dlv_.+' },
      event_id: { type: 'string', description: 'the event it delivered' },
      event: { type: 'string', description: "that event's kind" },
      webhook_id: { type: 'string', pattern: '^whk_.+' },
      failure_reason: {
        enum: ['attempts_exhausted', 'gone', 'destination_not_allowed'],
        description: 'why it stopped; it can be redelivered by hand',
      },
      last_status_code: { type: ['integer', 'null'], description: 'the last answer, null when none came' },
      last_error: {
        type: ['string', 'null'],
        description: 'why no answer came (timeout, connection_error…)',
      },
    },
    'A delivery failed by its attempts. Deliveries ended because their webhook was disabled are not reported one by one: webhook.disabled is.',
  ),
};
