/** A lost generated admin key: `herald admin-key` issues a new one, printed once; the old one stops working. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { apiRequest } from '../support/herald.ts';

test('herald admin-key replaces a lost generated key; ADMIN_API_KEY makes it refuse', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-admin-key-'));
  const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
  const serve = async () => {
    const p = runCli(['serve'], env);
    const [, url] = await p.waitFor(/Herald is listening on (\S+)/);
    return { p, url };
  };
  try {
    const first = await serve();
    const [, lost] = await first.p.waitFor(/Admin API key \(shown once, only its hash is stored\): (\S+)/);
    await first.p.stop();

    const issue = runCli(['admin-key'], env);
    assert.equal((await issue.exited).code, 0, issue.output());
    const [, key] = await issue.waitFor(
      /New admin API key \(shown once, only its hash is stored\): (hk_admin_\S+)/,
    );
    assert.notEqual(key, lost);

    const second = await serve();
    assert.doesNotMatch(second.p.output(), /Admin API key/, 'no key generated: the new one is in place');
    assert.equal((await apiRequest(second.url, 'GET', '/instances', { key: lost })).status, 401);
    assert.equal((await apiRequest(second.url, 'GET', '/instances', { key })).status, 200);
    await second.p.stop();

    const refused = runCli(['admin-key'], { ...env, ADMIN_API_KEY: 'an-admin-key-set-by-the-operator' });
    assert.equal((await refused.exited).code, 2);
    assert.match(refused.output(), /^herald: ADMIN_API_KEY is set, so the admin key is its value/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
