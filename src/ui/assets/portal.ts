/**
 * The portal: the session page of one instance, opened from a portal link (`/portal#hpl_…`). The token is read from
 * the fragment and kept in memory (session-key.ts), never in storage or a cookie, so the page works framed by
 * another site in a browser that blocks third-party cookies. It shows no instance list, no keys and no instance
 * delete; a read-only link shows no control that writes. Its title and accent are the platform's (PORTAL_TITLE,
 * PORTAL_ACCENT).
 */
import { ApiError, api, whenUnauthorized } from './api.ts';
import { h } from './dom.ts';
import { Poller } from './poller.ts';
import { sessionKey } from './session-key.ts';
import { sessionPageView } from './session-page.ts';

export const isPortal = (): boolean => location.pathname === '/portal';

const meta = (name: string): string =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';

function brand(): void {
  const title = meta('herald-portal-title') || 'Herald';
  document.title = title;
  const accent = meta('herald-portal-accent');
  if (/^#[0-9a-f]{6}$/.test(accent)) {
    for (const name of ['--accent', '--accent-hover'])
      document.documentElement.style.setProperty(name, accent);
  }
  const home = document.querySelector('.brand');
  home?.replaceWith(h('span', { class: 'brand' }, title));
}

const ended = (why: string) =>
  h(
    'section',
    { class: 'card portal-ended', role: 'alert' },
    h('h1', {}, 'This link no longer works'),
    h('p', {}, why),
  );

export async function renderPortal(app: HTMLElement, nav: HTMLElement): Promise<void> {
  brand();
  nav.replaceChildren();
  const token = location.hash.slice(1);
  if (!token.startsWith('hpl_')) {
    app.replaceChildren(ended('The link is incomplete: open it again as you were given it.'));
    return;
  }
  sessionKey.usePortal(token);
  const expired = () => {
    Poller.stopAll();
    app.replaceChildren(ended('It has expired or was revoked. Ask for a new link.'));
  };
  whenUnauthorized(expired);
  try {
    const link = await api.portalLink();
    if (link.read_only) document.body.dataset.readOnly = '';
    nav.replaceChildren(h('span', { class: 'role' }, link.read_only ? 'View only' : 'Portal'));
    app.replaceChildren(sessionPageView(link.instance_id));
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) expired();
    else app.replaceChildren(ended((err as Error).message));
  }
}
