/**
 * The API reference at /docs: Swagger UI (loaded by docs.html as the global SwaggerUIBundle) renders /openapi.json,
 * which needs a key like every endpoint. The key is the one the session page keeps in this tab; without one the
 * page shows the session page's own sign-in first. "Try it out" sends the same key.
 */
import { h } from './dom.ts';
import { sessionKey } from './session-key.ts';
import { signInView } from './sign-in.ts';

interface SwaggerUi {
  authActions: { authorize(auth: Record<string, unknown>): void };
}
declare const SwaggerUIBundle: ((options: Record<string, unknown>) => SwaggerUi) & {
  plugins: Record<string, unknown>;
};

const app = document.getElementById('app') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;

function signOut(): void {
  sessionKey.clear();
  location.reload();
}

async function render(): Promise<void> {
  const key = sessionKey.get();
  if (!key) {
    nav.replaceChildren();
    app.replaceChildren(signInView(() => void render()));
    return;
  }
  nav.replaceChildren(
    h('a', { href: '/', class: 'nav-link' }, 'Instances'),
    h('a', { href: '/docs', class: 'nav-link', 'aria-current': 'page' }, 'API reference'),
    h('span', { class: 'role' }, sessionKey.role() === 'admin' ? 'Admin key' : 'Instance key'),
    h('button', { type: 'button', class: 'button secondary small', onclick: signOut }, 'Sign out'),
  );
  const res = await fetch('/openapi.json', { headers: { authorization: `Bearer ${key}` } });
  if (res.status === 401) {
    sessionKey.clear();
    void render();
    return;
  }
  if (!res.ok) {
    app.replaceChildren(
      h('p', { class: 'banner bad', role: 'alert' }, `/openapi.json answered ${res.status}`),
    );
    return;
  }
  const spec = await res.json();
  const dom = h('div', { id: 'swagger' });
  app.replaceChildren(dom);
  const ui = SwaggerUIBundle({
    spec,
    domNode: dom,
    deepLinking: true,
    // No call to the public validator, nor anything else off this origin.
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
    tryItOutEnabled: false,
    displayRequestDuration: true,
  });
  // Signed in already: "Try it out" carries the key, and the Authorize dialog shows it is set.
  ui.authActions.authorize({
    bearer: { name: 'bearer', schema: { type: 'http', scheme: 'bearer' }, value: key },
  });
}

void render();
