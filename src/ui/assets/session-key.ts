/**
 * The API key lives in sessionStorage: gone when the tab closes, never in a URL (where history, logs and Referer
 * headers would keep it), never printed.
 */
const KEY = 'herald.key';
const ROLE = 'herald.role';

export type Role = 'admin' | 'instance';

export const sessionKey = {
  get: (): string | null => sessionStorage.getItem(KEY),
  role: (): Role => (sessionStorage.getItem(ROLE) === 'instance' ? 'instance' : 'admin'),
  set(key: string, role: Role): void {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(ROLE, role);
  },
  clear(): void {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ROLE);
  },
};
