/**
 * Portal links of an instance: the session page of that instance alone, handed to someone outside (a platform's
 * customer) as a URL whose fragment carries a token, never sent to a server. Made, listed and revoked with the admin
 * key or a manage key of the instance (rights.ts); the token then acts for that instance, with a link's rights, until
 * it expires, its key is revoked (the link dies with it) or it is revoked itself. At most PORTAL_MAX_LINKS live ones.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { newId, randomToken } from '../../domain/ids.ts';
import type { PortalLink } from '../../store/records.ts';
import { hashKey, PORTAL_TOKEN_PREFIX } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import type { Principal } from '../principal.ts';
import { tooManyLinks } from '../refusals.ts';
import { Answer, IdParam, InstanceParams, Ok } from '../schemas.ts';
import { portalLinkView as view } from '../views.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const PORTAL_TTL_S = { min: 60, max: 86_400, default: 3600 };

const CreateLink = Type.Object(
  {
    ttl_s: Type.Optional(
      Type.Integer({
        minimum: PORTAL_TTL_S.min,
        maximum: PORTAL_TTL_S.max,
        description: `seconds the link works (default ${PORTAL_TTL_S.default})`,
      }),
    ),
    read_only: Type.Optional(
      Type.Boolean({ description: 'reads only: every write is a 403 (default false)' }),
    ),
  },
  { additionalProperties: false, examples: [{ ttl_s: 3600, read_only: false }] },
);
const LinkParams = Type.Object({
  instance_id: IdParam('instance id', 'ins'),
  link_id: IdParam('portal link id', 'lnk'),
});
const LinkView = Type.Object({
  link_id: Type.String(),
  instance_id: Type.String(),
  read_only: Type.Boolean(),
  expires_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
});

export function portalLinkRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['portal links'];
  const errors = INSTANCE_ERRORS;

  app.post(
    '/instances/:instance_id/portal-links',
    {
      schema: {
        tags,
        params: InstanceParams,
        body: CreateLink,
        response: {
          201: Ok(
            {
              link_id: Type.String(),
              url: Type.String({ description: 'the portal; its token is in the fragment, shown this once' }),
              expires_at: Type.String({ format: 'date-time' }),
            },
            { description: 'The new link' },
          ),
        },
        errors: [...errors, 'invalid_portal_link', 'too_many_portal_links'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const body = (request.body ?? {}) as Static<typeof CreateLink>;
      const now = ctx.clock();
      const token = `${PORTAL_TOKEN_PREFIX}${randomToken(24)}`;
      const link: PortalLink = {
        link_id: newId('lnk', now),
        instance_id: instance.instance_id,
        token_hash: hashKey(token),
        read_only: body.read_only ?? false,
        key_id: request.principal.kind === 'instance' ? request.principal.key_id : null,
        expires_at: now + (body.ttl_s ?? PORTAL_TTL_S.default) * 1000,
        created_at: now,
      };
      if (!(await ctx.store.portalLinks.createPortalLink(link, ctx.config.portal.maxLinks)))
        throw tooManyLinks(ctx.config.portal.maxLinks);
      const url = `${ctx.publicUrl().replace(/\/+$/, '')}/portal#${token}`;
      return reply.status(201).send({ success: true, ...view(link), url });
    },
  );

  app.get(
    '/instances/:instance_id/portal-links',
    {
      schema: {
        tags,
        params: InstanceParams,
        response: {
          200: Ok({ links: Type.Array(LinkView) }, { description: 'The live links, without tokens' }),
        },
        errors: [...errors],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const links = await ctx.store.portalLinks.listPortalLinks(instance.instance_id, ctx.clock());
      return { success: true, links: links.map(view) };
    },
  );

  app.get(
    '/portal-link',
    {
      schema: {
        tags,
        response: { 200: Ok({ link: LinkView }, { description: 'The link whose token made this call' }) },
      },
    },
    async (request) => {
      // Only a link may call this (rights.ts); the one authentication found, live: no second lookup.
      const { link } = request.principal as Extract<Principal, { kind: 'portal' }>;
      return { success: true, link: view(link) };
    },
  );

  app.delete(
    '/instances/:instance_id/portal-links/:link_id',
    {
      schema: {
        tags,
        params: LinkParams,
        response: { 200: Answer('Success', 'Revoked: the link is refused (401) from now on') },
        errors: [...errors, 'portal_link_not_found'],
      },
    },
    async (request) => {
      const instance = await loadInstance(ctx, request);
      const { link_id } = request.params as Static<typeof LinkParams>;
      if (!(await ctx.store.portalLinks.deletePortalLink(instance.instance_id, link_id)))
        throw HttpError.notFound('portal link', link_id);
      return { success: true };
    },
  );
}
