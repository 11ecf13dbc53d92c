/** Instances and their API keys. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId, randomToken } from '../../domain/ids.ts';
import type { Instance } from '../../domain/types.ts';
import type { InstanceChange } from '../../store/records.ts';
import { hashKey, requireAdmin, requireInstanceAccess } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import type { ErrorName } from '../error-catalog.ts';
import { HttpError } from '../errors.ts';
import { Answer, IdParam, InstanceParams, Ok } from '../schemas.ts';
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
  },
  { additionalProperties: false, examples: [{ name: 'Sales line', engine_hmac_key: 'waha-hmac-2f9c41d7' }] },
);
const KeyParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  key_id: IdParam('key id', 'key'),
});
const KeyView = Type.Object({ key_id: Type.String(), instance_id: Type.String(), created_at: Type.String() });

type Params = Static<typeof InstanceParams>;

/** What loadInstance answers besides the instance. */
export const INSTANCE_ERRORS: ErrorName[] = ['other_instance', 'instance_not_found'];
/** The same for an admin operation: no instance key gets as far as the instance. */
const ADMIN_INSTANCE_ERRORS: ErrorName[] = ['admin_only', 'instance_not_found'];

/** The instance of the path, after the key's rights are checked; 404 when it does not exist. */
export async function loadInstance(ctx: ApiContext, request: FastifyRequest): Promise<Instance> {
  const { instance_id } = request.params as Params;
  requireInstanceAccess(request, instance_id);
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
        errors: ['admin_only', 'invalid_instance'],
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const body = request.body as Static<typeof CreateInstance>;
      const now = ctx.clock();
      const instance_id = newId('ins', now);
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
      // An instance key sees its own instance only.
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
        errors: [...INSTANCE_ERRORS, 'invalid_instance'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const { name, engine_hmac_key: key } = request.body as Static<typeof PatchInstance>;
      const change: InstanceChange = { name };
      if (key !== undefined) change.engine_hmac_sealed = key === null ? null : ctx.secretBox.seal(key);
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
        errors: ADMIN_INSTANCE_ERRORS,
      },
    },
    async (request) => {
      requireAdmin(request);
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
        response: {
          201: Ok(
            {
              key_id: Type.String(),
              key: Type.String({ description: 'shown this once; only its hash is kept' }),
            },
            { description: 'The new key' },
          ),
        },
        errors: ADMIN_INSTANCE_ERRORS,
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const now = ctx.clock();
      const key_id = newId('key', now);
      // Shown once; only its hash is kept.
      const key = `hk_${randomToken(32)}`;
      await ctx.store.catalog.createKey({
        key_id,
        instance_id: instance.instance_id,
        key_hash: hashKey(key),
        scope: 'manage',
        created_at: now,
      });
      return reply.status(201).send({ success: true, key_id, key });
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
        errors: ADMIN_INSTANCE_ERRORS,
      },
    },
    async (request) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const keys = await ctx.store.catalog.listKeys(instance.instance_id);
      return {
        success: true,
        keys: keys.map((k) => ({
          key_id: k.key_id,
          instance_id: k.instance_id,
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
        errors: [...ADMIN_INSTANCE_ERRORS, 'key_not_found'],
      },
    },
    async (request) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const { key_id } = request.params as Static<typeof KeyParams>;
      if (!(await ctx.store.catalog.deleteKey(instance.instance_id, key_id)))
        throw HttpError.notFound('key', key_id);
      return { success: true };
    },
  );
}
