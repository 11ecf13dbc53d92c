/**
 * Instance keys (admin): each may act on this instance only. A new key is shown once, with a copy button, since
 * Herald keeps only its hash; revoking asks first, and a revoked key is refused at once.
 */
import { type ApiError, api, type InstanceKey } from './api.ts';
import { confirmAction, openDialog } from './dialog.ts';
import { h } from './dom.ts';
import { formatTime } from './format.ts';
import { KeyedList, type Row } from './keyed-list.ts';
import { notify } from './notices.ts';

export interface KeysPanel {
  el: HTMLElement;
  refresh(): Promise<void>;
}

function showNewKey(keyId: string, key: string): void {
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
      `Key ${keyId}. Copy it now: Herald keeps only its hash and cannot show it again. It may act on this instance only.`,
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

  const create = h('button', { type: 'button', class: 'button secondary' }, 'Create key');
  create.addEventListener('click', async () => {
    try {
      const { key_id, key } = await api.createKey(instanceId);
      showNewKey(key_id, key);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refresh();
  });

  return {
    el: h(
      'section',
      { class: 'panel', 'aria-labelledby': 'keys-title' },
      h('div', { class: 'panel-head' }, h('h2', { id: 'keys-title' }, 'Instance keys'), create),
      h(
        'p',
        { class: 'help' },
        'A key for this instance only: for its session engine, or for a person who manages only this session.',
      ),
      error,
      h('div', { class: 'card flush' }, list, empty),
    ),
    refresh,
  };
}
