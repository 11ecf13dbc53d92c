/** The delivery log and manual redelivery. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isEventKind } from '../../domain/events.ts';
import { quote } from '../../domain/quote.ts';
import { seesOperatorDeliveries } from '../../domain/rights.ts';
import { webhookDisabledConflict } from '../../domain/store-rules.ts';
import { mediaLinkExpiry } from '../../media/media.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { roleOf } from '../rights.ts';
import { IdParam, InstanceParams, Ok } from '../schemas.ts';
import { attemptView, deliveryView } from '../views.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const ListQuery = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    ),
    webhook_id: Type.Optional(IdParam('webhook id', 'whk')),
    event: Type.Optional(Type.String()),
    event_id: Type.Optional(IdParam('event id', 'evt')),
    chat: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "one chat's deliveries (with status=pending: its queue)",
      }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'deliveries created at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'deliveries created before' })),
    limit: Type.Optional(
      Type.String({
        pattern: '^(?:[1-9]\\d?|1\\d\\d|200)$',
        description: 'an integer from 1 to 200; default 50',
      }),
    ),
    cursor: Type.Optional(
      Type.String({ pattern: '^\\d{1,18}$', description: 'the next_cursor of a previous page' }),
    ),
  },
  { additionalProperties: false },
);
const DeliveryParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  delivery_id: IdParam('delivery id', 'dlv'),
});
const RedeliverBody = Type.Object(
  {
    webhook_id: Type.Optional(IdParam('webhook id', 'whk')),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'deliveries created at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'deliveries created before' })),
  },
  {
    additionalProperties: false,
    examples: [{ since: '2026-11-21T00:00:00Z', until: '2026-11-22T00:00:00Z' }],
  },
);

/** The operator's deliveries (of operational events) are in their instance's log for the admin alone. */
const isAdmin = (request: FastifyRequest) => seesOperatorDeliveries(roleOf(request.principal));

export function deliveryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['deliveries'];

  app.get(
    '/instances/:instance_id/deliveries',
    {
      schema: {
        tags,
        params: InstanceParams,
        querystring: ListQuery,
        response: {
          200: Ok(
            {
              deliveries: Type.Array(Type.Ref('Delivery')),
              next_cursor: Type.Union([Type.String(), Type.Null()], {
                description: 'pass it as cursor for the next page; null on the last',
              }),
            },
            { description: 'A page of deliveries, newest first' },
          ),
        },
        errors: [...INSTANCE_ERRORS, 'invalid_delivery_filter'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const q = request.query as Static<typeof ListQuery>;
      if (q.event !== undefined && !isEventKind(q.event)) {
        throw HttpError.invalid([{ field: 'event', message: `unknown event kind ${quote(q.event)}` }]);
      }
      const page = await ctx.store.log.listDeliveries(instance.instance_id, {
        status: q.status,
        webhook_id: q.webhook_id,
        event: q.event,
        event_id: q.event_id,
        chat: q.chat,
        since: q.since === undefined ? undefined : parseTime('since', q.since),
        until: q.until === undefined ? undefined : parseTime('until', q.until),
        limit: q.limit ? Number(q.limit) : 50,
        cursor: q.cursor,
        operator: isAdmin(request),
      });
      return { success: true, deliveries: page.deliveries.map(deliveryView), next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/instances/:instance_id/deliveries/:delivery_id',
    {
      schema: {
        tags,
        params: DeliveryParams,
        response: {
          200: Ok(
            { delivery: Type.Ref('DeliveryDetail') },
            { description: 'The delivery, the exact body sent and every attempt' },
          ),
        },
        errors: [...INSTANCE_ERRORS, 'delivery_not_found'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const { delivery_id } = request.params as Static<typeof DeliveryParams>;
      const detail = await ctx.store.log.getDelivery(instance.instance_id, delivery_id, isAdmin(request));
      if (!detail) throw HttpError.notFound('delivery', delivery_id);
      return {
        success: true,
        delivery: {
          ...deliveryView(detail),
          media_failure: detail.media_failure,
          request_body: detail.request_body,
          attempts: detail.attempts_log.map((a) => attemptView(a, mediaLinkExpiry(detail.request_body))),
        },
      };
    },
  );

  app.post(
    '/instances/:instance_id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        tags,
        params: DeliveryParams,
        response: {
          202: Ok(
            {
              delivery: Type.Ref('Delivery'),
              warnings: Type.Array(Type.String(), { description: 'e.g. that the media link has expired' }),
            },
            { description: 'Pending again, with a fresh set of attempts; the body is sent unchanged' },
          ),
        },
        errors: [...INSTANCE_ERRORS, 'delivery_not_found', 'not_redeliverable'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const { delivery_id } = request.params as Static<typeof DeliveryParams>;
      const now = ctx.clock();
      const result = await ctx.store.log.redeliver(instance.instance_id, delivery_id, now, isAdmin(request));
      if (!result) throw HttpError.notFound('delivery', delivery_id);
      if (!result.ok) throw new HttpError('conflict', result.conflict);
      const warnings = await expiredMediaWarning(instance.instance_id, delivery_id, now);
      if (warnings.length) request.log.warn({ delivery_id }, warnings[0]);
      return reply.status(202).send({ success: true, delivery: deliveryView(result.delivery), warnings });
    },
  );

  app.post(
    '/instances/:instance_id/deliveries/redeliver',
    {
      schema: {
        tags,
        params: InstanceParams,
        body: RedeliverBody,
        response: {
          202: Ok(
            { redelivered: Type.Integer() },
            { description: 'How many failed deliveries are pending again' },
          ),
        },
        errors: [
          ...INSTANCE_ERRORS,
          'invalid_redelivery_range',
          'webhook_not_found',
          'redelivery_webhook_disabled',
        ],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const body = request.body as Static<typeof RedeliverBody>;
      if (body.webhook_id !== undefined) {
        const webhook = await ctx.store.webhooks.getWebhook(instance.instance_id, body.webhook_id);
        if (!webhook) throw HttpError.notFound('webhook', body.webhook_id);
        if (!webhook.enabled) throw new HttpError('conflict', webhookDisabledConflict(webhook.webhook_id));
      }
      const redelivered = await ctx.store.log.redeliverFailed(
        instance.instance_id,
        {
          webhook_id: body.webhook_id,
          since: body.since === undefined ? undefined : parseTime('since', body.since),
          until: body.until === undefined ? undefined : parseTime('until', body.until),
        },
        ctx.clock(),
      );
      return reply.status(202).send({ success: true, redelivered });
    },
  );

  /** The body is sent unchanged, so a media link that has expired stays expired: say so. */
  async function expiredMediaWarning(instanceId: string, deliveryId: string, now: number): Promise<string[]> {
    const detail = await ctx.store.log.getDelivery(instanceId, deliveryId);
    const expiry = detail ? mediaLinkExpiry(detail.request_body) : null;
    if (expiry === null || expiry > now) return [];
    return [
      `payload.media: the media link expired at ${new Date(expiry).toISOString()}; ` +
        'the body is redelivered unchanged and the receiver will get 410 from it',
    ];
  }
}

/**
 * A date-time the schema accepted (RFC 3339), in epoch ms. Date.parse answers NaN — a range that would silently
 * match nothing — for two RFC 3339 forms: a leap second (…:60), which POSIX time counts as the next second,
 * and an hour-only offset (+02).
 */
function parseTime(field: string, value: string): number {
  const leap = /:60(?=[.zZ+-])/.test(value);
  const ms = Date.parse(value.replace(/:60(?=[.zZ+-])/, ':59').replace(/([+-]\d\d)$/, '$1:00'));
  if (Number.isNaN(ms)) throw HttpError.invalid([{ field, message: 'must be an RFC 3339 date-time' }]);
  return ms + (leap ? 1000 : 0);
}
