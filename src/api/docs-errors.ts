/**
 * The error responses of each operation in /openapi.json: the causes its route lists (`errors` in its schema) and
 * those every route of its kind shares, each status described by when it happens and showing, per cause, the
 * error Herald answers (error-catalog.ts).
 */
import { ERROR_CAUSES, type ErrorCause, type ErrorName, type errorExamples } from './error-catalog.ts';

declare module 'fastify' {
  interface FastifySchema {
    /** What the handler itself can answer besides its success; docs-errors.ts adds what every such route shares. */
    errors?: readonly ErrorName[];
  }
}

/** What decides the causes a route shares with others of its kind. */
export interface RouteKind {
  /** No key needed (health, media links): no 401, no rate limit. */
  public: boolean;
  ingest: boolean;
  /** Which ids the path has: the instance's (and others under it), the source's alone, or none. */
  pathIds: 'instance' | 'source' | null;
  jsonBody: boolean;
}

/** The causes a route shares with every route of its kind. */
export function sharedCauses(kind: RouteKind): ErrorName[] {
  const causes: ErrorName[] = [];
  if (!kind.public) {
    causes.push('missing_key', 'unauthorized', 'portal_link_expired', 'auth_failures_limited');
    causes.push(kind.ingest ? 'ingest_rate_limited' : 'rate_limited');
  }
  if (kind.pathIds) causes.push(kind.pathIds === 'source' ? 'invalid_source_path' : 'invalid_path');
  if (kind.jsonBody) causes.push('malformed_json', 'payload_too_large', 'not_json');
  // The key is looked up in the database, so every route with one can find it unavailable.
  if (!kind.public) causes.push('database_unavailable');
  causes.push('internal');
  return causes;
}

export const causeOf = (name: ErrorName): ErrorCause => ERROR_CAUSES[name];

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI objects, whose fields vary
type Json = Record<string, any>;
type Examples = Awaited<ReturnType<typeof errorExamples>>;

const sentence = (s: string) => `${s[0].toUpperCase()}${s.slice(1)}.`;

/**
 * Each error response of each operation: described by when it happens (one cause a sentence, several a list), one
 * named example per cause, and the headers its causes come with.
 */
export function describeErrors(
  doc: Json,
  causesByOperation: Map<string, ErrorName[]>,
  examples: Examples,
): void {
  for (const [path, operations] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, op] of Object.entries(operations as Record<string, Json>)) {
      const names = causesByOperation.get(`${method.toUpperCase()} ${path}`) ?? [];
      const byStatus = Map.groupBy(names, (n) => String(causeOf(n).status));
      for (const [status, group] of byStatus) {
        const response = op.responses?.[status];
        if (!response) continue;
        const whens = group.map((n) => causeOf(n).when);
        response.description =
          whens.length === 1 ? sentence(whens[0]) : whens.map((w) => `- ${sentence(w)}`).join('\n');
        const headers = Object.assign({}, ...group.map((n) => causeOf(n).headers ?? {}));
        if (Object.keys(headers).length) response.headers = headers;
        // An error is JSON even where the success is a file.
        response.content = {
          'application/json': {
            schema: { $ref: '#/components/schemas/Error' },
            examples: Object.fromEntries(
              group.map((n) => [n, { summary: causeOf(n).when, value: examples.get(n) }]),
            ),
          },
        };
      }
    }
  }
}
