/**
 * /docs: the API reference, /openapi.json rendered by Swagger UI (swagger-ui-dist from npm, served from this origin;
 * nothing comes from a CDN). The page is the session page's look around Swagger UI: its shell, script and styles are
 * files of the session page (src/ui/assets/docs.html, api-docs.ts, api-docs.css), and it reuses the key the session
 * page keeps in this tab, or asks for one with the same sign-in.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AssetFiles } from '../ui/assets.ts';

const DIST = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The two files of swagger-ui-dist the page loads; nothing else of the package is reachable. */
const VENDOR: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

/** Like the session page's, plus what Swagger UI needs: images as data: URLs (its icons). */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function installDocsPage(app: FastifyInstance, version: string): void {
  const files = new AssetFiles({ HERALD_VERSION: version });
  const vendor = new Map<string, Buffer>();
  const route = { schema: { hide: true }, config: { public: true } };

  app.get('/docs', route, async (_request, reply) => {
    const page = files.get('ui/assets/docs.html');
    if (!page) return reply.callNotFound();
    return reply
      .type(page.type)
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(page.body);
  });

  app.get('/docs/vendor/:file', route, async (request, reply) => {
    const { file } = request.params as { file: string };
    const type = VENDOR[file];
    if (!type) return reply.callNotFound();
    let body = vendor.get(file);
    if (!body) {
      body = readFileSync(join(DIST, file));
      vendor.set(file, body);
    }
    return reply
      .type(type)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(body);
  });
}
