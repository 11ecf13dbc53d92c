/**
 * The delivery log (seed §1, SPEC §8): newest first, filtered by status, webhook and event kind, paged; each
 * delivery opens to its detail; Redeliver on a failed one, Redeliver all failed with the count first.
 * Refreshes keep filters, page, open deliveries and focus: rows are updated in place by delivery id.
 */
import { EVENT_KINDS } from '../../domain/events.ts';
import { type ApiError, api, type Counts, type Delivery, type DeliveryStatus, type Webhook } from './api.ts';
import { deliveryDetail } from './delivery-detail.ts';
import { confirmAction } from './dialog.ts';
import { fill, h, keepingFocus, uid } from './dom.ts';
import { formatTime, lastResult, plural, shortUrl } from './format.ts';
import { KeyedList, type Row } from './keyed-list.ts';
import { notify } from './notices.ts';

const PAGE_SIZE = 25;
const STATUS_LABEL: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
};
const STATUS_TONE: Record<DeliveryStatus, string> = { pending: 'info', delivered: 'good', failed: 'bad' };

export interface DeliveryLog {
  el: HTMLElement;
  setContext(webhooks: Webhook[], counts: Counts): void;
  refresh(): Promise<void>;
}

function select(label: string, options: [string, string][], onChange: () => void): HTMLSelectElement {
  const el = h('select', { id: uid('filter'), name: label.toLowerCase() });
  for (const [value, text] of options) el.append(h('option', { value }, text));
  el.addEventListener('change', onChange);
  return el;
}

/** Replaces a select's options and keeps its choice (a webhook filter survives the list refreshing). */
function setOptions(el: HTMLSelectElement, options: [string, string][]): void {
  const value = el.value;
  const same =
    options.length === el.options.length &&
    options.every(([v, t], i) => el.options[i].value === v && el.options[i].text === t);
  if (same) return;
  el.replaceChildren(...options.map(([v, t]) => h('option', { value: v }, t)));
  el.value = options.some(([v]) => v === value) ? value : '';
}

export function deliveryLog(instanceId: string, refreshAll: () => Promise<void>): DeliveryLog {
  let webhooks = new Map<string, Webhook>();
  let counts: Counts = { webhooks: 0, failed_deliveries: 0, redeliverable_deliveries: 0 };
  const open = new Set<string>();
  let cursors: (string | undefined)[] = [undefined];
  let nextCursor: string | null = null;

  const reload = () => {
    cursors = [undefined];
    void refresh();
  };
  const status = select(
    'Status',
    [
      ['', 'All statuses'],
      ['pending', 'Pending'],
      ['delivered', 'Delivered'],
      ['failed', 'Failed'],
    ],
    reload,
  );
  const webhook = select('Webhook', [['', 'All webhooks']], reload);
  const event = select(
    'Event',
    [['', 'All events'], ...EVENT_KINDS.map((k): [string, string] => [k, k])],
    reload,
  );
  const filter = (el: HTMLSelectElement, text: string) =>
    h('div', { class: 'field compact' }, h('label', { for: el.id }, text), el);

  const list = h('ul', { class: 'deliveries', 'aria-label': 'Deliveries, newest first' });
  const empty = h('p', { class: 'empty', hidden: true });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const newer = h('button', { type: 'button', class: 'button secondary small' }, '← Newer');
  const older = h('button', { type: 'button', class: 'button secondary small' }, 'Older →');
  const pageLabel = h('span', { class: 'muted small' });
  newer.addEventListener('click', () => {
    cursors.pop();
    void refresh();
  });
  older.addEventListener('click', () => {
    if (nextCursor) cursors.push(nextCursor);
    void refresh();
  });
  const redeliverAll = h('button', { type: 'button', class: 'button secondary' });
  redeliverAll.addEventListener('click', redeliverAllFailed);

  async function redeliverAllFailed() {
    const n = counts.redeliverable_deliveries;
    const skipped = counts.failed_deliveries - n;
    const ok = await confirmAction(
      `Redeliver ${plural(n, 'failed delivery', 'failed deliveries')}?`,
      `Each starts a fresh cycle of attempts, the first at once, with the same body and event id.${
        skipped > 0
          ? ` ${plural(skipped, 'failed delivery', 'failed deliveries')} of disabled webhooks ${skipped === 1 ? 'is' : 'are'} skipped: enable the webhook first.`
          : ''
      }`,
      'Redeliver',
    );
    if (!ok) return;
    try {
      const done = await api.redeliverAllFailed(instanceId);
      notify(`${plural(done, 'delivery', 'deliveries')} queued for redelivery`);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refreshAll();
  }

  async function redeliver(d: Delivery) {
    try {
      const updated = await api.redeliver(instanceId, d.delivery_id);
      rows.get(d.delivery_id)?.update(updated);
      notify(`Redelivery of ${d.event} queued`);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refreshAll();
  }

  function deliveryRow(first: Delivery): Row<Delivery> {
    const detailId = `detail-${first.delivery_id}`;
    const summary = h('div', { class: 'delivery-summary' });
    const detail = h('div', { class: 'delivery-detail', id: detailId, hidden: true });
    const el = h('li', { class: 'delivery', 'data-delivery-id': first.delivery_id }, summary, detail);
    let current = first;
    let detailSig = '';

    async function loadDetail() {
      try {
        const d = await api.getDelivery(instanceId, current.delivery_id);
        const sig = JSON.stringify([d, webhooks.get(d.webhook_id)]);
        if (sig === detailSig && d.status !== 'pending') return;
        detailSig = sig;
        keepingFocus(detail, () => fill(detail, ...deliveryDetail(d, webhooks.get(d.webhook_id))));
      } catch (err) {
        fill(detail, h('p', { class: 'form-error' }, (err as ApiError).message));
      }
    }

    function toggle() {
      if (open.has(current.delivery_id)) open.delete(current.delivery_id);
      else open.add(current.delivery_id);
      render(current);
      if (open.has(current.delivery_id)) {
        fill(detail, h('p', { class: 'muted' }, 'Loading…'));
        void loadDetail();
      }
    }

    /** A failed delivery of a disabled webhook cannot be redelivered (SPEC §8): the button says why instead. */
    function redeliverButton(hook: Webhook | undefined) {
      const blocked = hook !== undefined && !hook.enabled;
      return h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'data-focus': 'redeliver',
          disabled: blocked,
          title: blocked ? 'The webhook is disabled: enable it to redeliver' : null,
          onclick: () => redeliver(current),
        },
        'Redeliver',
      );
    }

    function render(d: Delivery) {
      current = d;
      const isOpen = open.has(d.delivery_id);
      el.dataset.status = d.status;
      detail.hidden = !isOpen;
      const hook = webhooks.get(d.webhook_id);
      keepingFocus(summary, () =>
        summary.replaceChildren(
          h('span', { class: `badge ${STATUS_TONE[d.status]}` }, STATUS_LABEL[d.status]),
          h(
            'button',
            {
              type: 'button',
              class: 'disclosure',
              'aria-expanded': String(isOpen),
              'aria-controls': detailId,
              'data-focus': 'toggle',
              onclick: toggle,
            },
            h('span', { class: 'chevron', 'aria-hidden': 'true' }, isOpen ? '▾' : '▸'),
            h('span', { class: 'mono' }, d.event),
          ),
          h(
            'span',
            { class: 'cell webhook-cell mono muted', title: hook?.destination_url ?? d.webhook_id },
            hook ? shortUrl(hook.destination_url) : d.webhook_id,
          ),
          h('span', { class: 'cell muted' }, formatTime(d.created_at)),
          h('span', { class: 'cell' }, plural(d.attempts, 'attempt')),
          h(
            'span',
            {
              class: `cell result ${d.status === 'delivered' ? 'good' : d.last_status_code || d.last_error ? 'bad' : ''}`,
            },
            lastResult(d),
          ),
          h('span', { class: 'cell action' }, d.status === 'failed' ? redeliverButton(hook) : null),
        ),
      );
    }

    render(first);
    if (open.has(first.delivery_id)) void loadDetail();
    return {
      el,
      update(d) {
        render(d);
        if (open.has(d.delivery_id)) void loadDetail();
      },
    };
  }

  // A row shows its webhook too (address, whether Redeliver is possible): a change there updates the row.
  const rows = new KeyedList<Delivery>(
    list,
    (d) => d.delivery_id,
    deliveryRow,
    (d) => JSON.stringify([d, webhooks.get(d.webhook_id)]),
  );

  async function refresh() {
    try {
      const page = await api.listDeliveries(instanceId, {
        status: status.value || undefined,
        webhook_id: webhook.value || undefined,
        event: event.value || undefined,
        cursor: cursors[cursors.length - 1],
        limit: PAGE_SIZE,
      });
      error.replaceChildren();
      rows.set(page.deliveries);
      // Open pending deliveries change without their summary changing (a countdown): their detail reloads too.
      for (const d of page.deliveries) {
        if (open.has(d.delivery_id) && d.status === 'pending') rows.get(d.delivery_id)?.update(d);
      }
      nextCursor = page.next_cursor;
      const filtered = status.value || webhook.value || event.value;
      empty.textContent = filtered
        ? 'No delivery matches these filters.'
        : 'No deliveries yet. Events published to this session appear here.';
      empty.hidden = page.deliveries.length > 0;
      newer.disabled = cursors.length === 1;
      older.disabled = nextCursor === null;
      pageLabel.textContent = `Page ${cursors.length}`;
    } catch (err) {
      error.textContent = (err as ApiError).message;
      throw err;
    }
  }

  return {
    el: h(
      'section',
      { class: 'panel', 'aria-labelledby': 'log-title' },
      h('div', { class: 'panel-head' }, h('h2', { id: 'log-title' }, 'Delivery log'), redeliverAll),
      h(
        'div',
        { class: 'filters', role: 'group', 'aria-label': 'Filters' },
        filter(status, 'Status'),
        filter(webhook, 'Webhook'),
        filter(event, 'Event'),
      ),
      error,
      h('div', { class: 'card flush' }, list, empty),
      h('div', { class: 'pager' }, newer, pageLabel, older),
    ),
    setContext(list: Webhook[], c: Counts) {
      webhooks = new Map(list.map((w) => [w.webhook_id, w]));
      counts = c;
      setOptions(webhook, [
        ['', 'All webhooks'],
        ...list.map((w): [string, string] => [w.webhook_id, shortUrl(w.destination_url)]),
      ]);
      const n = c.redeliverable_deliveries;
      keepingFocus(redeliverAll, () => {
        redeliverAll.replaceChildren('Redeliver all failed ', h('span', { class: 'count' }, String(n)));
      });
      redeliverAll.disabled = n === 0;
      redeliverAll.title = n === 0 ? 'No failed delivery of an enabled webhook' : '';
    },
    refresh,
  };
}
