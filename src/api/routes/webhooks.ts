/** Webhooks of an instance: create, read, replace, enable, delete, and rotate the signing secret. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId, newSigningSecret } from '../../domain/ids.ts';
import { standardKey } from '../../domain/signature.ts';
import type { Webhook } from '../../domain/types.ts';
import type { ApiContext } from '../context.ts';
import type { ErrorName } from '../error-catalog.ts';
import { HttpError } from '../errors.ts';
import { Answer, IdParam, Ok } from '../schemas.ts';
import { webhookView } from '../views.ts';
import { STANDARD_SECRET_RULE, WebhookBody, type WebhookBodyType, webhookConfig } from '../webhook-config.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

export const WebhookParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  webhook_id: IdParam('webhook id', 'whk'),
});
const InstanceOnly = Type.Object({ instance_id: IdParam('instance id', 'ins') });
const EnabledBody = Type.Object(
  { enabled: Type.Boolean() },
  { additionalProperties: false, examples: [{ enabled: true }] },
);
const RotateBody = Type.Object(
  {
    client_sign_secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description: 'the new secret; one is generated when left out',
      }),
    ),
    grace_s: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604_800,
        description: 'seconds the old secret is still signed with, beside the new one (default 86400)',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ grace_s: 3600 }] },
);
/** What loadWebhook answers besides the webhook. */
export const WEBHOOK_ERRORS: ErrorName[] = [...INSTANCE_ERRORS, 'webhook_not_found'];
/** What webhookConfig refuses. */
const CONFIG_ERRORS: ErrorName[] = ['invalid_webhook', 'destination_not_allowed'];

/** The webhook of the path, of an instance the principal may reach (loadInstance), or a 404. */
export async function loadInstanceWebhook(ctx: ApiContext, request: FastifyRequest): Promise<Webhook> {
  const instance = await loadInstance(ctx, request);
  const { webhook_id } = request.params as Static<typeof WebhookParams>;
  const webhook = await ctx.store.webhooks.getWebhook(instance.instance_id, webhook_id);
  if (!webhook) throw HttpError.notFound('webhook', webhook_id);
  return webhook;
}

export function webhookRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['webhooks'];
  const params = WebhookParams;

  const loadWebhook = (request: FastifyRequest) => loadInstanceWebhook(ctx, request);

  /** Views of webhooks of one instance, with their health and their headers opened. */
  async function views(instanceId: string, webhooks: Webhook[]) {
    const now = ctx.clock();
    const health = await ctx.store.health.webhookHealth(instanceId, now);
    return webhooks.map((w) =>
      webhookView(w, {
        health: health.get(w.webhook_id),
        headers: w.headers_sealed ? JSON.parse(ctx.secretBox.open(w.headers_sealed)) : null,
        now,
      }),
    );
  }
  const view = async (w: Webhook) => (await views(w.instance_id, [w]))[0];

  app.get(
    '/instances/:instance_id/webhooks',
    {
      schema: {
        tags,
        params: InstanceOnly,
        response: {
          200: Ok(
            { webhooks: Type.Array(Type.Ref('Webhook')) },
            { description: 'The instance’s webhooks, with their health' },
          ),
        },
        errors: INSTANCE_ERRORS,
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const webhooks = await ctx.store.webhooks.listWebhooks(instance.instance_id);
      return { success: true, webhooks: await views(instance.instance_id, webhooks) };
    },
  );

  app.post(
    '/instances/:instance_id/webhooks',
    {
      schema: {
        tags,
        params: InstanceOnly,
        body: WebhookBody,
        response: {
          201: Ok({ webhook_id: Type.String() }, { description: 'The new webhook’s id; it starts disabled' }),
        },
        errors: [...INSTANCE_ERRORS, ...CONFIG_ERRORS, 'too_many_webhooks'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const config = await webhookConfig(ctx, request.body as WebhookBodyType, null);
      const max = ctx.config.maxWebhooksPerInstance;
      const now = ctx.clock();
      const webhook_id = newId('whk', now);
      const created = await ctx.store.webhooks.createWebhook(
        {
          webhook_id,
          instance_id: instance.instance_id,
          destination_url: config.destination_url,
          destination_sealed: config.destination_sealed,
          events: config.events,
          ignore_status: config.ignore_status,
          enabled: false, // a new webhook receives nothing until it is enabled
          secret_sealed: config.secret.kind === 'set' ? config.secret.sealed : null,
          filter: config.filter,
          headers_sealed: config.headers_sealed,
          rate_limit: config.rate_limit,
          standard_webhooks: config.standard_webhooks,
          ordering: config.ordering,
          disabled_reason: null,
          disabled_at: null,
          created_at: now,
          updated_at: now,
        },
        max,
      );
      if (!created) {
        throw new HttpError(
          'conflict',
          `webhooks: an instance may have at most ${max} webhooks (MAX_WEBHOOKS_PER_INSTANCE); delete one first`,
        );
      }
      return reply.status(201).send({ success: true, webhook_id });
    },
  );

  app.get(
    '/instances/:instance_id/webhooks/:webhook_id',
    {
      schema: {
        tags,
        params,
        response: { 200: Answer('WebhookResponse', 'The webhook, with its health') },
        errors: WEBHOOK_ERRORS,
      },
    },
    async (request) => ({ success: true, webhook: await view(await loadWebhook(request)) }),
  );

  app.patch(
    '/instances/:instance_id/webhooks/:webhook_id',
    {
      schema: {
        tags,
        params,
        body: WebhookBody,
        response: { 200: Answer('WebhookResponse', 'The webhook with its new configuration') },
        errors: [...WEBHOOK_ERRORS, ...CONFIG_ERRORS],
      },
    },
    async (request) => {
      const current = await loadWebhook(request);
      const config = await webhookConfig(ctx, request.body as WebhookBodyType, current);
      const webhook = await ctx.store.webhooks.updateWebhook(
        current.instance_id,
        current.webhook_id,
        config,
        ctx.clock(),
      );
      if (!webhook) throw HttpError.notFound('webhook', current.webhook_id);
      return { success: true, webhook: await view(webhook) };
    },
  );

  app.post(
    '/instances/:instance_id/webhooks/:webhook_id/enabled',
    {
      schema: {
        tags,
        params,
        body: EnabledBody,
        response: { 200: Answer('WebhookResponse', 'The webhook, enabled or disabled') },
        errors: [...WEBHOOK_ERRORS, 'invalid_enabled'],
      },
    },
    async (request) => {
      const current = await loadWebhook(request);
      const { enabled } = request.body as Static<typeof EnabledBody>;
      const webhook = await ctx.store.webhooks.setWebhookEnabled(
        current.instance_id,
        current.webhook_id,
        enabled,
        ctx.clock(),
      );
      if (!webhook) throw HttpError.notFound('webhook', current.webhook_id);
      return { success: true, webhook: await view(webhook) };
    },
  );

  app.post(
    '/instances/:instance_id/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        tags,
        params,
        body: RotateBody,
        response: {
          200: Ok(
            {
              webhook: Type.Ref('Webhook'),
              client_sign_secret: Type.String({ description: 'the new secret, shown this once' }),
            },
            { description: 'The webhook and its new secret' },
          ),
        },
        errors: [...WEBHOOK_ERRORS, 'invalid_rotation'],
      },
    },
    async (request) => {
      const current = await loadWebhook(request);
      const body = request.body as Static<typeof RotateBody>;
      const secret = body.client_sign_secret ?? newSigningSecret();
      if (current.standard_webhooks && !standardKey(secret)) {
        throw HttpError.invalid([{ field: 'client_sign_secret', message: STANDARD_SECRET_RULE }]);
      }
      const now = ctx.clock();
      const graceS = body.grace_s ?? 86_400;
      const webhook = await ctx.store.webhooks.rotateSecret(
        current.instance_id,
        current.webhook_id,
        ctx.secretBox.seal(secret),
        graceS > 0 ? now + graceS * 1000 : null,
        now,
      );
      if (!webhook) throw HttpError.notFound('webhook', current.webhook_id);
      // The new secret is shown this once; only its sealed form is kept.
      return { success: true, webhook: await view(webhook), client_sign_secret: secret };
    },
  );

  app.delete(
    '/instances/:instance_id/webhooks/:webhook_id',
    {
      schema: {
        tags,
        params,
        response: {
          200: Answer('Success', 'Deleted: its pending deliveries are cancelled, its log removed'),
        },
        errors: WEBHOOK_ERRORS,
      },
    },
    async (request) => {
      const current = await loadWebhook(request);
      await ctx.store.webhooks.deleteWebhook(current.instance_id, current.webhook_id);
      return { success: true };
    },
  );
}
