/**
 * The delivery log: newest first, filtered by status, webhook, event kind, event id, chat and a range
 * of dates, paged; each delivery opens to its detail; Redeliver on a failed one, Redeliver all failed with the
 * count first. A delivery's chat filters the log to that chat (with Pending: its queue); a delivery waiting its turn
 * in its chat opens the one it waits for.
 * Refreshes keep filters, page, open deliveries and focus: rows are updated in place by delivery id.
 */
import { type ApiError, api, type Counts, type Delivery, type Webhook } from './api.ts';
import { deliveryRow, shownOfWebhook } from './delivery-row.ts';
import { confirmAction } from './dialog.ts';
import { h, keepingFocus, uid } from './dom.ts';
import { eventFamilies } from './event-families.ts';
import { filterUrl } from './filter-url.ts';
import { chatLabel, plural, shortUrl } from './format.ts';
import { KeyedList } from './keyed-list.ts';
import { notify } from './notices.ts';

const PAGE_SIZE = 25;

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
  // In the order and groups of the webhook form's picker.
  const event = select('Event', [['', 'All events']], reload);
  for (const { title, kinds } of eventFamilies()) {
    event.append(
      h(
        'optgroup',
        { label: title },
        kinds.map((k) => h('option', { value: k }, k)),
      ),
    );
  }
  const filter = (el: HTMLElement, text: string, field = '') =>
    h('div', { class: 'field compact', 'data-field': field || null }, h('label', { for: el.id }, text), el);
  // The deliveries of one event: an id from a receiver's log (X-Service-Event-Id) finds what became of it.
  const eventId = h('input', {
    id: uid('filter'),
    name: 'event_id',
    type: 'search',
    placeholder: 'evt_…',
    autocomplete: 'off',
    spellcheck: 'false',
    class: 'mono',
  });
  eventId.addEventListener('change', reload);
  // One chat's deliveries: filled by a click on a delivery's chat, or typed ("*": events of the whole session).
  const chat = h('input', {
    id: uid('filter'),
    name: 'chat',
    type: 'search',
    placeholder: '…@c.us',
    autocomplete: 'off',
    spellcheck: 'false',
    class: 'mono',
  });
  chat.addEventListener('change', reload);
  // While a chat is chosen: which one, its queue (its pending deliveries) a click away, and how to leave it.
  const scopeText = h('span', { class: 'scope-text' });
  const queueToggle = h('button', { type: 'button', class: 'button secondary small' });
  queueToggle.addEventListener('click', () => {
    status.value = status.value === 'pending' ? '' : 'pending';
    reload();
  });
  const allChats = h('button', { type: 'button', class: 'button secondary small' }, 'Show all chats');
  allChats.addEventListener('click', () => {
    chat.value = '';
    reload();
    chat.focus();
  });
  const scope = h(
    'div',
    { class: 'scope', hidden: true },
    h('p', { role: 'status' }, scopeText),
    h('div', { class: 'actions' }, queueToggle, allChats),
  );
  let scopeShown = '';
  /** Redrawn only when the chat or the status changes: the text is a live region, read out on each change. */
  function showScope() {
    const key = chat.value.trim();
    const queue = status.value === 'pending';
    if (JSON.stringify([key, queue]) === scopeShown) return;
    scopeShown = JSON.stringify([key, queue]);
    scope.hidden = key === '';
    if (!key) {
      scopeText.replaceChildren();
      return;
    }
    scopeText.replaceChildren(
      queue ? 'The queue of chat ' : 'Only chat ',
      h('span', { class: 'mono' }, chatLabel(key)),
      queue
        ? ': its pending deliveries, newest first. The oldest, at the bottom, goes first.'
        : ': its deliveries, newest first.',
    );
    queueToggle.textContent = queue ? 'All its deliveries' : 'Its queue (pending)';
  }
  // Dates in the browser's time zone, sent as UTC instants: "from" is inclusive, "to" exclusive.
  const since = h('input', { id: uid('filter'), name: 'since', type: 'datetime-local', step: 1 });
  const until = h('input', { id: uid('filter'), name: 'until', type: 'datetime-local', step: 1 });
  since.addEventListener('change', reload);
  until.addEventListener('change', reload);
  const instant = (el: HTMLInputElement) => (el.value ? new Date(el.value).toISOString() : undefined);
  const address = filterUrl({ status, webhook, event, event_id: eventId, chat, since, until });
  // The address may name a webhook before the list of webhooks has filled the select: kept until it does.
  let wantedWebhook = address.initial('webhook');
  webhook.addEventListener('change', () => {
    wantedWebhook = '';
  });
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

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
  const redeliverAll = h('button', {
    type: 'button',
    class: 'button secondary',
    'data-write': '',
    'aria-describedby': 'redeliver-all-why',
  });
  redeliverAll.addEventListener('click', redeliverAllFailed);
  const redeliverAllWhy = h('span', {
    class: 'why-disabled',
    id: 'redeliver-all-why',
    hidden: true,
    'data-write': '',
  });

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

  function showChat(key: string) {
    chat.value = key;
    reload();
  }

  /** A delivery to give focus to once a read shows it (reveal of one not on the page). */
  let focusOnArrival: string | null = null;
  function focusRow(id: string): void {
    const toggle = rows.get(id)?.el.querySelector<HTMLElement>('[data-focus="toggle"]');
    toggle?.focus();
    toggle?.scrollIntoView({ block: 'nearest' });
  }

  /** Opens a delivery: in place when it is on the page, else with its event's deliveries (by its event id). */
  async function reveal(id: string) {
    const shownNow = shown.get(id);
    if (shownNow) {
      open.add(id);
      rows.get(id)?.update(shownNow);
      focusRow(id);
      return;
    }
    try {
      const d = await api.getDelivery(instanceId, id);
      for (const el of [status, webhook, event, chat, since, until]) el.value = '';
      wantedWebhook = '';
      eventId.value = d.event_id;
      open.add(id);
      focusOnArrival = id;
      reload();
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
  }

  // A row shows its webhook too (address, whether Redeliver is possible): a change there updates the row.
  const context = {
    instanceId,
    webhook: (id: string) => webhooks.get(id),
    open,
    redeliver,
    showChat,
    reveal: (id: string) => void reveal(id),
  };
  let shown = new Map<string, Delivery>();
  const rows = new KeyedList<Delivery>(
    list,
    (d) => d.delivery_id,
    (d) => deliveryRow(context, d),
    (d) => JSON.stringify([d, shownOfWebhook(webhooks.get(d.webhook_id))]),
  );

  /** Counts the reads: an answer to an older one (filters changed while it was under way) is dropped. */
  let reads = 0;

  async function refresh() {
    const read = ++reads;
    try {
      const page = await api.listDeliveries(instanceId, {
        status: status.value || undefined,
        webhook_id: webhook.value || wantedWebhook || undefined,
        event: event.value || undefined,
        event_id: eventId.value.trim() || undefined,
        chat: chat.value.trim() || undefined,
        since: instant(since),
        until: instant(until),
        cursor: cursors[cursors.length - 1],
        limit: PAGE_SIZE,
      });
      if (read !== reads) return;
      address.save({ webhook: webhook.value || wantedWebhook });
      error.replaceChildren();
      rows.set(page.deliveries);
      shown = new Map(page.deliveries.map((d) => [d.delivery_id, d]));
      showScope();
      // The first read with the filters reveal set shows the delivery (or it is gone): focus goes to it once.
      if (focusOnArrival) focusRow(focusOnArrival);
      focusOnArrival = null;
      // Open pending deliveries change without their summary changing (a countdown): their detail reloads too.
      for (const d of page.deliveries) {
        if (open.has(d.delivery_id) && d.status === 'pending') rows.get(d.delivery_id)?.update(d);
      }
      nextCursor = page.next_cursor;
      const filtered =
        status.value ||
        webhook.value ||
        event.value ||
        eventId.value ||
        chat.value ||
        since.value ||
        until.value;
      empty.textContent = filtered
        ? 'No delivery matches these filters.'
        : 'No deliveries yet. Events published to this session appear here.';
      empty.hidden = page.deliveries.length > 0;
      newer.disabled = cursors.length === 1;
      older.disabled = nextCursor === null;
      pageLabel.textContent = `Page ${cursors.length}`;
    } catch (err) {
      if (read !== reads) return;
      error.textContent = (err as ApiError).message;
      throw err;
    }
  }

  return {
    el: h(
      'section',
      { class: 'panel', 'aria-labelledby': 'log-title' },
      h(
        'div',
        { class: 'panel-head' },
        h('h2', { id: 'log-title' }, 'Delivery log'),
        h('div', { class: 'head-action' }, redeliverAll, redeliverAllWhy),
      ),
      h(
        'form',
        {
          class: 'filters',
          role: 'search',
          'aria-label': 'Filters',
          onsubmit: (e: Event) => e.preventDefault(),
        },
        filter(status, 'Status'),
        filter(webhook, 'Webhook'),
        filter(event, 'Event'),
        filter(eventId, 'Event id', 'event_id'),
        filter(chat, 'Chat', 'chat'),
        filter(since, `From (${zone})`, 'since'),
        filter(until, `To (${zone})`, 'until'),
      ),
      scope,
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
      if (wantedWebhook && webhooks.has(wantedWebhook)) {
        webhook.value = wantedWebhook;
        wantedWebhook = '';
      }
      const n = c.redeliverable_deliveries;
      keepingFocus(redeliverAll, () => {
        redeliverAll.replaceChildren('Redeliver all failed ', h('span', { class: 'count' }, String(n)));
      });
      redeliverAll.disabled = n === 0;
      // Said as text, not only on hover: touch screens have no hover.
      redeliverAllWhy.hidden = n > 0;
      redeliverAllWhy.textContent =
        c.failed_deliveries > 0
          ? 'The failed deliveries belong to disabled webhooks: enable them first'
          : 'No failed delivery to redeliver';
    },
    refresh,
  };
}
