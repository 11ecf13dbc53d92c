/**
 * Why a download from the engine failed, as EngineFetch tells it, for the cases the API tests cannot reach from one
 * configuration: a 401 although ENGINE_MEDIA_HEADERS is set, and the destination guard refusing at the connection
 * (the name resolved to a public address when checked, to a private one when connecting). Real file server on
 * 127.0.0.1, real spool directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EngineFetch, type EngineFetchOptions } from '../../src/media/engine-fetch.ts';
import { AddressAllowList } from '../../src/net/address-allow-list.ts';
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

async function fetchWith(url: string, o: Partial<EngineFetchOptions>) {
  const engine = new EngineFetch({
    destinations: { allowPrivate: true },
    headers: {},
    timeoutMs: 2000,
    maxBytes: 1024,
    spoolDir,
    ...o,
  });
  try {
    return await engine.fetch(url);
  } finally {
    await engine.close();
  }
}

describe('why an engine download failed', () => {
  test('401 or 403 with ENGINE_MEDIA_HEADERS set: check the key it sends', async () => {
    for (const status of [401, 403]) {
      const url = files.serve(`wrong-key-${status}.jpg`, { status });
      const got = await fetchWith(url, { headers: { 'X-Api-Key': 'wrong' } });
      assert.deepEqual(got, {
        kind: 'failed',
        failure: {
          reason: 'status',
          detail: `the engine answered ${status}: check the X-Api-Key that ENGINE_MEDIA_HEADERS sends`,
        },
      });
    }
  });

  test('a name that resolves elsewhere at the connection is refused there, and said so', async () => {
    const url = files.serve('rebound.jpg', { bytes: Buffer.from('x') });
    const port = new URL(url).port;
    let asked = 0;
    // Public when checked, loopback (outside the allow-list) when connecting.
    const lookup = async () => (asked++ === 0 ? ['93.184.215.14'] : ['127.0.0.2']);
    const got = await fetchWith(`http://waha.test:${port}/api/files/rebound.jpg`, {
      destinations: { allowPrivate: false, allow: new AddressAllowList([]), lookup },
    });
    assert.equal(got.kind, 'failed');
    assert.equal(got.kind === 'failed' && got.failure.reason, 'refused');
    assert.match(
      got.kind === 'failed' ? got.failure.detail : '',
      /^the destination guard refused media\.url: waha\.test resolves to 127\.0\.0\.2, which is not a globally reachable address \(loopback, 127\.0\.0\.0\/8\); to download from it, set ALLOW_PRIVATE_DESTINATIONS=true/,
    );
    assert.equal(files.requestsFor(url).length, 0, 'never connected');
  });
});
