/**
 * Bearer-key authentication, then the rights of the principal (rights.ts), in one hook before the body is read.
 * Keys are high-entropy tokens stored as SHA-256 hashes; an instance key is found by its hash, the admin hash is
 * compared in constant time. A portal link's token (`hpl_…`) acts for its instance until it expires. Failed
 * authentications are counted per client address (auth-failures.ts) and logged with the kind of credential, never
 * the credential itself.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import { isJwt } from '../domain/engine-jwt.ts';
import type { Catalog, PortalLinks } from '../store/ports.ts';
import { AuthFailures, authFailuresLimited } from './auth-failures.ts';
import type { EngineJwtAuth } from './engine-jwt-auth.ts';
import { HttpError } from './errors.ts';
import type { Principal } from './principal.ts';
import { keyErrors } from './refusals.ts';
import { checkRights } from './rights.ts';

/** How a portal link's token starts: it is looked up among the links, not the keys. */
export const PORTAL_TOKEN_PREFIX = 'hpl_';
/** How an instance key starts (a generated admin key starts `hk_admin_`). */
const KEY_PREFIX = 'hk_';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

/** One-shot: a Hash object per request cost more than the digest itself. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What a failed credential looked like, for the log: its kind, never a character of it. */
export type CredentialKind = 'missing' | 'admin' | 'instance_key' | 'portal_link' | 'engine_jwt';

function credentialKind(token: string | null): CredentialKind {
  if (token === null) return 'missing';
  if (isJwt(token)) return 'engine_jwt';
  if (token.startsWith(PORTAL_TOKEN_PREFIX)) return 'portal_link';
  if (token.startsWith(KEY_PREFIX) && !token.startsWith(`${KEY_PREFIX}admin_`)) return 'instance_key';
  return 'admin';
}

export interface AuthOptions {
  /** Failed authentications allowed per client address and minute; 0: no limit. */
  failuresPerMinute: number;
  /** Verifies an engine's JWT on the routes that take one (config.engineJwt): engine-jwt-auth.ts. */
  engineJwt?: EngineJwtAuth;
}

export function installAuth(
  app: FastifyInstance,
  store: { catalog: Pick<Catalog, 'findKeyByHash'>; portalLinks: Pick<PortalLinks, 'findPortalLinkByHash'> },
  adminKeyHash: string,
  clock: Clock,
  options: AuthOptions,
): void {
  const admin = Buffer.from(adminKeyHash, 'hex');
  const failures = new AuthFailures(options.failuresPerMinute);

  async function authenticate(token: string | null): Promise<Principal> {
    if (token === null) throw keyErrors.missing();
    const hash = hashKey(token);
    if (timingSafeEqual(Buffer.from(hash, 'hex'), admin)) return { kind: 'admin' };
    if (token.startsWith(PORTAL_TOKEN_PREFIX)) {
      const link = await store.portalLinks.findPortalLinkByHash(hash);
      if (!link) throw keyErrors.unknownLink();
      if (link.expires_at <= clock()) throw keyErrors.expiredLink();
      return { kind: 'portal', instance_id: link.instance_id, link };
    }
    const key = await store.catalog.findKeyByHash(hash);
    if (!key) throw keyErrors.unknown();
    return { kind: 'instance', instance_id: key.instance_id, key_id: key.key_id, scope: key.scope };
  }

  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.public) return;
    const address = request.ip;
    const waitMs = failures.blockedFor(address, clock());
    if (waitMs > 0) {
      const waitS = Math.max(1, Math.ceil(waitMs / 1000));
      reply.header('retry-after', String(waitS));
      throw authFailuresLimited(options.failuresPerMinute, waitS);
    }
    const token = bearerToken(request);
    try {
      const { instance_id } = request.params as { instance_id?: string };
      const { engineJwt } = options;
      const jwt = engineJwt && request.routeOptions.config?.engineJwt && token !== null && isJwt(token);
      request.principal =
        jwt && instance_id ? await engineJwt(instance_id, token) : await authenticate(token);
    } catch (err) {
      if (err instanceof HttpError && err.code === 'unauthorized') {
        const limitReached = failures.record(address, clock());
        const credential = credentialKind(token);
        request.log.warn({ client_address: address, credential }, `authentication failed: ${err.message}`);
        if (limitReached) {
          request.log.warn(
            { client_address: address },
            `authentication failures: ${options.failuresPerMinute} from this address within a minute; ` +
              'its requests are refused (429) for the rest of the minute',
          );
        }
      }
      throw err;
    }
    checkRights(request);
  });
}

function bearerToken(request: FastifyRequest): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return match ? match[1] : null;
}
