/**
 * `herald admin-key`: issues a new admin key when the generated one is lost. Only its hash is stored, so the old key
 * cannot be shown again; the new one replaces it (the old stops working) and is printed once. With ADMIN_API_KEY set
 * the admin key is that value and this command has nothing to change.
 */

import { issueAdminKey } from '../admin-key.ts';
import { createStore } from '../app.ts';
import { ConfigError, loadConfig } from '../config.ts';
import type { Command } from './command.ts';

const help = `Usage: herald admin-key

Issues a new admin key and prints it once; the previous generated key stops working. For a lost key: stop
Herald, run this, start Herald again (on PostgreSQL, restart every process). Only the key's hash is stored.
With ADMIN_API_KEY set, the admin key is that value: change the variable instead.`;

async function run(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.adminApiKey) {
    throw new ConfigError(
      'ADMIN_API_KEY is set, so the admin key is its value: set another value to change it',
    );
  }
  const store = await createStore(config);
  try {
    const key = await issueAdminKey(store);
    console.log(`New admin API key (shown once, only its hash is stored): ${key}`);
    console.log(
      'Restart Herald (every process on PostgreSQL) for it to take effect; the previous key stops working then.',
    );
  } finally {
    await store.close();
  }
}

export const adminKeyCommand: Command = {
  name: 'admin-key',
  summary: 'issue a new admin key when the generated one is lost (stop Herald first)',
  help,
  run,
};
