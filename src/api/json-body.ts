/** The JSON body parser: strict UTF-8, bounded nesting, and clear 400s instead of parser exceptions. */
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

export const MAX_JSON_DEPTH = 64;

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's bytes as received, on routes whose config asks for them (`rawBody: true`). */
    rawBody?: Buffer;
  }
  interface FastifyContextConfig {
    rawBody?: boolean;
  }
}
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Fastify tests this against the whole header, parameters included (`application/json; charset="utf-8"`). */
export const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

export function installJsonBody(app: FastifyInstance): void {
  // A POST without a body is an empty object, so validation names the missing fields instead of "body".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (request, raw, done) => {
    // Kept only where a signature over the exact bytes is checked (the engine's webhook).
    if (request.routeOptions.config?.rawBody) request.rawBody = raw as Buffer;
    try {
      // No body at all, whatever the Content-Type says (curl with a JSON header and no -d): as if none were sent, so
      // a POST whose body is optional works, and one that needs fields is told which are missing.
      if (isBlank(raw as Buffer)) return done(null, undefined);
      done(null, parseJson(raw as Buffer));
    } catch (err) {
      done(err as HttpError);
    }
  });
}

/** Parses a JSON body's bytes, or throws the 400 that says what is wrong with them. */
export function parseJson(raw: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new HttpError('invalid_request', 'body: is not valid UTF-8');
  }
  if (text.trim() === '')
    throw new HttpError('invalid_request', 'body: must be a JSON object, got an empty body');
  if (depthExceeds(text, MAX_JSON_DEPTH)) {
    throw new HttpError('invalid_request', `body: JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError('invalid_request', `body: malformed JSON (${(err as Error).message})`);
  }
}

/** Nothing but JSON whitespace: stops at the first other byte, so a large body costs nothing here. */
function isBlank(raw: Buffer): boolean {
  for (const byte of raw) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  return true;
}

/** Counts bracket depth outside strings, before JSON.parse builds anything. */
function depthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}
