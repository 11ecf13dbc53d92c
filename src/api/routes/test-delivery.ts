/**
 * Test delivery: POST /instances/{id}/webhooks/{webhook_id}/test sends the sample event of a kind to one webhook
 * through the normal pipeline (stored, signed, retried, logged like any delivery), so a user can check an endpoint.
 *
 * Choices: a disabled webhook is a 409 (it receives nothing until enabled, as for redelivery);
 * a kind the webhook does not subscribe to is a 400, since it could never receive that kind. The event goes to
 * this webhook only, whatever others subscribe to. A test session.status repeats the instance's current status
 * and phone, so testing never changes what the session page shows.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { eventBody } from '../../domain/event-body.ts';
import { EVENT_KINDS, isEventKind } from '../../domain/events.ts';
import { newId } from '../../domain/ids.ts';
import { samplePayload } from '../../domain/samples.ts';
import type { Instance, Webhook } from '../../domain/types.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { IdParam, Ok } from '../schemas.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const Params = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  webhook_id: IdParam('webhook id', 'whk'),
});
const Body = Type.Object(
  {
    event: Type.String({ description: `an event kind the webhook subscribes to: ${EVENT_KINDS.join(', ')}` }),
  },
  { additionalProperties: false, examples: [{ event: 'message' }] },
);

function testPayload(kind: string, instance: Instance): Record<string, unknown> {
  if (kind !== 'session.status') return samplePayload(kind);
  return instance.phone ? { status: instance.status, phone: instance.phone } : { status: instance.status };
}

function subscribes(webhook: Webhook, kind: string): boolean {
  return webhook.events.includes('*') || webhook.events.includes(kind);
}

export function testDeliveryRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post(
    '/instances/:instance_id/webhooks/:webhook_id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a sample event of a kind to this webhook',
        params: Params,
        body: Body,
        response: {
          202: Ok(
            { event_id: Type.String(), delivery_id: Type.String(), event: Type.String() },
            {
              description:
                'The sample event is stored and its delivery queued; follow it in the delivery log',
            },
          ),
        },
        errors: [...INSTANCE_ERRORS, 'webhook_not_found', 'invalid_test_event', 'test_webhook_disabled'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const { webhook_id } = request.params as Static<typeof Params>;
      const { event } = request.body as Static<typeof Body>;
      const webhook = await ctx.store.webhooks.getWebhook(instance.instance_id, webhook_id);
      if (!webhook) throw HttpError.notFound('webhook', webhook_id);
      if (!isEventKind(event))
        throw HttpError.invalid([{ field: 'event', message: `unknown event kind "${event}"` }]);
      if (!subscribes(webhook, event)) {
        throw HttpError.invalid([
          {
            field: 'event',
            message: `webhook ${webhook_id} does not subscribe to "${event}" (its events: ${webhook.events.join(', ')})`,
          },
        ]);
      }
      const disabled = () =>
        new HttpError(
          'conflict',
          `webhook ${webhook_id} is disabled; enable it before sending a test delivery`,
        );
      if (!webhook.enabled) throw disabled();

      const now = ctx.clock();
      const draft = {
        event_id: newId('evt', now),
        event,
        instance_id: instance.instance_id,
        timestamp: now,
        payload: testPayload(event, instance),
      };
      const [result] = await ctx.events.ingest(
        instance.instance_id,
        [{ ...draft, body: eventBody(draft) }],
        // Only this webhook, and only while it is enabled inside the ingest transaction.
        (_event, webhooks) => webhooks.filter((w) => w.webhook_id === webhook_id && w.enabled),
        now,
      );
      if (result.deliveries === 0) throw disabled(); // disabled between the check and the ingest
      ctx.metrics?.eventsIngested([event]);
      const { deliveries } = await ctx.store.log.listDeliveries(instance.instance_id, {
        event_id: draft.event_id,
        limit: 1,
      });
      return reply
        .status(202)
        .send({ success: true, event_id: draft.event_id, delivery_id: deliveries[0].delivery_id, event });
    },
  );
}
