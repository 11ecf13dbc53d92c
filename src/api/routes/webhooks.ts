/** Webhooks of an instance (seed §4, SPEC §6). */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isEventKind } from '../../domain/events.ts';
import { newId } from '../../domain/ids.ts';
import { quote } from '../../domain/quote.ts';
import type { FieldError, Webhook } from '../../domain/types.ts';
import { checkDestination } from '../../net/destination.ts';
import type { SecretChange } from '../../store/store.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { IdParam, Ok, responses } from '../schemas.ts';
import { webhookView } from '../views.ts';
import { loadInstance } from './instances.ts';

/** One body shape for create and PATCH; the fields only one of them allows are refused by rule, with a reason. */
const WebhookBody = Type.Object(
  {
    destination_url: Type.String({ description: 'absolute http(s) URL, at most 2048 characters' }),
    events: Type.Array(Type.String({ title: 'event kind' }), {
      minItems: 1,
      description: 'event kinds, or ["*"] for all',
    }),
    client_sign_secret: Type.Optional(Type.String({ maxLength: 1024 })),
    ignore_status: Type.Optional(Type.Boolean()),
    clear_client_sign: Type.Optional(Type.Boolean({ description: 'PATCH only: remove the stored secret' })),
    enabled: Type.Optional(Type.Boolean({ description: 'refused: use POST …/enabled' })),
  },
  { additionalProperties: false },
);
type Body = Static<typeof WebhookBody>;

const WebhookParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  webhook_id: IdParam('webhook id', 'whk'),
});
const EnabledBody = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });
const WebhookResponse = Ok({ webhook: Type.Ref('Webhook') });

export function webhookRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['webhooks'];
  const params = WebhookParams;

  async function loadWebhook(request: FastifyRequest): Promise<Webhook> {
    const instance = await loadInstance(ctx, request);
    const { webhook_id } = request.params as Static<typeof WebhookParams>;
    const webhook = await ctx.store.getWebhook(instance.instance_id, webhook_id);
    if (!webhook) throw HttpError.notFound('webhook', webhook_id);
    return webhook;
  }

  /** Field rules beyond the schema, then the destination guard (a 422 when only the address is wrong). */
  async function validate(body: Body, mode: 'create' | 'patch'): Promise<void> {
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
    const problem = await checkDestination(body.destination_url, ctx.destinations);
    if (problem?.code === 'invalid_request')
      errors.unshift({ field: problem.field, message: stripField(problem.message) });
    if (errors.length) throw HttpError.invalid(errors);
    if (problem)
      throw new HttpError('destination_not_allowed', problem.message, [
        { field: problem.field, message: stripField(problem.message) },
      ]);
  }

  app.get(
    '/instances/:instance_id/webhooks',
    {
      schema: {
        tags,
        params: Type.Object({ instance_id: IdParam('instance id', 'ins') }),
        response: responses(200, Ok({ webhooks: Type.Array(Type.Ref('Webhook')) })),
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const webhooks = await ctx.store.listWebhooks(instance.instance_id);
      return { success: true, webhooks: webhooks.map(webhookView) };
    },
  );

  app.post(
    '/instances/:instance_id/webhooks',
    {
      schema: {
        tags,
        params: Type.Object({ instance_id: IdParam('instance id', 'ins') }),
        body: WebhookBody,
        response: responses(201, Ok({ webhook_id: Type.String() })),
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const body = request.body as Body;
      await validate(body, 'create');
      const max = ctx.config.maxWebhooksPerInstance;
      if ((await ctx.store.listWebhooks(instance.instance_id)).length >= max) {
        throw new HttpError(
          'conflict',
          `webhooks: an instance may have at most ${max} webhooks (MAX_WEBHOOKS_PER_INSTANCE); delete one first`,
        );
      }
      const now = ctx.clock();
      const webhook_id = newId('whk', now);
      await ctx.store.createWebhook({
        webhook_id,
        instance_id: instance.instance_id,
        destination_url: body.destination_url,
        events: body.events,
        ignore_status: body.ignore_status ?? true,
        enabled: false, // seed §4 rule 1
        secret_sealed: body.client_sign_secret ? ctx.secretBox.seal(body.client_sign_secret) : null,
        disabled_reason: null,
        disabled_at: null,
        created_at: now,
        updated_at: now,
      });
      return reply.status(201).send({ success: true, webhook_id });
    },
  );

  app.get(
    '/instances/:instance_id/webhooks/:webhook_id',
    { schema: { tags, params, response: responses(200, WebhookResponse) } },
    async (request) => ({ success: true, webhook: webhookView(await loadWebhook(request)) }),
  );

  app.patch(
    '/instances/:instance_id/webhooks/:webhook_id',
    { schema: { tags, params, body: WebhookBody, response: responses(200, WebhookResponse) } },
    async (request) => {
      const current = await loadWebhook(request);
      const body = request.body as Body;
      await validate(body, 'patch');
      // Seed §4 rule 3: an empty secret keeps the current one; clear_client_sign removes it.
      const secret: SecretChange = body.clear_client_sign
        ? { kind: 'clear' }
        : body.client_sign_secret
          ? { kind: 'set', sealed: ctx.secretBox.seal(body.client_sign_secret) }
          : { kind: 'keep' };
      const webhook = await ctx.store.updateWebhook(
        current.instance_id,
        current.webhook_id,
        {
          destination_url: body.destination_url,
          events: body.events,
          ignore_status: body.ignore_status ?? true,
          secret,
        },
        ctx.clock(),
      );
      if (!webhook) throw HttpError.notFound('webhook', current.webhook_id);
      return { success: true, webhook: webhookView(webhook) };
    },
  );

  app.post(
    '/instances/:instance_id/webhooks/:webhook_id/enabled',
    { schema: { tags, params, body: EnabledBody, response: responses(200, WebhookResponse) } },
    async (request) => {
      const current = await loadWebhook(request);
      const { enabled } = request.body as Static<typeof EnabledBody>;
      const webhook = await ctx.store.setWebhookEnabled(
        current.instance_id,
        current.webhook_id,
        enabled,
        ctx.clock(),
      );
      if (!webhook) throw HttpError.notFound('webhook', current.webhook_id);
      return { success: true, webhook: webhookView(webhook) };
    },
  );

  app.delete(
    '/instances/:instance_id/webhooks/:webhook_id',
    { schema: { tags, params, response: responses(200, Ok({})) } },
    async (request) => {
      const current = await loadWebhook(request);
      await ctx.store.deleteWebhook(current.instance_id, current.webhook_id);
      return { success: true };
    },
  );
}

function eventListErrors(events: string[]): FieldError[] {
  if (events.includes('*')) {
    return events.length === 1
      ? []
      : [{ field: 'events', message: '"*" stands for every kind and must be alone' }];
  }
  const errors: FieldError[] = [];
  events.forEach((kind, i) => {
    if (!isEventKind(kind))
      errors.push({ field: `events[${i}]`, message: `unknown event kind ${quote(kind)}` });
    else if (events.indexOf(kind) !== i)
      errors.push({ field: `events[${i}]`, message: `duplicate event kind ${quote(kind)}` });
  });
  return errors;
}

/** The destination module's messages start with the field name; details carry it separately. */
const stripField = (message: string) => message.replace(/^destination_url: /, '');
