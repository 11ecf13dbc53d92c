/**
 * A webhook's configuration as the API takes it: one body for create and PATCH (PATCH replaces the whole
 * configuration, so a control left out is removed), its field rules, and the destination guard.
 */
import { type Static, Type } from '@sinclair/typebox';
import { maskPassword, restorePassword } from '../domain/broker-url.ts';
import { checkHeaders, unmaskHeaders } from '../domain/custom-headers.ts';
import { destinationKind, isBrokerKind } from '../domain/destination-kind.ts';
import { OPERATIONAL_KINDS } from '../domain/event-kinds.ts';
import { isEventKind } from '../domain/events.ts';
import { checkFilter } from '../domain/filter.ts';
import { quote } from '../domain/quote.ts';
import { standardKey } from '../domain/signature.ts';
import type { FieldError, Filter, Webhook } from '../domain/types.ts';
import { urlCharacterProblem } from '../domain/url-characters.ts';
import { checkDestination } from '../net/destination.ts';
import type { SecretChange, WebhookConfig } from '../store/records.ts';
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';
import { IGNORE_STATUS_DESCRIPTION, Ordering } from './schemas.ts';

export const RateLimit = Type.Object(
  {
    per_second: Type.Integer({
      minimum: 1,
      maximum: 10_000,
      description: 'deliveries started per second at most',
    }),
  },
  { additionalProperties: false },
);

export const WebhookBody = Type.Object(
  {
    destination_url: Type.String({
      description:
        'absolute http(s) URL, or a broker: amqp(s)://user:pass@host/vhost?exchange=E&routing_key=K (RabbitMQ), ' +
        'nats://user:pass@host/subject or tls:// (NATS JetStream), redis(s)://:pass@host/db?stream=S&maxlen=N ' +
        '(Redis Streams); at most 2048 characters. A password is shown as ****',
    }),
    events: Type.Array(Type.String({ title: 'event kind' }), {
      minItems: 1,
      description: 'event kinds, or ["*"] for all',
    }),
    client_sign_secret: Type.Optional(Type.String({ maxLength: 1024 })),
    ignore_status: Type.Optional(Type.Boolean({ description: IGNORE_STATUS_DESCRIPTION })),
    clear_client_sign: Type.Optional(Type.Boolean({ description: 'PATCH only: remove the stored secret' })),
    enabled: Type.Optional(Type.Boolean({ description: 'refused: use POST …/enabled' })),
    filter: Type.Optional(
      Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
        description:
          'which events of its kinds it receives: dotted paths of the delivery body to a value, or to one of ' +
          '$eq, $ne, $in, $nin, $exists, $prefix; $and / $or take lists of such objects; at most 4 KiB',
        examples: [{ 'payload.fromMe': false, 'payload.from': { $prefix: '49' } }],
      }),
    ),
    headers: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description:
          'its own headers, sent with every attempt: at most 20, values at most 1 KiB of Latin-1 text without ' +
          'control characters; Expect, Upgrade, Keep-Alive, TE, Trailer and Proxy-* are refused. Values are ' +
          'write-only: shown as ****, and **** given back keeps the saved value of that header',
        examples: [{ Authorization: 'Bearer rcv_…' }],
      }),
    ),
    rate_limit: Type.Optional(Type.Union([RateLimit, Type.Null()])),
    standard_webhooks: Type.Optional(
      Type.Boolean({
        description:
          "Standard Webhooks' headers too (webhook-id, webhook-timestamp, webhook-signature); the secret must then " +
          'be whsec_ and the base64 of 24 to 64 bytes',
      }),
    ),
    ordering: Type.Optional(Ordering),
  },
  {
    additionalProperties: false,
    // Valid for create and PATCH alike (a test posts it): no `enabled`, no `clear_client_sign`.
    examples: [
      {
        destination_url: 'https://hooks.example.com/herald',
        events: ['message', 'message.ack', 'session.status'],
        client_sign_secret: 'whsec_3b8f0c2a9d4e6f1b7c5a8e2d0f9b4c6a',
        ignore_status: true,
        filter: { 'payload.fromMe': false },
        headers: { Authorization: 'Bearer rcv_live_5f2c' },
        rate_limit: { per_second: 20 },
        standard_webhooks: false,
        ordering: 'chat',
      },
    ],
  },
);
export type WebhookBodyType = Static<typeof WebhookBody>;

/**
 * The configuration a valid body asks for; a 400 naming each field that breaks a rule, or a 422 for the address.
 * On PATCH, `current` is the webhook as it is (a secret kept must suit standard_webhooks too).
 */
export async function webhookConfig(
  ctx: Pick<ApiContext, 'destinations' | 'secretBox'>,
  body: WebhookBodyType,
  current: Webhook | null,
): Promise<WebhookConfig> {
  const mode = current ? 'patch' : 'create';
  const errors: FieldError[] = [];
  if (body.enabled !== undefined) {
    errors.push({
      field: 'enabled',
      message: 'is set only by POST /instances/{id}/webhooks/{webhook_id}/enabled',
    });
  }
  if (mode === 'create' && body.clear_client_sign !== undefined) {
    errors.push({ field: 'clear_client_sign', message: 'is allowed on PATCH only' });
  }
  if (mode === 'patch' && body.clear_client_sign === true && body.client_sign_secret) {
    errors.push({
      field: 'clear_client_sign',
      message: 'cannot be true together with a new client_sign_secret',
    });
  }
  errors.push(...eventListErrors(body.events));
  // Checked before any parsing, which would drop or rewrite these characters; then the URL is not read further.
  const badCharacters = urlCharacterProblem(body.destination_url);
  if (badCharacters) errors.unshift({ field: 'destination_url', message: badCharacters });
  const destination = badCharacters ? null : destinationOf(ctx, body.destination_url, current);
  if (destination && 'error' in destination) errors.push(destination.error);
  if (body.standard_webhooks) errors.push(...standardSecretErrors(ctx, body, current));
  if (body.filter != null) errors.push(...checkFilter(body.filter));
  const headers = headersOf(ctx, body.headers, current);
  errors.push(...headers.errors);
  const problem = badCharacters ? null : await checkDestination(body.destination_url, ctx.destinations);
  if (problem?.code === 'invalid_request')
    errors.unshift({ field: problem.field, message: stripField(problem.message) });
  if (errors.length) throw HttpError.invalid(errors);
  if (problem) {
    throw new HttpError('destination_not_allowed', problem.message, [
      { field: problem.field, message: stripField(problem.message) },
    ]);
  }
  // An empty secret keeps the current one; clear_client_sign removes it.
  const secret: SecretChange = body.clear_client_sign
    ? { kind: 'clear' }
    : body.client_sign_secret
      ? { kind: 'set', sealed: ctx.secretBox.seal(body.client_sign_secret) }
      : { kind: 'keep' };
  const { destination_url, destination_sealed } = destination as Exclude<
    typeof destination,
    { error: FieldError } | null
  >;
  return {
    destination_url,
    destination_sealed,
    events: body.events,
    ignore_status: body.ignore_status ?? true,
    secret,
    filter: body.filter && Object.keys(body.filter).length > 0 ? (body.filter as Filter) : null,
    headers_sealed: headers.saved ? ctx.secretBox.seal(JSON.stringify(headers.saved)) : null,
    rate_limit: body.rate_limit?.per_second ?? null,
    standard_webhooks: body.standard_webhooks ?? false,
    ordering: body.ordering ?? 'none',
  };
}

/**
 * A broker URL's password is kept sealed, and the URL shown (and logged) with **** in its place; given back as it is
 * shown, on PATCH, it keeps the password the webhook has, as long as the URL still names the same server and user.
 */
function destinationOf(
  ctx: Pick<ApiContext, 'secretBox'>,
  url: string,
  current: Webhook | null,
): { destination_url: string; destination_sealed: string | null } | { error: FieldError } {
  if (!isBrokerKind(destinationKind(url))) return { destination_url: url, destination_sealed: null };
  const shown = maskPassword(url);
  if (!url.includes('****')) {
    return { destination_url: shown, destination_sealed: shown === url ? null : ctx.secretBox.seal(url) };
  }
  if (current?.destination_url === url) {
    return { destination_url: url, destination_sealed: current.destination_sealed ?? null };
  }
  const original = current?.destination_sealed ? ctx.secretBox.open(current.destination_sealed) : null;
  const restored = original === null ? null : restorePassword(url, original);
  if (restored !== null) return { destination_url: url, destination_sealed: ctx.secretBox.seal(restored) };
  return {
    error: {
      field: 'destination_url',
      message:
        "**** stands for the webhook's current password, for the same server and user only (scheme, host, port " +
        'and user unchanged): give the password',
    },
  };
}

/**
 * The headers to save (null for none), with what is wrong with them; a value `****` keeps the value the webhook
 * has for that header.
 */
function headersOf(
  ctx: Pick<ApiContext, 'secretBox'>,
  given: WebhookBodyType['headers'],
  current: Webhook | null,
): { saved: Record<string, string> | null; errors: FieldError[] } {
  if (given == null) return { saved: null, errors: [] };
  const errors = checkHeaders(given);
  if (errors.length) return { saved: null, errors };
  const stored = current?.headers_sealed ? JSON.parse(ctx.secretBox.open(current.headers_sealed)) : null;
  const { headers, errors: unknown } = unmaskHeaders(given as Record<string, string>, stored);
  return { saved: Object.keys(headers).length > 0 ? headers : null, errors: unknown };
}

/** A Standard Webhooks secret is `whsec_` and base64: the one given, or the one kept. */
function standardSecretErrors(
  ctx: Pick<ApiContext, 'secretBox'>,
  body: WebhookBodyType,
  current: Webhook | null,
): FieldError[] {
  const kept = !body.client_sign_secret && !body.clear_client_sign ? current?.secret_sealed : null;
  const secret = body.client_sign_secret || (kept ? ctx.secretBox.open(kept) : null);
  if (secret === null || standardKey(secret)) return [];
  return [
    {
      field: 'client_sign_secret',
      message: body.client_sign_secret
        ? STANDARD_SECRET_RULE
        : `${STANDARD_SECRET_RULE}; the webhook's current secret is not: set a new one, or rotate it`,
    },
  ];
}

/** Said alike wherever a Standard Webhooks secret is refused. */
export const STANDARD_SECRET_RULE =
  'must be whsec_ followed by the base64 of 24 to 64 bytes when standard_webhooks is true';

/** `*` takes every kind but Herald's operational ones, which may be named beside it. */
function eventListErrors(events: string[]): FieldError[] {
  if (events.includes('*') && events.some((k) => k !== '*' && !OPERATIONAL_KINDS.includes(k))) {
    return [
      {
        field: 'events',
        message: `"*" stands for every kind and must be alone, or beside Herald's own (${OPERATIONAL_KINDS.join(', ')})`,
      },
    ];
  }
  const errors: FieldError[] = [];
  for (const [i, kind] of events.entries()) {
    if (kind !== '*' && !isEventKind(kind))
      errors.push({ field: `events[${i}]`, message: `unknown event kind ${quote(kind)}` });
    else if (events.indexOf(kind) !== i)
      errors.push({ field: `events[${i}]`, message: `duplicate event kind ${quote(kind)}` });
  }
  return errors;
}

/** The destination module's messages start with the field name; details carry it separately. */
const stripField = (message: string) => message.replace(/^destination_url: /, '');
