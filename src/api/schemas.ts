/** JSON Schemas of the API's resources: they validate requests, shape responses and make /openapi.json. */
import { type TSchema, Type } from '@sinclair/typebox';

const Time = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const IdParam = (name: string, prefix: string) =>
  Type.String({
    pattern: `^${prefix}_[A-Za-z0-9_-]{1,100}$`,
    description: `${prefix}_ followed by 1 to 100 letters, digits, _ or -; the ${name}`,
  });

/** A webhook's ordering: "chat" delivers each chat's events one at a time, in the order they were accepted. */
export const Ordering = Type.Union([Type.Literal('none'), Type.Literal('chat')], {
  description:
    '"chat": one delivery of a chat in flight at a time, in the order its events were accepted (the next waits ' +
    'until the one before is delivered or failed); "none" (the default): each delivery on its own',
});

export const InstanceParams = Type.Object({ instance_id: IdParam('instance id', 'ins') });

/**
 * `ignore_status` is about stories, not `session.status`: the name comes from WhatsApp's "status" posts (chat
 * `status@broadcast`). Session status events are delivered to every webhook that subscribes to them either way.
 */
export const IGNORE_STATUS_DESCRIPTION =
  'Skip stories: true (the default) delivers no message from status@broadcast (WhatsApp "status" posts); false ' +
  'delivers them with the message events. Not about session.status, which is delivered whenever subscribed.';

export const Instance = Type.Object(
  {
    instance_id: Type.String(),
    name: Type.String(),
    status: Type.String({ description: 'last session.status published; STOPPED before any' }),
    phone: Nullable(Type.String()),
    engine_hmac_key_set: Type.Boolean({
      description:
        "whether the engine's webhook must be signed (X-Webhook-Hmac); the key itself is never shown",
    }),
    engine_media_prefix: Nullable(
      Type.String({
        description:
          "where this instance's engine media may be downloaded from, within ENGINE_MEDIA_PREFIXES; null: any of them",
      }),
    ),
    created_at: Time,
    // Beyond the instance itself, for the instance list and "Redeliver all failed" (which must say how many before acting).
    counts: Type.Object({
      webhooks: Type.Integer(),
      failed_deliveries: Type.Integer(),
      redeliverable_deliveries: Type.Integer({
        description: 'failed deliveries of enabled webhooks: what POST …/deliveries/redeliver restarts now',
      }),
    }),
  },
  {
    $id: 'Instance',
    examples: [
      {
        instance_id: 'ins_01jd5q7h2k9x4m8n3p6r0t1v2a',
        name: 'Sales line',
        status: 'WORKING',
        phone: '15550001111',
        engine_hmac_key_set: true,
        engine_media_prefix: null,
        created_at: '2026-11-21T09:58:12.345Z',
        counts: { webhooks: 2, failed_deliveries: 1, redeliverable_deliveries: 1 },
      },
    ],
  },
);

export const Webhook = Type.Object(
  {
    webhook_id: Type.String(),
    instance_id: Type.String(),
    destination_url: Type.String(),
    events: Type.Array(Type.String()),
    ignore_status: Type.Boolean({ description: IGNORE_STATUS_DESCRIPTION }),
    enabled: Type.Boolean(),
    client_sign_secret_set: Type.Boolean(),
    previous_secret_until: Nullable(
      Type.String({
        format: 'date-time',
        description: 'after a rotation: until when the old secret is signed with too (v1=<new> v1=<old>)',
      }),
    ),
    filter: Nullable(
      Type.Object({}, { additionalProperties: true, description: 'which events of its kinds it receives' }),
    ),
    headers: Nullable(
      Type.Record(Type.String(), Type.String(), {
        description: 'its own headers, sent with every attempt; each value is shown as **** (write-only)',
      }),
    ),
    rate_limit: Nullable(Type.Object({ per_second: Type.Integer() })),
    standard_webhooks: Type.Boolean({
      description:
        "Standard Webhooks' headers (webhook-id, webhook-timestamp, webhook-signature) beside Herald's",
    }),
    ordering: Ordering,
    health: Type.Object(
      {
        last_delivered_at: Nullable(Time),
        last_failed_at: Nullable(Time),
        consecutive_failures: Type.Integer({ description: 'failed attempts since the last delivery' }),
        attempts_24h: Type.Integer({
          description: 'attempts that started in the current hour and the 23 before it',
        }),
        delivered_24h: Type.Integer({ description: 'deliveries that ended delivered in the same hours' }),
        failed_24h: Type.Integer({
          description: 'deliveries that ended failed in the same hours (after their last attempt)',
        }),
        retried_24h: Type.Integer({ description: 'attempts of the same hours that failed and were retried' }),
      },
      { description: 'kept current by the outcomes of its attempts' },
    ),
    disabled_reason: Nullable(
      Type.String({
        description:
          '"gone" when a receiver answered 410, "failing" when its attempts all failed for DISABLE_AFTER_FAILING_S, "disabled" by request',
      }),
    ),
    disabled_at: Nullable(Time),
    created_at: Time,
    updated_at: Time,
  },
  {
    $id: 'Webhook',
    examples: [
      {
        webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
        instance_id: 'ins_01jd5q7h2k9x4m8n3p6r0t1v2a',
        destination_url: 'https://hooks.example.com/herald',
        events: ['message', 'message.ack', 'session.status'],
        ignore_status: true,
        enabled: true,
        client_sign_secret_set: true,
        previous_secret_until: null,
        filter: { 'payload.fromMe': false },
        headers: { Authorization: '****' },
        rate_limit: { per_second: 20 },
        standard_webhooks: false,
        ordering: 'chat',
        health: {
          last_delivered_at: '2026-11-21T10:02:11.000Z',
          last_failed_at: '2026-11-21T08:40:02.000Z',
          consecutive_failures: 0,
          attempts_24h: 1290,
          delivered_24h: 1286,
          failed_24h: 1,
          retried_24h: 3,
        },
        disabled_reason: null,
        disabled_at: null,
        created_at: '2026-11-21T09:59:01.000Z',
        updated_at: '2026-11-21T09:59:30.000Z',
      },
    ],
  },
);

const DELIVERY_EXAMPLE = {
  delivery_id: 'dlv_01jd5q7h3a8b2c4d6e8f0g2h4j',
  event_id: 'evt_01jd5q7h2k9x4m8n3p6r0t1v2w',
  event: 'message',
  webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
  status: 'delivered',
  attempt_count: 2,
  created_at: '2026-11-21T10:00:00.000Z',
  last_attempt_at: '2026-11-21T10:00:05.120Z',
  next_attempt_at: null,
  last_status_code: 200,
  last_error: null,
  failure_reason: null,
  chat: '14155550123@c.us',
  waiting_for: null,
};
const ATTEMPTS_EXAMPLE = [
  {
    attempt: 1,
    trigger: 'scheduled',
    started_at: '2026-11-21T10:00:00.012Z',
    duration_ms: 8001,
    status_code: null,
    error: 'timeout',
    response_body: null,
    next_attempt_at: '2026-11-21T10:00:13.013Z',
    next_attempt_reason: 'schedule',
    note: null,
  },
  {
    attempt: 2,
    trigger: 'scheduled',
    started_at: '2026-11-21T10:00:13.020Z',
    duration_ms: 41,
    status_code: 200,
    error: null,
    response_body: 'ok',
    next_attempt_at: null,
    next_attempt_reason: null,
    note: null,
  },
];

export const Delivery = Type.Object(
  {
    delivery_id: Type.String(),
    event_id: Type.String(),
    event: Type.String(),
    webhook_id: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempt_count: Type.Integer({ description: 'attempts made so far, over every cycle' }),
    created_at: Time,
    last_attempt_at: Nullable(Time),
    next_attempt_at: Nullable(Time),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    failure_reason: Nullable(Type.String()),
    chat: Nullable(
      Type.String({
        description:
          "the chat its event concerns (a message's chat, the chat of the message an ack, edit, revoke or " +
          'reaction concerns, a group event\'s group), or "*" for events of the whole session; null for ' +
          'deliveries stored before Herald kept chats',
      }),
    ),
    waiting_for: Nullable(
      Type.String({
        description:
          'for a webhook ordered by chat: the delivery this one waits for, the first of its chat still pending ' +
          '(in flight, or waiting for its retry); null when it is not waiting',
      }),
    ),
  },
  { $id: 'Delivery', examples: [DELIVERY_EXAMPLE] },
);

export const Attempt = Type.Object(
  {
    attempt: Type.Integer(),
    trigger: Type.Union([Type.Literal('scheduled'), Type.Literal('manual')]),
    started_at: Time,
    duration_ms: Type.Integer(),
    status_code: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    response_body: Nullable(Type.String()),
    next_attempt_at: Nullable(Time),
    next_attempt_reason: Nullable(Type.String()),
    note: Nullable(Type.String({ description: 'e.g. that the media link in the body had expired' })),
  },
  { $id: 'Attempt', examples: [ATTEMPTS_EXAMPLE[1]] },
);

/** A delivery with its exact request body and every attempt (`attempt_count` of them). */
export const DeliveryDetail = Type.Object(
  {
    ...Delivery.properties,
    media_failure: Nullable(
      Type.String({
        description:
          "why the engine's media file of the event was not stored (the receiver's media object says only failed or " +
          'too_large), e.g. "the engine answered 401: set ENGINE_MEDIA_HEADERS, e.g. X-Api-Key: <WAHA_API_KEY>"; ' +
          'null when it was stored or there was none',
      }),
    ),
    request_body: Type.String(),
    attempts: Type.Array(Type.Ref('Attempt')),
  },
  {
    $id: 'DeliveryDetail',
    examples: [
      {
        ...DELIVERY_EXAMPLE,
        media_failure: null,
        request_body:
          '{"event_id":"evt_01jd5q7h2k9x4m8n3p6r0t1v2w","event":"message","instance_id":"ins_01jd5q7h2k9x4m8n3p6r0t1v2a","timestamp":1795341600000,"payload":{"id":"false_15557654321@c.us_3EB0C767D26A1D8F4A2B","from":"15557654321@c.us","from_phone":"15557654321","fromMe":false,"body":"Hi! Is my order on its way?","hasMedia":false}}',
        attempts: ATTEMPTS_EXAMPLE,
      },
    ],
  },
);

export const ErrorResponse = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    }),
  },
  { $id: 'Error' },
);

/** `{ success: true, ...fields }` */
export const Ok = <T extends Record<string, TSchema>>(fields: T, options: { description?: string } = {}) =>
  Type.Object({ success: Type.Literal(true), ...fields }, options);

/** The answers several operations give, named once. */
export const ENVELOPES = [
  Type.Object({ success: Type.Literal(true) }, { $id: 'Success' }),
  Type.Object({ success: Type.Literal(true), instance: Type.Ref('Instance') }, { $id: 'InstanceResponse' }),
  Type.Object({ success: Type.Literal(true), webhook: Type.Ref('Webhook') }, { $id: 'WebhookResponse' }),
  Type.Object(
    {
      success: Type.Literal(true),
      event_id: Type.String({ description: 'the one given, or the one Herald made' }),
      deliveries: Type.Integer({ description: 'deliveries queued: one per subscribed, enabled webhook' }),
      duplicate: Type.Optional(
        Type.Literal(true, {
          description:
            "only from the engine's webhook: the engine reported this message again within ENGINE_DEDUPE_S; not stored",
        }),
      ),
    },
    { $id: 'EventAccepted' },
  ),
];

/** A response of a named envelope (one of ENVELOPES or the shared resources), said what it is for this operation. */
export const Answer = (id: string, description: string) => Type.Ref(id, { description });

export const SHARED_SCHEMAS = [
  Instance,
  Webhook,
  Delivery,
  Attempt,
  DeliveryDetail,
  ErrorResponse,
  ...ENVELOPES,
];
