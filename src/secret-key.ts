/**
 * The key that seals signing secrets at rest: SECRET_KEY, or DATA_DIR/secret.key (generated on the first start,
 * mode 0600). The store records the key's fingerprint, so a start with the wrong key is refused with a clear
 * message, and a key rotation interrupted between its database commit and its key-file rename is finished here.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.ts';
import { SecretBox } from './domain/secret-box.ts';
import { makePrivateDir, PRIVATE_FILE_MODE } from './private-files.ts';
import type { Store } from './store/ports.ts';

/** The store setting holding SecretBox.fingerprint() of the key the stored secrets are sealed under. */
export const KEY_CHECK_SETTING = 'secret_key_fingerprint';

export const keyFile = (dataDir: string) => join(dataDir, 'secret.key');
/** Written by a rotation before its commit, renamed over secret.key after it. */
export const nextKeyFile = (dataDir: string) => join(dataDir, 'secret.key.next');

export function readKeyFile(file: string): Buffer {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file}: must hold a 32-byte base64 key`);
  return key;
}

/** Writes a key readable by the owner only, flushed to disk before it returns; refuses to overwrite. */
export function writeKeyFile(file: string, key: Buffer): void {
  const fd = openSync(file, 'wx', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, `${key.toString('base64')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Replaces secret.key by secret.key.next in one atomic step (rename), then flushes the directory entry. */
export function promoteNextKey(dataDir: string): void {
  renameSync(nextKeyFile(dataDir), keyFile(dataDir));
  const dir = openSync(dataDir, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

export class SecretKeyMismatch extends Error {}

/** The SecretBox for this start, checked against the store (see the file comment). */
export async function openSecretBox(config: Config, store: Store): Promise<SecretBox> {
  const recorded = await store.catalog.getSetting(KEY_CHECK_SETTING);
  const next = nextKeyFile(config.dataDir);
  if (config.secretKey === null && existsSync(next)) {
    let pending: SecretBox | null = null;
    try {
      pending = new SecretBox(readKeyFile(next));
    } catch {
      // A torn write: the rotation died before its commit.
    }
    // The rotation committed but did not rename: finish it. Otherwise it never committed: forget its key.
    if (pending?.fingerprint() === recorded) promoteNextKey(config.dataDir);
    else rmSync(next);
  }
  const box = new SecretBox(config.secretKey ?? loadOrCreateKeyFile(config.dataDir));
  const source = config.secretKey ? 'SECRET_KEY' : keyFile(config.dataDir);
  if (recorded === null) {
    await assertOpensStoredSecrets(box, store, source);
    await store.catalog.setSetting(KEY_CHECK_SETTING, box.fingerprint());
  } else if (recorded !== box.fingerprint()) {
    throw new SecretKeyMismatch(
      `${source}: is not the key the stored signing secrets are sealed with (every process on one database must use the same key; after herald rotate-secret-key, the new one)`,
    );
  }
  return box;
}

function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = keyFile(dataDir);
  if (!existsSync(file)) {
    // On PostgreSQL nothing else makes DATA_DIR; the owner alone may list it, as the key inside is theirs alone.
    makePrivateDir(dataDir);
    writeKeyFile(file, randomBytes(32));
  }
  return readKeyFile(file);
}

/** A store from before fingerprints were recorded: the key must open a stored secret before it is trusted. */
async function assertOpensStoredSecrets(box: SecretBox, store: Store, source: string): Promise<void> {
  for (const instance of await store.catalog.listInstances()) {
    const sealed = (await store.webhooks.listWebhooks(instance.instance_id)).find(
      (w) => w.secret_sealed,
    )?.secret_sealed;
    if (!sealed) continue;
    try {
      box.open(sealed);
      return;
    } catch {
      throw new SecretKeyMismatch(`${source}: does not open the stored signing secrets`);
    }
  }
}
