/**
 * Entry of the session page. Which view shows follows the path: `/` the instance list, `/ui/instances/{id}` the
 * session page; without a key in this tab, the sign-in first. Links are plain links (a full load of the same
 * shell), so the back button, new tabs and bookmarks work without a client router. `/portal#<token>` is the session
 * page of one instance for a portal link (portal.ts).
 */
import { whenUnauthorized } from './api.ts';
import { byId, h } from './dom.ts';
import { instanceListView } from './instance-list.ts';
import { notify } from './notices.ts';
import { Poller } from './poller.ts';
import { isPortal, renderPortal } from './portal.ts';
import { sessionKey } from './session-key.ts';
import { sessionPageView } from './session-page.ts';
import { signInView } from './sign-in.ts';

const app = byId('app');
const nav = byId('nav');

function signOut(): void {
  sessionKey.clear();
  location.assign('/');
}

function render(): void {
  if (!sessionKey.get()) {
    nav.replaceChildren();
    app.replaceChildren(signInView(render));
    return;
  }
  nav.replaceChildren(
    h('a', { href: '/', class: 'nav-link' }, 'Instances'),
    h('a', { href: '/docs', class: 'nav-link' }, 'API reference'),
    h('span', { class: 'role' }, sessionKey.role() === 'admin' ? 'Admin key' : 'Instance key'),
    h('button', { type: 'button', class: 'button secondary small', onclick: signOut }, 'Sign out'),
  );
  const match = /^\/ui\/instances\/([^/]+)\/?$/.exec(location.pathname);
  app.replaceChildren(match ? sessionPageView(decodeURIComponent(match[1])) : instanceListView());
}

if (isPortal()) {
  void renderPortal(app, nav);
} else {
  whenUnauthorized(() => {
    Poller.stopAll();
    sessionKey.clear();
    render();
    notify('The key was refused (revoked or unknown). Sign in again.', 'bad');
  });
  render();
}
