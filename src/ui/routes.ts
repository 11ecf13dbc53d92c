/**
 * The session page: `/` (sign in, instance list) and `/ui/instances/{instance_id}` serve one HTML shell;
 * its modules and styles come from /src/…. None of these need a key: the page holds no data, it asks the public
 * API for everything with the key the person typed, so it can never do what that key may not.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AssetFiles } from './assets.ts';

/** Nothing from elsewhere: scripts, styles, requests and images stay on this origin (the media preview shows only
 * Herald's own signed links, loaded from here: media-preview.ts). */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function uiRoutes(app: FastifyInstance, version: string): void {
  const files = new AssetFiles(version);
  const route = { config: { public: true }, schema: { hide: true } };

  function send(request: FastifyRequest, reply: FastifyReply, path: string) {
    const asset = files.get(path);
    if (!asset) return reply.callNotFound();
    reply
      .header('content-security-policy', CSP)
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
  app.get('/src/*', route, (request, reply) =>
    send(request, reply, (request.params as { '*': string })['*']),
  );
  // The folder itself (`/src/`, which the router reads as `/src`) is no file: a 404 like any other, without a key.
  app.get('/src', route, (_request, reply) => reply.callNotFound());
}
