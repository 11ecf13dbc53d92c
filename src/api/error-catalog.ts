/**
 * Every way an operation can fail, named once: its status, when it happens (said in the docs) and the error Herald
 * answers, made where possible by the very code that makes the real one, so the docs cannot say another message.
 * Routes list the names their handler can answer (`errors` in a route's schema); docs.ts adds those every route of
 * a kind shares (a key, a JSON body, an id in the path) and shows each as a named example of its status.
 * A new kind of failure is one entry here and its name on the routes that give it.
 */
import { checkEngineHmac } from '../domain/engine-hmac.ts';
import { validatePayload } from '../domain/events.ts';
import { readEvolutionBody } from '../domain/evolution-body.ts';
import { parseSourceUrl, SourceUrlProblem } from '../domain/source-url.ts';
import { redeliveryConflict, repeatConflict, webhookDisabledConflict } from '../domain/store-rules.ts';
import { readWahaEnvelope } from '../domain/waha-envelope.ts';
import { Media } from '../media/media.ts';
import { authFailuresLimited } from './auth-failures.ts';
import { EXAMPLE_IDS as ID } from './docs-examples.ts';
import { engineBodyTooLarge } from './engine-body.ts';
import { engineJwtRefused } from './engine-jwt-auth.ts';
import { errorBody, HttpError } from './errors.ts';
import { parseJson } from './json-body.ts';
import { linkErrors } from './media-errors.ts';
import { eventTooLarge } from './publish.ts';
import { keyErrors, rateLimited, rightsErrors, tooManyLinks } from './refusals.ts';
import { refusalCauses } from './rights.ts';
import { instanceNameInUse } from './source-names.ts';
import { webhookConfig } from './webhook-config.ts';

/** A response header an error comes with, as OpenAPI describes one. */
interface Header {
  description: string;
  schema: { type: 'integer' | 'string' };
}

export interface ErrorCause {
  status: number;
  /** When it happens, as a clause: "the instance does not exist". */
  when: string;
  /** The error as Herald answers it. */
  example: () => HttpError | Promise<HttpError>;
  headers?: Record<string, Header>;
}

const RETRY_AFTER: Record<string, Header> = {
  'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } },
};

const invalid = (field: string, message: string) => HttpError.invalid([{ field, message }]);
const conflict = (message: string | null) => new HttpError('conflict', message ?? '');

/** The HttpError `run` throws: examples made by the code that refuses the real request. */
async function thrown(run: () => unknown): Promise<HttpError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('the example request was accepted');
}

/** A webhook's configuration as the API would judge it; only IP literals, so no name is looked up. */
const judgeWebhook = (destination_url: string, events: string[]) =>
  thrown(() =>
    webhookConfig(
      { destinations: { allowPrivate: false }, secretBox: undefined as never },
      { destination_url, events },
      null,
    ),
  );

export const ERROR_CAUSES = {
  // Every authenticated route (docs.ts adds these).
  missing_key: {
    status: 401,
    when: 'no Authorization: Bearer key',
    example: keyErrors.missing,
  },
  unauthorized: {
    status: 401,
    when: 'a key or portal link Herald does not know (unknown or revoked)',
    example: keyErrors.unknown,
  },
  portal_link_expired: {
    status: 401,
    when: 'a portal link past its expires_at',
    example: keyErrors.expiredLink,
  },
  auth_failures_limited: {
    status: 429,
    when:
      'this client address failed to authenticate more than AUTH_FAILURES_PER_MIN times within a minute: every ' +
      'request from it is refused for the rest of that minute, whatever its key',
    example: () => authFailuresLimited(30, 60),
    headers: RETRY_AFTER,
  },
  rate_limited: {
    status: 429,
    when: 'this key made more management requests per second than RATE_LIMIT_MANAGEMENT allows',
    example: () => rateLimited(100, 'management'),
    headers: RETRY_AFTER,
  },
  ingest_rate_limited: {
    status: 429,
    when: 'this key published more often per second than RATE_LIMIT_INGEST allows',
    example: () => rateLimited(1000, 'ingest'),
    headers: RETRY_AFTER,
  },
  internal: {
    status: 500,
    when: 'a fault of Herald’s; the details are in its log, never in the answer',
    example: () => new HttpError('internal', 'internal error'),
  },
  // Every route with an id in its path, and every route with a JSON body (docs.ts adds these).
  invalid_path: {
    status: 400,
    when: 'an id in the path is not in its form (ins_…, whk_…, dlv_…, key_…)',
    example: () => invalid('instance_id', 'must be ins_ followed by 1 to 100 letters, digits, _ or -'),
  },
  // The routes of /sources, whose only path id is the source's.
  invalid_source_path: {
    status: 400,
    when: 'the source id in the path is not in its form (src_…)',
    example: () => invalid('source_id', 'must be src_ followed by 1 to 100 letters, digits, _ or -'),
  },
  malformed_json: {
    status: 400,
    when: 'the body is not valid JSON',
    example: () => thrown(() => parseJson(Buffer.from('{"name": '))),
  },
  payload_too_large: {
    status: 413,
    when: 'the body is over this endpoint’s limit',
    example: HttpError.bodyTooLarge,
  },
  not_json: {
    status: 415,
    when: 'the body is not sent as Content-Type: application/json',
    example: HttpError.notJson,
  },

  // Keys, links and their rights: a refusal per principal without the right a route needs (rights.ts).
  ...refusalCauses(),
  other_instance: {
    status: 403,
    when: 'an instance key or portal link of another instance',
    example: () => rightsErrors.otherInstance('manage_key'),
  },
  admin_only_field: {
    status: 403,
    when: 'a manage key sets a field only the admin key may change (engine_hmac_key, engine_media_prefix)',
    example: () => rightsErrors.field('manage_key', 'engine_hmac_key'),
  },
  invalid_key: {
    status: 400,
    when: 'scope is neither manage nor publish, or the body has another field',
    example: () => invalid('scope', 'must be one of manage, publish'),
  },
  engine_hmac: {
    status: 401,
    when: 'the instance has an engine HMAC key and X-Webhook-Hmac is missing or does not match the body',
    example: () =>
      new HttpError('unauthorized', checkEngineHmac('key', Buffer.from('{}'), undefined, undefined) ?? ''),
  },

  engine_jwt: {
    status: 401,
    when:
      'a bearer JWT (Evolution API’s jwt_key) is not HS256, not signed with the instance’s engine HMAC key, or has ' +
      'expired; or the instance has no engine HMAC key',
    example: () => engineJwtRefused('Authorization: the token has expired'),
  },

  // What does not exist.
  instance_not_found: {
    status: 404,
    when: 'the instance does not exist',
    example: () => HttpError.notFound('instance', ID.instance),
  },
  webhook_not_found: {
    status: 404,
    when: 'the webhook does not exist on this instance',
    example: () => HttpError.notFound('webhook', ID.webhook),
  },
  delivery_not_found: {
    status: 404,
    when: 'the delivery does not exist on this instance',
    example: () => HttpError.notFound('delivery', ID.delivery),
  },
  portal_link_not_found: {
    status: 404,
    when: 'the portal link does not exist on this instance (or was revoked)',
    example: () => HttpError.notFound('portal link', ID.portalLink),
  },
  key_not_found: {
    status: 404,
    when: 'the key does not exist on this instance (or was revoked)',
    example: () => HttpError.notFound('key', ID.key),
  },
  media_not_found: {
    status: 404,
    when: 'the file is no longer stored (its instance was deleted, or it was swept)',
    example: () => HttpError.notFound('media', ID.media),
  },

  // Instances and webhooks.
  invalid_instance: {
    status: 400,
    when: 'a field breaks its rule (name at most 200 characters; engine_hmac_key 1 to 1024, or null)',
    example: () => invalid('name', 'must be at most 200 characters'),
  },
  invalid_webhook: {
    status: 400,
    when: 'a field breaks its rule: the message names the field and the rule, details lists every one',
    example: () => judgeWebhook('https://203.0.113.7/hook', ['message', 'mesage']),
  },
  destination_not_allowed: {
    status: 422,
    when: 'the destination_url host is not globally reachable (a private, loopback or link-local address, localhost)',
    example: () => judgeWebhook('https://10.0.0.5/hook', ['message']),
  },
  too_many_webhooks: {
    status: 409,
    when: 'the instance already has MAX_WEBHOOKS_PER_INSTANCE webhooks',
    example: () =>
      conflict(
        'webhooks: an instance may have at most 100 webhooks (MAX_WEBHOOKS_PER_INSTANCE); delete one first',
      ),
  },
  too_many_portal_links: {
    status: 409,
    when: 'the instance already has PORTAL_MAX_LINKS live portal links',
    example: () => tooManyLinks(100),
  },
  invalid_portal_link: {
    status: 400,
    when: 'a field breaks its rule: ttl_s 60 to 86400, read_only true or false',
    example: () => invalid('ttl_s', 'must be at least 60'),
  },
  invalid_enabled: {
    status: 400,
    when: 'the body has no enabled, or one that is not true or false',
    example: () => invalid('enabled', 'is required'),
  },
  invalid_rotation: {
    status: 400,
    when:
      'a field breaks its rule: grace_s 0 to 604800, client_sign_secret 1 to 1024 characters (on a webhook with ' +
      'standard_webhooks, whsec_ and the base64 of 24 to 64 bytes)',
    example: () => invalid('grace_s', 'must be at most 604800'),
  },
  source_not_found: {
    status: 404,
    when: 'the source does not exist (or was deleted)',
    example: () => HttpError.notFound('source', 'src_01jd5q7h2k9x4m8n3p6r0t1v2s'),
  },
  invalid_source: {
    status: 400,
    when:
      'a field breaks its rule: the url (scheme, host, port, path and parameters, the message names the part), a ' +
      'format Herald does not read, an instance_id of no instance, or **** for a password the source does not have',
    example: () => {
      const problem = parseSourceUrl('amqp://rabbit:5672/%2F');
      return invalid('url', problem instanceof SourceUrlProblem ? problem.message.replace(/^url: /, '') : '');
    },
  },
  instance_name_in_use: {
    status: 409,
    when: 'another instance has this name, and a source without an instance_id names its instances by name',
    example: () => instanceNameInUse('A'),
  },
  invalid_test_event: {
    status: 400,
    when: 'the event kind is unknown, or the webhook does not subscribe to it',
    example: () =>
      invalid(
        'event',
        `webhook ${ID.webhook} does not subscribe to "message.ack" (its events: message, session.status)`,
      ),
  },
  test_webhook_disabled: {
    status: 409,
    when: 'the webhook is disabled',
    example: () => conflict(`webhook ${ID.webhook} is disabled; enable it before sending a test delivery`),
  },

  // Events.
  invalid_event: {
    status: 400,
    when: 'the event kind is unknown or its payload lacks a field the kind requires',
    example: () => HttpError.invalid(validatePayload('message', { id: 'false_1555@c.us_3EB0' }, '')),
  },
  invalid_batch: {
    status: 400,
    when: 'an event of the batch is invalid: the field names which one (nothing is stored)',
    example: () =>
      HttpError.invalid(validatePayload('message', { id: 'false_1555@c.us_3EB0' }, 'events[3].')),
  },
  invalid_waha_event: {
    status: 400,
    when: 'the body is not a WAHA webhook body (no event, no payload, an id or timestamp out of form)',
    example: () => HttpError.invalid((readWahaEnvelope({ payload: {} }) as { errors: [] }).errors),
  },
  invalid_evolution_event: {
    status: 400,
    when:
      'the body is not an Evolution API event body (no event, no data), or an event Herald maps lacks what it reads ' +
      '(a message without key.id or key.fromMe, an ack without keyId)',
    example: () =>
      HttpError.invalid(
        (readEvolutionBody(ID.instance, { event: 'messages.upsert', data: { key: {} } }) as { errors: [] })
          .errors,
      ),
  },
  engine_body_too_large: {
    status: 413,
    when: 'the engine’s body is larger than ENGINE_MAX_BODY_BYTES (4 MiB by default); logged with its kind and id, and counted',
    example: () => engineBodyTooLarge(4 * 1024 * 1024),
  },
  event_too_large: {
    status: 413,
    when: 'the event’s delivery body would be larger than 256 KiB',
    example: () => eventTooLarge('event'),
  },
  batch_event_too_large: {
    status: 413,
    when: 'an event’s delivery body would be larger than 256 KiB: the field names which (nothing is stored)',
    example: () => eventTooLarge('events[3]'),
  },
  event_id_elsewhere: {
    status: 409,
    when: 'the event_id was already published to another instance (nothing is stored)',
    example: () => conflict(repeatConflict(ID.event, 'ins_another', ID.instance)),
  },

  invalid_stats_hours: {
    status: 400,
    when: 'hours is not an integer from 1 to 168',
    example: () => invalid('hours', 'must be an integer from 1 to 168'),
  },

  // Deliveries.
  invalid_delivery_filter: {
    status: 400,
    when: 'a filter is out of form: an unknown status or event kind, a bad time, limit or cursor',
    example: () => invalid('status', 'must be one of pending, delivered, failed'),
  },
  not_redeliverable: {
    status: 409,
    when: 'the delivery has not failed, or its webhook is disabled',
    example: () => conflict(redeliveryConflict({ status: 'delivered', webhook_id: ID.webhook }, true)),
  },
  invalid_redelivery_range: {
    status: 400,
    when: 'a field is out of form: webhook_id, since or until',
    example: () => invalid('since', 'must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z'),
  },
  redelivery_webhook_disabled: {
    status: 409,
    when: 'the webhook named by webhook_id is disabled',
    example: () => conflict(webhookDisabledConflict(ID.webhook)),
  },

  // Media.
  invalid_media_type: {
    status: 400,
    when: 'Content-Type is not a media type',
    example: () => invalid('Content-Type', Media.checkType('not a type') ?? ''),
  },
  media_too_large: {
    status: 413,
    when: 'the file is larger than MEDIA_MAX_BYTES (the connection closes)',
    example: () => linkErrors.tooLarge(64 * 2 ** 20),
  },
  link_forbidden: {
    status: 403,
    when: 'the link was altered, or its expires or sig is missing',
    example: linkErrors.forbidden,
  },
  link_expired: {
    status: 410,
    when: 'the link has expired',
    example: () => linkErrors.expired(Date.parse('2026-11-22T10:00:00Z') / 1000),
  },
  range_not_satisfiable: {
    status: 416,
    when: 'Range asks for bytes outside the file; Content-Range says its size',
    example: () => linkErrors.outsideFile(480),
    headers: { 'Content-Range': { description: 'bytes */<size>', schema: { type: 'string' } } },
  },

  // Operations.
  database_unavailable: {
    status: 503,
    when: 'the database is unavailable (its connections lost or refused, its disk full); nothing was stored, send it again after Retry-After',
    example: () => HttpError.unavailable(),
    headers: RETRY_AFTER,
  },
} satisfies Record<string, ErrorCause>;

export type ErrorName = keyof typeof ERROR_CAUSES;

/** Every cause's example body, made once (some are made by async checks). */
export async function errorExamples(): Promise<Map<ErrorName, ReturnType<typeof errorBody>>> {
  const names = Object.keys(ERROR_CAUSES) as ErrorName[];
  const errors = await Promise.all(names.map((n) => (ERROR_CAUSES[n] as ErrorCause).example()));
  return new Map(names.map((n, i) => [n, errorBody(errors[i].code, errors[i].message, errors[i].details)]));
}
