/**
 * `herald rotate-secret-key` end to end: a real Herald signs deliveries, stops, the command (a real child process)
 * rotates the key, and a Herald started again still signs with the same signing secrets. Also: a start with the old
 * SECRET_KEY is refused, and both crash windows of a key-file rotation are recovered.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { verify } from '../../packages/receiver/src/verify.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import { KEY_CHECK_SETTING, keyFile, nextKeyFile, readKeyFile, writeKeyFile } from '../../src/secret-key.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import { startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');
const SECRETS = ['whsec_rotation_one', 'whsec_rotation_two'];

/** Runs `herald rotate-secret-key` as its own process over `dataDir`. */
async function rotate(dataDir: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'rotate-secret-key'], {
      cwd: dataDir,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, ...env },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

let receiver: TestReceiver;
before(async () => {
  receiver = await TestReceiver.start();
});
after(() => receiver.close());

/** Starts Herald over `dataDir`, publishes one event, and asserts each webhook's delivery verifies with its secret. */
async function assertSignedDeliveries(dataDir: string, env: Record<string, string>, existing?: string) {
  const h = await startTestHerald(env, { dataDir });
  try {
    let ins = existing;
    if (ins === undefined) {
      ins = await h.createInstance('rotation');
      for (const secret of SECRETS) {
        await h.createWebhook(ins, {
          destination_url: receiver.url,
          events: ['session.status'],
          client_sign_secret: secret,
        });
      }
    }
    const before = receiver.received.length;
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
    const got = (await receiver.waitFor(before + SECRETS.length)).slice(before);
    const verified = got.map((r) =>
      SECRETS.filter((secret) => verify({ secret, headers: r.headers, rawBody: r.rawBody }).ok),
    );
    assert.deepEqual(
      verified.flat().sort(),
      [...SECRETS].sort(),
      'each delivery verifies with its own secret',
    );
    return ins;
  } finally {
    await h.close({ keepData: true });
  }
}

describe('rotate-secret-key with the key file in DATA_DIR', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-rotate-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('re-seals every secret; deliveries after it are signed with the same secrets', async () => {
    const ins = await assertSignedDeliveries(dataDir, {});
    const oldKey = readFileSync(keyFile(dataDir), 'utf8');
    const db = readFileSync(join(dataDir, 'herald.db'));

    const r = await rotate(dataDir);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /re-sealed 2 signing secrets under the new key/);
    const newKey = readFileSync(keyFile(dataDir), 'utf8');
    assert.notEqual(newKey, oldKey);
    assert.ok(!r.out.includes(newKey.trim()), 'a key-file rotation never prints the key');
    assert.equal(statSync(keyFile(dataDir)).mode & 0o777, 0o600);
    assert.equal(existsSync(nextKeyFile(dataDir)), false);
    assert.notDeepEqual(readFileSync(join(dataDir, 'herald.db')), db);

    await assertSignedDeliveries(dataDir, {}, ins);
  });

  it('is refused while a Herald serves the same DATA_DIR, and changes nothing', async () => {
    const h = await startTestHerald({}, { dataDir });
    try {
      const key = readFileSync(keyFile(dataDir), 'utf8');
      const r = await rotate(dataDir);
      assert.equal(r.code, 2, r.out);
      assert.match(r.out, /herald\.db is in use by another Herald process/);
      assert.equal(readFileSync(keyFile(dataDir), 'utf8'), key);
      assert.equal(existsSync(nextKeyFile(dataDir)), false);
    } finally {
      await h.close({ keepData: true });
    }
  });

  it('interrupted while writing the new key: the torn file is forgotten', async () => {
    writeFileSync(nextKeyFile(dataDir), 'dG9ybg', { mode: 0o600 });
    await assertSignedDeliveries(dataDir, {}, await firstInstance(dataDir));
    assert.equal(existsSync(nextKeyFile(dataDir)), false);
  });

  it('interrupted after writing the new key but before the commit: the old key stays in force', async () => {
    writeKeyFile(nextKeyFile(dataDir), randomBytes(32));
    const ins = await firstInstance(dataDir);
    await assertSignedDeliveries(dataDir, {}, ins);
    assert.equal(existsSync(nextKeyFile(dataDir)), false, 'the uncommitted key is forgotten');
  });

  it('interrupted after the commit but before the rename: the next start finishes it', async () => {
    const current = new SecretBox(readKeyFile(keyFile(dataDir)));
    const newKey = randomBytes(32);
    const next = new SecretBox(newKey);
    // Exactly what the command leaves behind when it dies between its transaction and its rename.
    writeKeyFile(nextKeyFile(dataDir), newKey);
    const store = openSqliteStore(join(dataDir, 'herald.db'));
    await store.catalog.resealSecrets((s) => next.seal(current.open(s)), {
      name: KEY_CHECK_SETTING,
      value: next.fingerprint(),
    });
    await store.close();

    const ins = await firstInstance(dataDir);
    await assertSignedDeliveries(dataDir, {}, ins);
    assert.deepEqual(readKeyFile(keyFile(dataDir)), newKey);
    assert.equal(existsSync(nextKeyFile(dataDir)), false);
  });
});

describe('rotate-secret-key with SECRET_KEY', () => {
  let dataDir: string;
  const oldKey = randomBytes(32).toString('hex');
  const newKey = randomBytes(32).toString('base64');
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-rotate-env-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('re-seals under NEW_SECRET_KEY; the old key is then refused at start, the new one signs as before', async () => {
    const ins = await assertSignedDeliveries(dataDir, { SECRET_KEY: oldKey });
    const r = await rotate(dataDir, { SECRET_KEY: oldKey, NEW_SECRET_KEY: newKey });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /re-sealed 2 signing secrets/);
    assert.ok(!r.out.includes(newKey) && !r.out.includes(oldKey));

    await assert.rejects(
      startTestHerald({ SECRET_KEY: oldKey }, { dataDir }),
      /SECRET_KEY: is not the key the stored signing secrets are sealed with/,
    );
    await assertSignedDeliveries(dataDir, { SECRET_KEY: newKey }, ins);

    const again = await rotate(dataDir, { SECRET_KEY: oldKey, NEW_SECRET_KEY: newKey });
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /already sealed under NEW_SECRET_KEY; nothing to do/);
  });

  it('refuses a bad NEW_SECRET_KEY or the wrong current key, changing nothing', async () => {
    const bad = await rotate(dataDir, { SECRET_KEY: newKey, NEW_SECRET_KEY: 'c2hvcnQ=' });
    assert.equal(bad.code, 2);
    assert.match(bad.out, /^herald: NEW_SECRET_KEY: must be 32 bytes/m);
    const wrong = await rotate(dataDir, { SECRET_KEY: randomBytes(32).toString('hex') });
    assert.equal(wrong.code, 2);
    assert.match(wrong.out, /^herald: SECRET_KEY: is not the key/m);
    const ins = await firstInstance(dataDir);
    await assertSignedDeliveries(dataDir, { SECRET_KEY: newKey }, ins);
  });
});

async function firstInstance(dataDir: string): Promise<string> {
  const store = openSqliteStore(join(dataDir, 'herald.db'));
  try {
    return (await store.catalog.listInstances())[0].instance_id;
  } finally {
    await store.close();
  }
}
