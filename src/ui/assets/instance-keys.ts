/**
 * Instance keys (admin): each may act on this instance only, managing it or (a publish key, for the engine) only
 * publishing its events. A new key is shown once, with a copy button, since Herald keeps only its hash; revoking
 * asks first, and a revoked key is refused at once.
 */
import { type ApiError, api, type InstanceKey, type KeyScope } from './api.ts';
import { confirmAction, openDialog } from './dialog.ts';
import { h, uid } from './dom.ts';
import { formatTime } from './format.ts';
import { KeyedList, type Row } from './keyed-list.ts';
import { notify } from './notices.ts';

export interface KeysPanel {
  el: HTMLElement;
  refresh(): Promise<void>;
}

const SCOPE_WORDS: Record<KeyScope, string> = {
  manage: 'It manages this instance only: its webhooks, delivery log, events and portal links.',
  publish: 'It only publishes this instance’s events: give it to the session engine.',
};

function showNewKey(keyId: string, key: string, scope: KeyScope): void {
  const value = h('input', {
    type: 'text',
    readonly: true,
    value: key,
    class: 'mono',
    'aria-label': 'New key',
  });
  const copy = h('button', { type: 'button', class: 'button primary', 'data-focus': 'copy' }, 'Copy key');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(key);
      notify('Key copied');
    } catch {
      value.select();
      notify('The browser refused the clipboard: the key is selected, copy it with the keyboard.', 'bad');
    }
  });
  openDialog('New instance key', (close) => [
    h(
      'p',
      {},
      `Key ${keyId}. Copy it now: Herald keeps only its hash and cannot show it again. ${SCOPE_WORDS[scope]}`,
    ),
    h('div', { class: 'row' }, value, copy),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button secondary', onclick: close }, 'Done'),
    ),
  ]);
  copy.focus();
}

export function keysPanel(instanceId: string): KeysPanel {
  const list = h('ul', { class: 'keys', 'aria-label': 'Instance keys' });
  const empty = h(
    'p',
    { class: 'empty', hidden: true },
    'No instance keys. The admin key acts on every instance.',
  );
  const error = h('p', { class: 'form-error', role: 'alert' });

  function keyRow(first: InstanceKey): Row<InstanceKey> {
    const el = h('li', { class: 'key-row', 'data-key-id': first.key_id });
    const render = (k: InstanceKey) =>
      el.replaceChildren(
        h('span', { class: 'mono' }, k.key_id),
        h('span', { class: 'badge muted' }, k.scope),
        h('span', { class: 'muted small' }, `created ${formatTime(k.created_at)}`),
        h(
          'button',
          { type: 'button', class: 'button danger-quiet small', onclick: () => revoke(k) },
          'Revoke',
        ),
      );
    render(first);
    return { el, update: render };
  }
  const rows = new KeyedList<InstanceKey>(list, (k) => k.key_id, keyRow);

  async function refresh() {
    try {
      const keys = await api.listKeys(instanceId);
      rows.set(keys);
      empty.hidden = keys.length > 0;
      error.replaceChildren();
    } catch (err) {
      error.textContent = (err as ApiError).message;
    }
  }

  async function revoke(k: InstanceKey) {
    const ok = await confirmAction(
      'Revoke key?',
      `${k.key_id} stops working at once: whatever uses it (an engine, a script) is refused from now on.`,
      'Revoke key',
      true,
    );
    if (!ok) return;
    try {
      await api.revokeKey(instanceId, k.key_id);
      notify(`Key ${k.key_id} revoked`);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refresh();
  }

  const scopeId = uid('key-scope');
  const scope = h(
    'select',
    { id: scopeId, name: 'scope' },
    h('option', { value: 'manage' }, 'Manage'),
    h('option', { value: 'publish' }, 'Publish only (engine)'),
  );
  const create = h('button', { type: 'button', class: 'button secondary' }, 'Create key');
  create.addEventListener('click', async () => {
    try {
      const made = await api.createKey(instanceId, scope.value as KeyScope);
      showNewKey(made.key_id, made.key, made.scope);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refresh();
  });

  return {
    el: h(
      'section',
      { class: 'panel', 'aria-labelledby': 'keys-title' },
      h(
        'div',
        { class: 'panel-head' },
        h('h2', { id: 'keys-title' }, 'Instance keys'),
        h('div', { class: 'key-create' }, h('label', { for: scopeId }, 'Scope'), scope, create),
      ),
      h(
        'p',
        { class: 'help' },
        'A key for this instance only. Manage: for a person who manages only this session. Publish only: for its ' +
          'session engine, which then can publish events and read nothing back.',
      ),
      error,
      h('div', { class: 'card flush' }, list, empty),
    ),
    refresh,
  };
}
