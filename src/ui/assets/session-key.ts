/**
 * The API key lives in sessionStorage: gone when the tab closes, never in a URL (where history, logs and Referer
 * headers would keep it), never printed. A portal link's token is kept in memory only: it comes in the URL's
 * fragment (never sent to a server), and a page framed by another site may not use storage at all when the browser
 * blocks third-party cookies.
 */
const KEY = 'herald.key';
const ROLE = 'herald.role';

export type Role = 'admin' | 'instance' | 'portal';

let portal: string | null = null;

export const sessionKey = {
  get: (): string | null => portal ?? sessionStorage.getItem(KEY),
  role: (): Role => (portal ? 'portal' : sessionStorage.getItem(ROLE) === 'instance' ? 'instance' : 'admin'),
  set(key: string, role: Role): void {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(ROLE, role);
  },
  /** The portal's token, for this page's life. */
  usePortal(token: string): void {
    portal = token;
  },
  clear(): void {
    if (portal) {
      portal = null;
      return;
    }
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ROLE);
  },
};
