/**
 * One delivery of the log: a summary line (status, event and its chat, webhook, time, attempts, last result,
 * Redeliver), for a failed one the reason in full, for one waiting its turn in its chat the delivery it waits for,
 * and, when opened, its detail, reloaded as the delivery changes. Open rows are remembered by the log, so a row that
 * leaves the page and comes back (paging, filters) opens again.
 */
import { type ApiError, api, type Delivery, type DeliveryStatus, type Webhook } from './api.ts';
import { type ChatActions, chatButton, waitedForButton } from './chat-links.ts';
import { deliveryDetail } from './delivery-detail.ts';
import { fill, h, keepingFocus } from './dom.ts';
import { failureText, formatShortTime, formatTime, lastResult, plural, shortUrl } from './format.ts';
import type { Row } from './keyed-list.ts';

const STATUS_LABEL: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
};
const STATUS_TONE: Record<DeliveryStatus, string> = { pending: 'info', delivered: 'good', failed: 'bad' };

export interface RowContext extends ChatActions {
  instanceId: string;
  webhook(webhookId: string): Webhook | undefined;
  /** Ids of the deliveries the reader opened. */
  open: Set<string>;
  redeliver(d: Delivery): void;
}

/** What a row and its detail show of their webhook: a change elsewhere (its health) redraws no delivery. */
export const shownOfWebhook = (w: Webhook | undefined) =>
  w && [w.destination_url, w.enabled, w.client_sign_secret_set];

export function deliveryRow(ctx: RowContext, first: Delivery): Row<Delivery> {
  const detailId = `detail-${first.delivery_id}`;
  const blockedId = `blocked-${first.delivery_id}`;
  const summary = h('div', { class: 'delivery-summary' });
  const failure = h('p', { class: 'failure small', hidden: true });
  const waiting = h('p', { class: 'waiting small', hidden: true });
  const detail = h('div', { class: 'delivery-detail', id: detailId, hidden: true });
  const el = h(
    'li',
    { class: 'delivery', 'data-delivery-id': first.delivery_id },
    summary,
    failure,
    waiting,
    detail,
  );
  let current = first;
  let detailSig = '';

  async function loadDetail() {
    try {
      const d = await api.getDelivery(ctx.instanceId, current.delivery_id);
      const sig = JSON.stringify([d, shownOfWebhook(ctx.webhook(d.webhook_id))]);
      if (sig === detailSig && d.status !== 'pending') return;
      detailSig = sig;
      keepingFocus(detail, () => fill(detail, ...deliveryDetail(d, ctx.webhook(d.webhook_id), ctx)));
    } catch (err) {
      fill(detail, h('p', { class: 'form-error' }, (err as ApiError).message));
    }
  }

  function toggle() {
    if (ctx.open.has(current.delivery_id)) ctx.open.delete(current.delivery_id);
    else ctx.open.add(current.delivery_id);
    render(current);
    if (ctx.open.has(current.delivery_id)) {
      fill(detail, h('p', { class: 'muted' }, 'Loading…'));
      void loadDetail();
    }
  }

  /**
   * A failed delivery of a disabled webhook cannot be redelivered: the button is disabled and says why in
   * text beside it (a tooltip is never seen on a touch screen).
   */
  function redeliverAction(hook: Webhook | undefined) {
    const blocked = hook !== undefined && !hook.enabled;
    return [
      h(
        'button',
        {
          type: 'button',
          class: 'button secondary small',
          'data-focus': 'redeliver',
          'data-write': '',
          disabled: blocked,
          'aria-describedby': blocked ? blockedId : null,
          onclick: () => ctx.redeliver(current),
        },
        'Redeliver',
      ),
      blocked
        ? h(
            'span',
            { class: 'why-disabled', id: blockedId, 'data-write': '' },
            'Enable the webhook to redeliver',
          )
        : null,
    ];
  }

  function render(d: Delivery) {
    current = d;
    const isOpen = ctx.open.has(d.delivery_id);
    el.dataset.status = d.status;
    detail.hidden = !isOpen;
    const hook = ctx.webhook(d.webhook_id);
    keepingFocus(summary, () =>
      summary.replaceChildren(
        h('span', { class: `badge ${STATUS_TONE[d.status]}` }, STATUS_LABEL[d.status]),
        h(
          'div',
          { class: 'event-cell' },
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
          d.chat ? chatButton(ctx, d.chat) : null,
        ),
        h(
          'span',
          { class: 'cell webhook-cell mono muted', title: hook?.destination_url ?? d.webhook_id },
          hook ? shortUrl(hook.destination_url) : d.webhook_id,
        ),
        h(
          'time',
          { class: 'cell time muted', datetime: d.created_at, title: formatTime(d.created_at) },
          formatShortTime(d.created_at),
        ),
        h('span', { class: 'cell' }, plural(d.attempt_count, 'attempt')),
        h(
          'span',
          {
            class: `cell result ${d.status === 'delivered' ? 'good' : d.last_status_code || d.last_error ? 'bad' : ''}`,
          },
          lastResult(d),
        ),
        h('span', { class: 'cell action' }, d.status === 'failed' ? redeliverAction(hook) : null),
      ),
    );
    // The reason in full, whatever the column widths: the row is where a person first looks.
    failure.hidden = d.status !== 'failed';
    failure.textContent =
      d.status === 'failed'
        ? `Failed: ${failureText(d.failure_reason)}. Last result: ${lastResult(d)}${d.last_error ? ` (${d.last_error})` : ''}.`
        : '';
    // Waiting its turn in its chat: which delivery holds it up, one click from its detail.
    waiting.hidden = !d.waiting_for;
    keepingFocus(waiting, () =>
      fill(
        waiting,
        d.waiting_for
          ? [
              'Waits for ',
              waitedForButton(ctx, d.waiting_for),
              ', the delivery of its chat before it (in flight or awaiting a retry).',
            ]
          : null,
      ),
    );
  }

  render(first);
  if (ctx.open.has(first.delivery_id)) void loadDetail();
  return {
    el,
    update(d) {
      render(d);
      if (ctx.open.has(d.delivery_id)) void loadDetail();
    },
  };
}
