/**
 * EngineFetch in the cases the API tests cannot reach from one configuration: a 401 although ENGINE_MEDIA_HEADERS is
 * set (sent, or withheld and why), a name resolved once and connected to at that address, and a name outside the
 * prefixes whose lookup fails or comes back empty. Real file server on 127.0.0.1, real spool directory; the resolver
 * is injected to point names at 127.0.0.x.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EngineFetch, type EngineFetchOptions, type MediaOrigin } from '../../src/media/engine-fetch.ts';
import { EngineFiles } from '../support/engine.ts';

let files: EngineFiles;
let spoolDir: string;
before(async () => {
  files = await EngineFiles.start();
  spoolDir = mkdtempSync(join(tmpdir(), 'herald-engine-fetch-'));
});
after(async () => {
  await files.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

const ENGINE: MediaOrigin = { viaEngine: true, instancePrefix: null };

async function fetchWith(url: string, o: Partial<EngineFetchOptions>, origin = ENGINE) {
  const engine = new EngineFetch({
    prefixes: [files.prefix],
    headers: {},
    timeoutMs: 2000,
    maxBytes: 1024,
    spoolDir,
    ...o,
  });
  try {
    return await engine.fetch(url, origin);
  } finally {
    await engine.close();
  }
}

const detail = (got: Awaited<ReturnType<typeof fetchWith>>) => (got.kind === 'failed' ? got.failure : null);

describe('why an engine download failed', () => {
  test('401 or 403 with ENGINE_MEDIA_HEADERS sent: check the key it sends', async () => {
    for (const status of [401, 403]) {
      const url = files.serve(`wrong-key-${status}.jpg`, { status });
      const got = await fetchWith(url, { headers: { 'X-Api-Key': 'wrong' } });
      assert.deepEqual(detail(got), {
        reason: 'status',
        detail: `the engine answered ${status}: check the X-Api-Key that ENGINE_MEDIA_HEADERS sends`,
      });
      assert.equal(files.requestsFor(url)[0].headers['x-api-key'], 'wrong');
    }
  });

  test('a 401 for an event of Herald’s event API: the headers were withheld, and it says why', async () => {
    const url = files.serve('withheld.jpg', { status: 401 });
    const got = await fetchWith(
      url,
      { headers: { 'X-Api-Key': 'k' } },
      { viaEngine: false, instancePrefix: null },
    );
    assert.deepEqual(detail(got), {
      reason: 'status',
      detail:
        'the engine answered 401: ENGINE_MEDIA_HEADERS were not sent, since the event was not posted to an engine endpoint',
    });
    assert.equal(files.requestsFor(url)[0].headers['x-api-key'], undefined);
  });
});

describe('where the download connects', () => {
  test('under a prefix, a name is resolved once and the connection goes to that address', async () => {
    const url = files.serve('pinned.jpg', { bytes: Buffer.from('jpeg'), type: 'image/jpeg' });
    const port = new URL(url).port;
    let asked = 0;
    // 127.0.0.1 (where the server is) when first asked; 127.0.0.2 (nothing listens) should anyone ask again.
    const lookup = async () => (asked++ === 0 ? ['127.0.0.1'] : ['127.0.0.2']);
    const got = await fetchWith(`http://waha.test:${port}/api/files/pinned.jpg`, {
      prefixes: [`http://waha.test:${port}/api/files/`],
      headers: { 'X-Api-Key': 'k' },
      lookup,
    });
    assert.equal(got.kind, 'file', JSON.stringify(detail(got)));
    assert.equal(asked, 1, 'one lookup');
    const [req] = files.requestsFor(url);
    assert.equal(req.headers.host, `waha.test:${port}`, 'the name still goes in Host');
    assert.equal(req.headers['x-api-key'], 'k');
  });

  test('outside the prefixes, a name that resolves to a private address is refused, asked once, never connected', async () => {
    const url = files.serve('private.jpg', { bytes: Buffer.from('x') });
    const port = new URL(url).port;
    let asked = 0;
    const lookup = async () => {
      asked++;
      return ['127.0.0.1'];
    };
    const got = await fetchWith(`http://files.example:${port}/api/files/private.jpg`, { lookup });
    assert.deepEqual(detail(got), {
      reason: 'outside_prefixes',
      detail:
        `media.url is not under ENGINE_MEDIA_PREFIXES (${files.prefix}), and files.example resolves to 127.0.0.1, ` +
        'which is not a globally reachable address (loopback, 127.0.0.0/8): a private address outside ' +
        "ENGINE_MEDIA_PREFIXES is never downloaded from (to download the engine's files, add where it serves them to " +
        'ENGINE_MEDIA_PREFIXES)',
    });
    assert.equal(asked, 1);
    assert.equal(files.requestsFor(url).length, 0, 'never connected');
  });

  test('outside the prefixes, a lookup that fails or comes back empty refuses: an unchecked address may be any', async () => {
    const failing = async (): Promise<string[]> => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN files.example'), { code: 'EAI_AGAIN' });
    };
    const empty = async (): Promise<string[]> => [];
    for (const [lookup, code] of [
      [failing, 'EAI_AGAIN'],
      [empty, 'ENOTFOUND'],
    ] as const) {
      const got = await fetchWith('http://files.example/x.jpg', { lookup });
      assert.deepEqual(detail(got), {
        reason: 'outside_prefixes',
        detail:
          `media.url is not under ENGINE_MEDIA_PREFIXES (${files.prefix}), and files.example could not be resolved ` +
          `(${code}): outside ENGINE_MEDIA_PREFIXES only an address checked as globally reachable is downloaded from`,
      });
    }
  });

  test('under a prefix, a name that does not resolve is a failed connection to the engine', async () => {
    const got = await fetchWith('http://waha.test/api/files/x.jpg', {
      prefixes: ['http://waha.test/api/files/'],
      lookup: async () => [],
    });
    assert.deepEqual(detail(got), {
      reason: 'connection',
      detail: 'the connection to the engine failed: waha.test could not be resolved (ENOTFOUND)',
    });
  });

  test('an instance prefix that ENGINE_MEDIA_PREFIXES no longer covers trusts nothing, and says so', async () => {
    const url = files.serve('stale.jpg', { bytes: Buffer.from('x') });
    const got = await fetchWith(
      url,
      {},
      { viaEngine: true, instancePrefix: 'http://old-waha:3000/api/files/a/' },
    );
    assert.match(
      detail(got)?.detail ?? '',
      /^media\.url is not under this instance's engine_media_prefix \(http:\/\/old-waha:3000\/api\/files\/a\/, no longer within ENGINE_MEDIA_PREFIXES\), and 127\.0\.0\.1 is not/,
    );
    assert.equal(files.requestsFor(url).length, 0);
  });
});
