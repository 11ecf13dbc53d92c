/** How Herald serves the session page (SPEC §9): without a key, type-stripped, only its own files, under a CSP. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHerald, type TestHerald } from '../support/herald.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(h.url + path, { headers });

describe('session page files', () => {
  it('serves the page at / and /ui/instances/{id} without a key, with a CSP that allows only Herald', async () => {
    for (const path of ['/', '/ui/instances/ins_anything1234567890']) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const html = await res.text();
      assert.match(html, /<script type="module" src="\/src\/ui\/assets\/main\.ts">/);
      assert.match(html, /name="herald-version" content="\d+\.\d+\.\d+"/);
      assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'no asset from elsewhere');
    }
  });

  it('serves browser TypeScript as JavaScript with the types stripped, and caches by ETag', async () => {
    const res = await get('/src/ui/assets/api.ts');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/javascript/);
    const js = await res.text();
    assert.match(js, /export async function call/);
    assert.doesNotMatch(js, /export interface|: Promise<T>/);
    const again = await get('/src/ui/assets/api.ts', { 'if-none-match': res.headers.get('etag') ?? '' });
    assert.equal(again.status, 304);
  });

  it('shares the event catalog with the server, and serves nothing else of the source', async () => {
    const catalog = await get('/src/domain/event-kinds.ts');
    assert.equal(catalog.status, 200);
    assert.match(await catalog.text(), /'message\.unknown'/);
    for (const path of [
      '/src/config.ts',
      '/src/domain/events.ts',
      '/src/app.ts',
      '/src/ui/routes.ts',
      '/src/ui/assets/../../config.ts',
      '/src/ui/assets/%2e%2e/%2e%2e/config.ts',
      '/src/ui/assets/missing.ts',
      '/src/',
    ]) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal((await res.json()).error.code, 'not_found');
    }
  });

  it('stays out of the API description', async () => {
    const doc = await h.request('GET', '/openapi.json');
    assert.ok(
      !Object.keys(doc.body.paths).some((p) => p === '/' || p.startsWith('/ui') || p.startsWith('/src')),
    );
  });
});
