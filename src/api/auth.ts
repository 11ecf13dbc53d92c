/**
 * Bearer-key authentication. Keys are high-entropy tokens stored as SHA-256 hashes; an instance key is
 * found by its hash, the admin hash is compared in constant time. A portal link's token (`hpl_…`) acts as a key of
 * its instance until it expires, and only reads when the link is read-only. A key never reaches a log line.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import type { Catalog, PortalLinks } from '../store/ports.ts';
import type { PortalLink } from '../store/records.ts';
import { HttpError } from './errors.ts';

export type Principal =
  | { kind: 'admin' }
  | { kind: 'instance'; instance_id: string; key_id: string }
  | { kind: 'portal'; instance_id: string; link: PortalLink };

/** How a portal link's token starts: it is looked up among the links, not the keys. */
export const PORTAL_TOKEN_PREFIX = 'hpl_';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Routes anyone may call: health checks and the UI's static files. */
    public?: boolean;
  }
}

/** One-shot: a Hash object per request cost more than the digest itself. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function installAuth(
  app: FastifyInstance,
  store: { catalog: Pick<Catalog, 'findKeyByHash'>; portalLinks: Pick<PortalLinks, 'findPortalLinkByHash'> },
  adminKeyHash: string,
  clock: Clock,
): void {
  const admin = Buffer.from(adminKeyHash, 'hex');
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.public) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw keyErrors.missing();
    const hash = hashKey(match[1]);
    if (timingSafeEqual(Buffer.from(hash, 'hex'), admin)) {
      request.principal = { kind: 'admin' };
      return;
    }
    if (match[1].startsWith(PORTAL_TOKEN_PREFIX)) {
      const link = await store.portalLinks.findPortalLinkByHash(hash);
      if (!link) throw keyErrors.unknownLink();
      if (link.expires_at <= clock()) throw keyErrors.expiredLink();
      request.principal = { kind: 'portal', instance_id: link.instance_id, link };
      if (link.read_only && request.method !== 'GET' && request.method !== 'HEAD')
        throw keyErrors.readOnlyLink();
    } else {
      const key = await store.catalog.findKeyByHash(hash);
      if (!key) throw keyErrors.unknown();
      request.principal = { kind: 'instance', instance_id: key.instance_id, key_id: key.key_id };
    }
    // Before the body is read: another instance's key is refused without a byte of its body parsed or buffered.
    const { instance_id } = request.params as { instance_id?: unknown };
    if (typeof instance_id === 'string') requireInstanceAccess(request, instance_id);
  });
}

/** The refusals of a key, made here alone (the API docs show them as they are thrown). */
export const keyErrors = {
  missing: () => new HttpError('unauthorized', 'an Authorization: Bearer <key> header is required'),
  unknown: () => new HttpError('unauthorized', 'unknown or revoked API key'),
  adminOnly: () => new HttpError('forbidden', 'this operation needs the admin key'),
  otherInstance: () => new HttpError('forbidden', 'this key belongs to another instance'),
  unknownLink: () => new HttpError('unauthorized', 'unknown or revoked portal link'),
  expiredLink: () => new HttpError('unauthorized', 'this portal link has expired'),
  readOnlyLink: () => new HttpError('forbidden', 'this portal link is read-only: it may only read'),
  notByLink: () => new HttpError('forbidden', 'a portal link cannot manage portal links'),
  onlyByLink: () =>
    new HttpError('forbidden', "this tells a portal link's own facts: call it with a portal link"),
};

export function requireAdmin(request: FastifyRequest): void {
  if (request.principal.kind !== 'admin') throw keyErrors.adminOnly();
}

/** An instance key acts only on its own instance; checked before existence, so ids of others do not leak. */
export function requireInstanceAccess(request: FastifyRequest, instanceId: string): void {
  const p = request.principal;
  if (p.kind !== 'admin' && p.instance_id !== instanceId) {
    throw keyErrors.otherInstance();
  }
}
