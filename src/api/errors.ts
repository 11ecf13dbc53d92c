/** Every error leaves the server in one JSON shape; this file is the only place that builds it. */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { FieldError } from '../domain/types.ts';
import { StoreUnavailable } from '../store/errors.ts';
import { validationDetails } from './messages.ts';

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  destination_not_allowed: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

/** The most field complaints one error lists in `details`. */
export const MAX_DETAILS = 50;

/** A field path is the client's own words (an unknown field's name): cut short like a quoted value. */
const MAX_FIELD = 200;
const shortField = (d: FieldError): FieldError =>
  d.field.length > MAX_FIELD ? { ...d, field: `${d.field.slice(0, MAX_FIELD)}…` } : d;

/** How long a client is asked to wait before it sends again what got a 503 (the database was unavailable). */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class HttpError extends Error {
  readonly code: ErrorCode;
  readonly details: FieldError[];

  constructor(code: ErrorCode, message: string, details: FieldError[] = []) {
    super(message);
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /**
   * A 400 listing the field complaints, at most MAX_DETAILS of them (a body of thousands of bad fields must not
   * get an answer many times its size); the message names the first and says how many more there are, and how
   * many of those the list leaves out.
   */
  static invalid(details: FieldError[]): HttpError {
    const first = shortField(details[0]);
    const left = details.length - MAX_DETAILS;
    const more =
      details.length <= 1
        ? ''
        : left > 0
          ? ` (and ${details.length - 1} more: details lists the first ${MAX_DETAILS}, and ${left} more are not listed)`
          : ` (and ${details.length - 1} more)`;
    return new HttpError(
      'invalid_request',
      `${first.field}: ${first.message}${more}`,
      details.slice(0, MAX_DETAILS).map(shortField),
    );
  }

  static bodyTooLarge(): HttpError {
    return new HttpError('payload_too_large', 'request body is larger than the limit for this endpoint');
  }

  static notJson(): HttpError {
    return new HttpError(
      'unsupported_media_type',
      'request body must be JSON with Content-Type: application/json',
    );
  }

  static notFound(what: string, id: string): HttpError {
    return new HttpError('not_found', `${what} ${id} does not exist`);
  }

  /**
   * The database could not do the work (see StoreUnavailable). Its reason is logged, not sent: it names the
   * database's host and files.
   */
  static unavailable(): HttpError {
    return new HttpError(
      'unavailable',
      `the database is unavailable; retry in ${UNAVAILABLE_RETRY_AFTER_S} seconds (Retry-After)`,
    );
  }
}

export function errorBody(code: ErrorCode, message: string, details: FieldError[] = []) {
  return { success: false as const, error: { code, message, details } };
}

/** Fastify's own errors (parser, limits, schema validation) mapped to Herald's error codes. */
function fromFastify(err: FastifyError): HttpError {
  if (err.validation) return HttpError.invalid(validationDetails(err.validation, err.validationContext));
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return HttpError.bodyTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return HttpError.notJson();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError('invalid_request', 'body: must be a JSON object, got an empty body');
  }
  if (err.statusCode === 404) return new HttpError('not_found', err.message);
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return new HttpError('invalid_request', err.message);
  }
  return new HttpError('internal', 'internal error');
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const e =
      err instanceof HttpError
        ? err
        : err instanceof StoreUnavailable
          ? HttpError.unavailable()
          : fromFastify(err);
    if (e.code === 'internal') request.log.error({ err }, 'unhandled error');
    if (e.code === 'rate_limited' && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
    if (e.code === 'unavailable') reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
    return reply.status(e.status).send(errorBody(e.code, e.message, e.details));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(errorBody('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
