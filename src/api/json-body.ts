/** The JSON body parser: strict UTF-8, bounded nesting, and clear 400s instead of parser exceptions. */
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

export const MAX_JSON_DEPTH = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Fastify tests this against the whole header, parameters included (`application/json; charset="utf-8"`). */
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

export function installJsonBody(app: FastifyInstance): void {
  // A POST without a body is an empty object, so validation names the missing fields instead of "body".
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (_req, raw, done) => {
    let text: string;
    try {
      text = utf8.decode(raw as Buffer);
    } catch {
      return done(new HttpError('invalid_request', 'body: is not valid UTF-8'));
    }
    // No body at all, whatever the Content-Type says (curl with a JSON header and no -d): as if none were sent, so
    // a POST whose body is optional works, and one that needs fields is told which are missing.
    if (text.trim() === '') return done(null, undefined);
    if (depthExceeds(text, MAX_JSON_DEPTH)) {
      return done(
        new HttpError('invalid_request', `body: JSON is nested deeper than ${MAX_JSON_DEPTH} levels`),
      );
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new HttpError('invalid_request', `body: malformed JSON (${(err as Error).message})`));
    }
  });
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
