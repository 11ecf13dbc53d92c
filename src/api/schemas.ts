/** JSON Schemas of the API's resources: they validate requests, shape responses and make /openapi.json. */
import { type TSchema, Type } from '@sinclair/typebox';

const Time = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const IdParam = (name: string, prefix: string) =>
  Type.String({
    pattern: `^${prefix}_[A-Za-z0-9_-]{1,100}$`,
    description: `${prefix}_ followed by 1 to 100 letters, digits, _ or -; the ${name}`,
  });

export const InstanceParams = Type.Object({ instance_id: IdParam('instance id', 'ins') });

export const Instance = Type.Object(
  {
    instance_id: Type.String(),
    name: Type.String(),
    status: Type.String({ description: 'last session.status published; STOPPED before any' }),
    phone: Nullable(Type.String()),
    created_at: Time,
    // Beyond SPEC §5, for the instance list and "Redeliver all failed" (which must say how many before acting).
    counts: Type.Object({
      webhooks: Type.Integer(),
      failed_deliveries: Type.Integer(),
      redeliverable_deliveries: Type.Integer({
        description: 'failed deliveries of enabled webhooks: what POST …/deliveries/redeliver restarts now',
      }),
    }),
  },
  { $id: 'Instance' },
);

export const Webhook = Type.Object(
  {
    webhook_id: Type.String(),
    instance_id: Type.String(),
    destination_url: Type.String(),
    events: Type.Array(Type.String()),
    ignore_status: Type.Boolean(),
    enabled: Type.Boolean(),
    client_sign_secret_set: Type.Boolean(),
    disabled_reason: Nullable(
      Type.String({ description: '"gone" when a receiver answered 410, "disabled" by request' }),
    ),
    disabled_at: Nullable(Time),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Webhook' },
);

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
  },
  { $id: 'Delivery' },
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
  { $id: 'Attempt' },
);

/** A delivery with its exact request body and every attempt (`attempt_count` of them). */
export const DeliveryDetail = Type.Object(
  { ...Delivery.properties, request_body: Type.String(), attempts: Type.Array(Type.Ref('Attempt')) },
  { $id: 'DeliveryDetail' },
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
export const Ok = <T extends Record<string, TSchema>>(fields: T) =>
  Type.Object({ success: Type.Literal(true), ...fields });

const errorRef = Type.Ref('Error');

/** Responses of a route: its success body and the errors every route can give. */
export function responses(status: number, body: TSchema): Record<number, TSchema> {
  // 429: every authenticated route is rate-limited per key (src/api/rate-limit.ts).
  return {
    [status]: body,
    400: errorRef,
    401: errorRef,
    403: errorRef,
    404: errorRef,
    409: errorRef,
    429: errorRef,
  };
}

export const SHARED_SCHEMAS = [Instance, Webhook, Delivery, Attempt, DeliveryDetail, ErrorResponse];
