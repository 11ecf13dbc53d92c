/** The instance list (admin): each session's status, phone, webhooks and failed deliveries; create an instance. */
import { type ApiError, api, type Instance } from './api.ts';
import { h, keepingFocus } from './dom.ts';
import { clearErrors, showErrors } from './field-errors.ts';
import { formatPhone, sessionLabel, sessionTone } from './format.ts';
import { KeyedList, type Row } from './keyed-list.ts';
import { notify } from './notices.ts';
import { Poller } from './poller.ts';
import { sessionKey } from './session-key.ts';

export const sessionPath = (id: string) => `/ui/instances/${encodeURIComponent(id)}`;

function instanceRow(first: Instance): Row<Instance> {
  const el = h('tr', {});
  const render = (i: Instance) =>
    keepingFocus(el, () =>
      el.replaceChildren(
        h(
          'td',
          {},
          h(
            'a',
            { href: sessionPath(i.instance_id), class: 'strong', 'data-focus': 'open' },
            i.name || 'Unnamed',
          ),
          h('div', { class: 'mono muted small' }, i.instance_id),
        ),
        h('td', {}, h('span', { class: `badge ${sessionTone(i.status)}` }, sessionLabel(i.status))),
        h('td', { class: i.phone ? '' : 'muted' }, formatPhone(i.phone)),
        // data-label names the counts where a phone-width screen stacks the row.
        h('td', { class: 'num', 'data-label': 'Webhooks' }, i.counts.webhooks),
        h(
          'td',
          { class: 'num', 'data-label': 'Failed deliveries' },
          i.counts.failed_deliveries
            ? h('span', { class: 'badge bad' }, i.counts.failed_deliveries)
            : h('span', { class: 'muted' }, '0'),
        ),
      ),
    );
  render(first);
  return { el, update: render };
}

export function instanceListView(): HTMLElement {
  const body = h('tbody', {});
  const rows = new KeyedList<Instance>(body, (i) => i.instance_id, instanceRow);
  const empty = h('p', { class: 'empty', hidden: true }, 'No instances yet. Create the first one below.');
  const status = h('p', { class: 'form-error', role: 'alert' });
  const table = h(
    'table',
    { class: 'table instances' },
    h('caption', { class: 'visually-hidden' }, 'Instances'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Instance'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Phone'),
        h('th', { scope: 'col', class: 'num' }, 'Webhooks'),
        h('th', { scope: 'col', class: 'num' }, 'Failed deliveries'),
      ),
    ),
    body,
  );

  const poller = new Poller(async () => {
    try {
      const instances = await api.listInstances();
      rows.set(instances);
      empty.hidden = instances.length > 0;
      table.hidden = instances.length === 0;
      status.replaceChildren();
    } catch (err) {
      status.textContent = (err as ApiError).message;
      throw err;
    }
  }, 5000);
  void poller.now();

  const view = h(
    'section',
    { class: 'page' },
    h(
      'div',
      { class: 'page-head' },
      h('h1', {}, 'Instances'),
      h('p', { class: 'muted' }, 'Sessions and their webhooks'),
    ),
    status,
    h('div', { class: 'card flush' }, h('div', { class: 'table-wrap' }, table), empty),
    sessionKey.role() === 'admin' ? createForm(() => poller.now()) : null,
  );
  return view;
}

function createForm(refresh: () => Promise<void>): HTMLElement {
  const input = h('input', {
    id: 'instance-name',
    name: 'name',
    type: 'text',
    maxlength: 200,
    placeholder: 'e.g. Sales line',
  });
  const form = h(
    'form',
    { class: 'card inline-form', novalidate: true, 'aria-labelledby': 'create-instance' },
    h('h2', { id: 'create-instance' }, 'Create an instance'),
    h('div', { class: 'form-error', role: 'alert' }),
    h(
      'div',
      { class: 'row' },
      h(
        'div',
        { class: 'field grow', 'data-field': 'name' },
        h('label', { for: 'instance-name' }, 'Name'),
        input,
      ),
      h('button', { type: 'submit', class: 'button primary' }, 'Create instance'),
    ),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    try {
      const { instance_id } = await api.createInstance(input.value.trim());
      notify(`Instance ${input.value.trim() || instance_id} created`);
      input.value = '';
      await refresh();
    } catch (err) {
      showErrors(form, err as ApiError);
    }
  });
  return form;
}
