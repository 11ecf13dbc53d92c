/**
 * `herald rotate-secret-key`: re-seals every stored signing secret under a new key, in one transaction.
 *
 * The new key is NEW_SECRET_KEY (64 hex digits or base64; an environment variable, not a flag, so it stays out of
 * `ps` and shell history) or, when unset, 32 random bytes.
 * - Key file mode (SECRET_KEY unset): the new key goes to DATA_DIR/secret.key.next (0600, flushed), the secrets are
 *   re-sealed and the new key's fingerprint recorded in one transaction, then the file is renamed over secret.key.
 *   Interrupted before the commit, nothing changed (the next start deletes the .next file); after it, the next start
 *   or run finishes the rename. The key is never printed.
 * - SECRET_KEY mode: the same transaction; a generated key is printed once, and Herald must then start with
 *   SECRET_KEY set to it (a start with the old key is refused, naming the reason).
 * Herald must be stopped while it runs: a running process keeps sealing and opening with the old key. On SQLite the
 * store's process lock refuses the rotation while Herald runs; on PostgreSQL the operator stops the processes.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createStore } from '../app.ts';
import { type Config, ConfigError, loadConfig, parseSecretKey } from '../config.ts';
import { SecretBox } from '../domain/secret-box.ts';
import {
  KEY_CHECK_SETTING,
  keyFile,
  nextKeyFile,
  openSecretBox,
  promoteNextKey,
  writeKeyFile,
} from '../secret-key.ts';
import type { Command } from './command.ts';

/** Runs the rotation; returns what to print. Throws ConfigError for a bad NEW_SECRET_KEY. */
export async function rotateSecretKey(
  config: Config,
  env: Record<string, string | undefined>,
): Promise<string> {
  const raw = env.NEW_SECRET_KEY?.trim() || undefined;
  const newKey = raw ? parseSecretKey('NEW_SECRET_KEY', raw) : randomBytes(32);
  const next = new SecretBox(newKey);
  const store = await createStore(config);
  try {
    let current: SecretBox;
    try {
      // Also finishes (or forgets) an earlier interrupted rotation, and proves the current key is the right one.
      current = await openSecretBox(config, store);
    } catch (err) {
      // A re-run after a SECRET_KEY-mode rotation that already committed: nothing left to do.
      if ((await store.catalog.getSetting(KEY_CHECK_SETTING)) === next.fingerprint()) {
        return 'the stored signing secrets are already sealed under NEW_SECRET_KEY; nothing to do';
      }
      throw err;
    }
    if (next.fingerprint() === current.fingerprint()) {
      throw new ConfigError('NEW_SECRET_KEY: must differ from the current key');
    }
    const fileMode = config.secretKey === null;
    if (fileMode) writeKeyFile(nextKeyFile(config.dataDir), newKey);
    let count: number;
    try {
      count = await store.catalog.resealSecrets((sealed) => next.seal(current.open(sealed)), {
        name: KEY_CHECK_SETTING,
        value: next.fingerprint(),
      });
    } catch (err) {
      // Rolled back: the old key stays in force, so its would-be successor goes.
      if (fileMode) rmSync(nextKeyFile(config.dataDir), { force: true });
      throw err;
    }
    const lines = [`re-sealed ${count} signing secret${count === 1 ? '' : 's'} under the new key`];
    if (fileMode) {
      promoteNextKey(config.dataDir);
      lines.push(`${keyFile(config.dataDir)} now holds the new key`);
    } else if (raw) {
      lines.push('start Herald with SECRET_KEY set to the value of NEW_SECRET_KEY');
    } else {
      lines.push(
        `start Herald with SECRET_KEY=${newKey.toString('hex')} (shown once; the old key no longer opens the secrets)`,
      );
    }
    return lines.join('\n');
  } finally {
    await store.close();
  }
}

export const rotateSecretKeyCommand: Command = {
  name: 'rotate-secret-key',
  summary: 're-seal every stored signing secret under a new SECRET_KEY (stop Herald first)',
  help: `Usage: herald rotate-secret-key

Re-seals every stored signing secret under a new key, in one transaction; receivers see no change.
Stop every Herald process on the database first. The new key is NEW_SECRET_KEY (64 hex digits or base64)
or, when it is unset, generated. With DATA_DIR/secret.key it replaces that file (never printed); with
SECRET_KEY, restart with SECRET_KEY set to the new key (a generated one is printed once).
Media links handed out before the rotation stop working: their signing key derives from the old key.
See docs/security.md.`,
  run: async () => console.log(await rotateSecretKey(loadConfig(process.env), process.env)),
};
