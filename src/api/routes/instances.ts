/** Instances (SPEC §5) and their API keys (SPEC §3). */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId, randomToken } from '../../domain/ids.ts';
import type { Instance } from '../../domain/types.ts';
import type { InstanceChange } from '../../store/store.ts';
import { hashKey, requireAdmin, requireInstanceAccess } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { IdParam, InstanceParams, Ok, responses } from '../schemas.ts';
import { instanceView } from '../views.ts';

const CreateInstance = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
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
  { additionalProperties: false },
);
const KeyParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  key_id: IdParam('key id', 'key'),
});
const KeyView = Type.Object({ key_id: Type.String(), instance_id: Type.String(), created_at: Type.String() });

type Params = Static<typeof InstanceParams>;

/** The instance of the path, after the key's rights are checked; 404 when it does not exist. */
export async function loadInstance(ctx: ApiContext, request: FastifyRequest): Promise<Instance> {
  const { instance_id } = request.params as Params;
  requireInstanceAccess(request, instance_id);
  const instance = await ctx.store.getInstance(instance_id);
  if (!instance) throw HttpError.notFound('instance', instance_id);
  return instance;
}

export function instanceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['instances'];

  app.post(
    '/instances',
    { schema: { tags, body: CreateInstance, response: responses(201, Ok({ instance_id: Type.String() })) } },
    async (request, reply) => {
      requireAdmin(request);
      const body = request.body as Static<typeof CreateInstance>;
      const now = ctx.clock();
      const instance_id = newId('ins', now);
      await ctx.store.createInstance({
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
    { schema: { tags, response: responses(200, Ok({ instances: Type.Array(Type.Ref('Instance')) })) } },
    async (request) => {
      const all = await ctx.store.listInstances();
      const p = request.principal;
      // An instance key sees its own instance only.
      const visible = p.kind === 'admin' ? all : all.filter((i) => i.instance_id === p.instance_id);
      const counts = await ctx.store.instanceCounts(p.kind === 'admin' ? undefined : p.instance_id);
      return { success: true, instances: visible.map((i) => instanceView(i, counts)) };
    },
  );

  app.get(
    '/instances/:instance_id',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: responses(200, Ok({ instance: Type.Ref('Instance') })),
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const counts = await ctx.store.instanceCounts(instance.instance_id);
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
        response: responses(200, Ok({ instance: Type.Ref('Instance') })),
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const { name, engine_hmac_key: key } = request.body as Static<typeof PatchInstance>;
      const change: InstanceChange = { name };
      if (key !== undefined) change.engine_hmac_sealed = key === null ? null : ctx.secretBox.seal(key);
      const updated = await ctx.store.updateInstance(instance.instance_id, change);
      if (!updated) throw HttpError.notFound('instance', instance.instance_id);
      const counts = await ctx.store.instanceCounts(instance.instance_id);
      return { success: true, instance: instanceView(updated, counts) };
    },
  );

  app.delete(
    '/instances/:instance_id',
    { schema: { tags, params: InstanceParams, response: responses(200, Ok({})) } },
    async (request) => {
      requireAdmin(request);
      const { instance_id } = request.params as Params;
      if (!(await ctx.store.deleteInstance(instance_id))) throw HttpError.notFound('instance', instance_id);
      return { success: true };
    },
  );

  app.post(
    '/instances/:instance_id/keys',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: responses(201, Ok({ key_id: Type.String(), key: Type.String() })),
      },
    },
    async (request, reply) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const now = ctx.clock();
      const key_id = newId('key', now);
      // Shown once; only its hash is kept.
      const key = `hk_${randomToken(32)}`;
      await ctx.store.createKey({
        key_id,
        instance_id: instance.instance_id,
        key_hash: hashKey(key),
        created_at: now,
      });
      return reply.status(201).send({ success: true, key_id, key });
    },
  );

  app.get(
    '/instances/:instance_id/keys',
    { schema: { tags, params: InstanceParams, response: responses(200, Ok({ keys: Type.Array(KeyView) })) } },
    async (request) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const keys = await ctx.store.listKeys(instance.instance_id);
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
    { schema: { tags, params: KeyParams, response: responses(200, Ok({})) } },
    async (request) => {
      requireAdmin(request);
      const instance = await loadInstance(ctx, request);
      const { key_id } = request.params as Static<typeof KeyParams>;
      if (!(await ctx.store.deleteKey(instance.instance_id, key_id))) throw HttpError.notFound('key', key_id);
      return { success: true };
    },
  );
}
