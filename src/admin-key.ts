/**
 * The admin key: ADMIN_API_KEY when set, else one Herald generates, shows once, and keeps only the hash of. A lost
 * generated key is replaced, never recovered: `herald admin-key` issues a new one (and the old one stops working).
 */
import { hashKey } from './api/auth.ts';
import { randomToken } from './domain/ids.ts';
import type { Store } from './store/ports.ts';

const SETTING = 'admin_key_hash';

/** Generates a new admin key, stores its hash in place of the previous one, and returns it (to be shown once). */
export async function issueAdminKey(store: Store): Promise<string> {
  const key = `hk_admin_${randomToken(32)}`;
  await store.catalog.setSetting(SETTING, hashKey(key));
  return key;
}

/** The hash Herald checks the admin key against; `generated` is set only when a new key was made just now. */
export async function resolveAdminKey(
  store: Store,
  configured: string | null,
): Promise<{ hash: string; generated: string | null }> {
  if (configured) return { hash: hashKey(configured), generated: null };
  const stored = await store.catalog.getSetting(SETTING);
  if (stored) return { hash: stored, generated: null };
  const key = await issueAdminKey(store);
  return { hash: hashKey(key), generated: key };
}
