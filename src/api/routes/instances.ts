/** Instances and their API keys. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId, randomToken } from '../../domain/ids.ts';
import { refusedInstanceField } from '../../domain/rights.ts';
import type { Instance } from '../../domain/types.ts';
import type { InstanceChange } from '../../store/records.ts';
import { hashKey } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import type { ErrorName } from '../error-catalog.ts';
import { HttpError } from '../errors.ts';
import { instanceMediaPrefix } from '../instance-media-prefix.ts';
import { rightsErrors } from '../refusals.ts';
import { roleOf } from '../rights.ts';
import { Answer, IdParam, InstanceParams, Ok } from '../schemas.ts';
import { checkInstanceName } from '../source-names.ts';
import { instanceView } from '../views.ts';

const CreateInstance = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false, examples: [{ name: 'Sales line' }] },
);
const PatchInstance = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    engine_hmac_key: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()], {
        description:
          "the key the engine signs its webhook with (WAHA's hmac.key); null removes it. Write-only, sealed at rest",
      }),
    ),
    engine_media_prefix: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], {
        description:
          'where this instance’s engine media may be downloaded from, within ENGINE_MEDIA_PREFIXES ' +
          '(e.g. http://waha:3000/api/files/<session>/); null: any of them',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'Sales line', engine_hmac_key: 'waha-hmac-2f9c41d7' }] },
);
const KeyParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  key_id: IdParam('key id', 'key'),
});
const KEY_SCOPE = Type.Union([Type.Literal('manage'), Type.Literal('publish')], {
  description:
    'manage (default): its instance’s webhooks, deliveries, events and portal links; publish: events alone ' +
    '(…/events, …/events/batch, …/engine/…, media upload), for the engine',
});
const CreateKey = Type.Object(
  { scope: Type.Optional(KEY_SCOPE) },
  { additionalProperties: false, examples: [{ scope: 'publish' }] },
);
const KeyView = Type.Object({
  key_id: Type.String(),
  instance_id: Type.String(),
  scope: KEY_SCOPE,
  created_at: Type.String(),
});

type Params = Static<typeof InstanceParams>;

/**
 * What loadInstance answers besides the instance. A credential of another instance, or without the right, was
 * refused before (rights.ts; the docs add those refusals to every route).
 */
export const INSTANCE_ERRORS: ErrorName[] = ['instance_not_found'];

/** The instance of the path (whose rights the authentication hook checked); 404 when it does not exist. */
export async function loadInstance(ctx: ApiContext, request: FastifyRequest): Promise<Instance> {
  const { instance_id } = request.params as Params;
  const instance = await ctx.store.catalog.getInstance(instance_id);
  if (!instance) throw HttpError.notFound('instance', instance_id);
  return instance;
}

export function instanceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['instances'];

  app.post(
    '/instances',
    {
      schema: {
        tags,
        body: CreateInstance,
        response: { 201: Ok({ instance_id: Type.String() }, { description: 'The new instance’s id' }) },
        errors: ['invalid_instance', 'instance_name_in_use'],
      },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof CreateInstance>;
      const now = ctx.clock();
      const instance_id = newId('ins', now);
      await checkInstanceName(ctx, body.name, null);
      await ctx.store.catalog.createInstance({
        instance_id,
        name: body.name ?? '',
        status: 'STOPPED',
        phone: null,
        created_at: now,
      });
      return reply.status(201).send({ success: true, instance_id });
    },
  );

  app.get(
    '/instances',
    {
      schema: {
        tags,
        response: {
          200: Ok(
            { instances: Type.Array(Type.Ref('Instance')) },
            { description: 'Every instance (an instance key: its own only), with its counts' },
          ),
        },
      },
    },
    async (request) => {
      const all = await ctx.store.catalog.listInstances();
      const p = request.principal;
      // Anyone but the admin sees its own instance only.
      const visible = p.kind === 'admin' ? all : all.filter((i) => i.instance_id === p.instance_id);
      const counts = await ctx.store.log.instanceCounts(p.kind === 'admin' ? undefined : p.instance_id);
      return { success: true, instances: visible.map((i) => instanceView(i, counts)) };
    },
  );

  app.get(
    '/instances/:instance_id',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: { 200: Answer('InstanceResponse', 'The instance, with its counts') },
        errors: INSTANCE_ERRORS,
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const counts = await ctx.store.log.instanceCounts(instance.instance_id);
      return { success: true, instance: instanceView(instance, counts) };
    },
  );

  app.patch(
    '/instances/:instance_id',
    {
      schema: {
        tags,
        params: InstanceParams,
        body: PatchInstance,
        response: { 200: Answer('InstanceResponse', 'The instance as changed') },
        errors: [...INSTANCE_ERRORS, 'invalid_instance', 'admin_only_field', 'instance_name_in_use'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      // A manage key renames; what Herald trusts and fetches for the instance is the admin's (domain/rights.ts).
      const role = roleOf(request.principal);
      const refused = refusedInstanceField(role, request.body as object);
      if (refused !== null) throw rightsErrors.field(role, refused);
      const { name, engine_hmac_key: key } = request.body as Static<typeof PatchInstance>;
      await checkInstanceName(ctx, name, (request.params as Params).instance_id);
      const change: InstanceChange = { name };
      if (key !== undefined) change.engine_hmac_sealed = key === null ? null : ctx.secretBox.seal(key);
      const { engine_media_prefix: prefix } = request.body as Static<typeof PatchInstance>;
      if (prefix !== undefined) change.engine_media_prefix = instanceMediaPrefix(prefix, ctx.config);
      const updated = await ctx.store.catalog.updateInstance(instance.instance_id, change);
      if (!updated) throw HttpError.notFound('instance', instance.instance_id);
      const counts = await ctx.store.log.instanceCounts(instance.instance_id);
      return { success: true, instance: instanceView(updated, counts) };
    },
  );

  app.delete(
    '/instances/:instance_id',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: { 200: Answer('Success', 'Deleted, with its webhooks, keys, deliveries and media') },
        errors: INSTANCE_ERRORS,
      },
    },
    async (request) => {
      const { instance_id } = request.params as Params;
      if (!(await ctx.store.catalog.deleteInstance(instance_id)))
        throw HttpError.notFound('instance', instance_id);
      return { success: true };
    },
  );

  app.post(
    '/instances/:instance_id/keys',
    {
      schema: {
        tags,
        params: InstanceParams,
        body: CreateKey,
        response: {
          201: Ok(
            {
              key_id: Type.String(),
              key: Type.String({ description: 'shown this once; only its hash is kept' }),
              scope: KEY_SCOPE,
            },
            { description: 'The new key' },
          ),
        },
        errors: [...INSTANCE_ERRORS, 'invalid_key'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const { scope = 'manage' } = request.body as Static<typeof CreateKey>;
      const now = ctx.clock();
      const key_id = newId('key', now);
      // Shown once; only its hash is kept.
      const key = `hk_${randomToken(32)}`;
      await ctx.store.catalog.createKey({
        key_id,
        instance_id: instance.instance_id,
        key_hash: hashKey(key),
        scope,
        created_at: now,
      });
      return reply.status(201).send({ success: true, key_id, key, scope });
    },
  );

  app.get(
    '/instances/:instance_id/keys',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: {
          200: Ok(
            { keys: Type.Array(KeyView) },
            { description: 'The instance’s keys, without their secret part' },
          ),
        },
        errors: INSTANCE_ERRORS,
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const keys = await ctx.store.catalog.listKeys(instance.instance_id);
      return {
        success: true,
        keys: keys.map((k) => ({
          key_id: k.key_id,
          instance_id: k.instance_id,
          scope: k.scope,
          created_at: new Date(k.created_at).toISOString(),
        })),
      };
    },
  );

  app.delete(
    '/instances/:instance_id/keys/:key_id',
    {
      schema: {
        tags,
        params: KeyParams,
        response: { 200: Answer('Success', 'Revoked: the key is refused (401) from now on') },
        errors: [...INSTANCE_ERRORS, 'key_not_found'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const { key_id } = request.params as Static<typeof KeyParams>;
      if (!(await ctx.store.catalog.deleteKey(instance.instance_id, key_id)))
        throw HttpError.notFound('key', key_id);
      return { success: true };
    },
  );
}
