/**
 * The engine's own token as a credential (auth.ts): on Evolution's engine endpoint, a bearer JWT signed with the
 * instance's engine HMAC key acts as a publish key of that instance. It is verified before the body is read, like
 * every credential; without an engine HMAC key on the instance, or when it does not verify, the answer is a 401.
 */
import { checkEngineJwt } from '../domain/engine-jwt.ts';
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';
import type { Principal } from './principal.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes the engine's JWT (engine-jwt-auth.ts) besides Herald's keys. */
    engineJwt?: boolean;
  }
}

export type EngineJwtAuth = (instanceId: string, token: string) => Promise<Principal>;

export const engineJwtRefused = (why: string) => new HttpError('unauthorized', why);

export function engineJwtAuth(ctx: Pick<ApiContext, 'store' | 'secretBox' | 'clock'>): EngineJwtAuth {
  return async (instanceId, token) => {
    const instance = await ctx.store.catalog.getInstance(instanceId);
    // An instance that does not exist is said as the key's refusal: a token names no instance to an unknown caller.
    if (!instance?.engine_hmac_sealed) {
      throw engineJwtRefused(
        'Authorization: a JWT is accepted only by an instance with an engine HMAC key; use an API key',
      );
    }
    const key = ctx.secretBox.open(instance.engine_hmac_sealed);
    const problem = checkEngineJwt(key, token, Math.floor(ctx.clock() / 1000));
    if (problem) throw engineJwtRefused(problem);
    // Its own rate-limit bucket, per instance: the engine is not any of the instance's keys.
    return {
      kind: 'instance',
      instance_id: instanceId,
      key_id: `engine_jwt:${instanceId}`,
      scope: 'publish',
    };
  };
}
