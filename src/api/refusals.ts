/**
 * The refusals of who makes a request and how often: a credential, a right, a rate limit, the portal links' limit.
 * Made here alone, by the code that refuses and by the error catalog that shows them (error-catalog.ts), so that the
 * API docs show each as it is thrown.
 */
import { fieldRefusal, otherInstanceRefusal, type Right, type Role, refusal } from '../domain/rights.ts';
import { HttpError } from './errors.ts';

/** The refusals of a credential (auth.ts). */
export const keyErrors = {
  missing: () => new HttpError('unauthorized', 'an Authorization: Bearer <key> header is required'),
  unknown: () => new HttpError('unauthorized', 'unknown or revoked API key'),
  unknownLink: () => new HttpError('unauthorized', 'unknown or revoked portal link'),
  expiredLink: () => new HttpError('unauthorized', 'this portal link has expired'),
};

/** The refusals of the rights table (rights.ts) and of an instance's fields (routes/instances.ts). */
export const rightsErrors = {
  refused: (role: Role, right: Right) => new HttpError('forbidden', refusal(role, right)),
  otherInstance: (role: Role) => new HttpError('forbidden', otherInstanceRefusal(role)),
  field: (role: Role, field: string) => new HttpError('forbidden', fieldRefusal(role, field)),
};

/** A request over its key's budget (rate-limit.ts). */
export const rateLimited = (perSecond: number, budget: 'ingest' | 'management') =>
  new HttpError(
    'rate_limited',
    `rate limit: this key may make ${perSecond} ${budget} requests per second; retry later`,
  );

/** Why a link was not made: the instance has as many live links as it may (routes/portal-links.ts). */
export const tooManyLinks = (max: number) =>
  new HttpError(
    'conflict',
    `portal links: an instance may have at most ${max} live links (PORTAL_MAX_LINKS); revoke one ` +
      '(DELETE /instances/{instance_id}/portal-links/{link_id}) or wait for one to expire',
  );
