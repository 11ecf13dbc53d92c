/**
 * The session page: `/` (sign in, instance list), `/ui/instances/{instance_id}` and `/portal` (a portal link's
 * page) serve one HTML shell; its modules and styles come from /src/…. None of these need a key: the page holds no
 * data, it asks the public API for everything with the key the person typed (or the link's token), so it can never
 * do what that key may not.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PortalConfig } from '../config.ts';
import { AssetFiles } from './assets.ts';

/**
 * Nothing from elsewhere: scripts, styles, requests and images stay on this origin (the media preview shows only
 * Herald's own signed links, loaded from here: media-preview.ts). Framed by no one, but the portal by the origins
 * PORTAL_FRAME_ANCESTORS names.
 */
const csp = (frameAncestors: readonly string[]) =>
  [
    "default-src 'self'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');

export function uiRoutes(app: FastifyInstance, version: string, portal: PortalConfig): void {
  const files = new AssetFiles({
    HERALD_VERSION: version,
    PORTAL_TITLE: portal.title,
    PORTAL_ACCENT: portal.accent ?? '',
  });
  const route = { config: { public: true }, schema: { hide: true } };
  const CSP = csp([]);
  const PORTAL_CSP = csp(portal.frameAncestors);

  function send(request: FastifyRequest, reply: FastifyReply, path: string, policy = CSP) {
    const asset = files.get(path);
    if (!asset) return reply.callNotFound();
    reply
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .header('etag', asset.etag)
      .type(asset.type);
    if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.send(asset.body);
  }

  const page = (request: FastifyRequest, reply: FastifyReply) => send(request, reply, 'ui/assets/index.html');
  app.get('/', route, page);
  app.get('/ui/instances/:instance_id', route, page);
  app.get('/portal', route, (request, reply) => send(request, reply, 'ui/assets/index.html', PORTAL_CSP));
  app.get('/src/*', route, (request, reply) =>
    send(request, reply, (request.params as { '*': string })['*']),
  );
  // The folder itself (`/src/`, which the router reads as `/src`) is no file: a 404 like any other, without a key.
  app.get('/src', route, (_request, reply) => reply.callNotFound());
}
