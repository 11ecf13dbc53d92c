/**
 * The webhooks of the session: what each receives, whether it is enabled and why not, and the actions on it (edit,
 * send a test, enable or disable, delete).
 */
import { type ApiError, api, type Webhook } from './api.ts';
import { confirmAction } from './dialog.ts';
import { fill, h, keepingFocus } from './dom.ts';
import { formatTime, shortUrl } from './format.ts';
import { KeyedList, type Row } from './keyed-list.ts';
import { notify } from './notices.ts';
import { openSendTest } from './send-test.ts';
import { webhookCharts } from './webhook-charts.ts';
import { openWebhookForm } from './webhook-form.ts';
import { controlsSummary, webhookHealth } from './webhook-health.ts';

export interface WebhooksPanel {
  el: HTMLElement;
  update(webhooks: Webhook[]): void;
}

/** Why a webhook is disabled, in words: a 410 says so and when. */
function disabledNote(w: Webhook): HTMLElement | null {
  if (w.enabled) return null;
  if (w.disabled_reason === 'gone') {
    return h(
      'p',
      { class: 'note bad' },
      `Disabled: the receiver answered 410 Gone at ${formatTime(w.disabled_at)}. Nothing is sent until it is enabled again.`,
    );
  }
  if (w.disabled_reason === 'failing') {
    return h(
      'p',
      { class: 'note bad' },
      `Disabled at ${formatTime(w.disabled_at)}: every attempt had failed for too long. Nothing is sent until it is enabled again.`,
    );
  }
  if (w.disabled_reason === 'disabled') {
    return h(
      'p',
      { class: 'note' },
      `Disabled at ${formatTime(w.disabled_at)}. Events that occur meanwhile are not queued for it.`,
    );
  }
  return h('p', { class: 'note' }, 'New webhooks start disabled. Enable it once the receiver is ready.');
}

function statusBadge(w: Webhook): HTMLElement {
  if (w.enabled) return h('span', { class: 'badge good' }, 'Enabled');
  if (w.disabled_reason === 'gone') return h('span', { class: 'badge bad' }, 'Disabled · 410 Gone');
  if (w.disabled_reason === 'failing') return h('span', { class: 'badge bad' }, 'Disabled · failing');
  return h('span', { class: 'badge muted' }, 'Disabled');
}

export function webhooksPanel(instanceId: string, refresh: () => Promise<void>): WebhooksPanel {
  const list = h('div', { class: 'webhook-list' });
  const empty = h(
    'p',
    { class: 'empty', hidden: true },
    'No webhooks yet. Add one to receive this session’s events at your URL.',
  );

  async function act(what: () => Promise<unknown>, done: string) {
    try {
      await what();
      notify(done);
    } catch (err) {
      notify((err as ApiError).message, 'bad');
    }
    await refresh();
  }

  function webhookRow(first: Webhook): Row<Webhook> {
    const el = h('article', { class: 'webhook card' });
    // Health changes with every outcome: it is redrawn alone, the rest of the card only when its settings change
    // (a redraw of the whole card above the reader would move the page under them).
    const health = h('p', { class: 'health small', 'aria-label': 'Health' });
    // The charts keep their plots across redraws of the card: they read their stats when the health moves.
    const charts = webhookCharts(instanceId, first.webhook_id);
    let current = first;
    let drawn = '';
    const render = (w: Webhook) => {
      current = w;
      fill(health, webhookHealth(w));
      charts.update(w);
      const { health: _, ...settings } = w;
      if (JSON.stringify(settings) === drawn) return;
      drawn = JSON.stringify(settings);
      el.setAttribute('aria-label', `Webhook ${shortUrl(w.destination_url)}`);
      el.dataset.webhookId = w.webhook_id;
      keepingFocus(el, () =>
        fill(
          el,
          h(
            'div',
            { class: 'webhook-head' },
            h('h3', { class: 'mono url' }, w.destination_url),
            statusBadge(w),
          ),
          disabledNote(w),
          h(
            'ul',
            { class: 'chips', 'aria-label': 'Events' },
            w.events.map((e) => h('li', { class: 'chip mono' }, e === '*' ? 'every event (*)' : e)),
          ),
          health,
          charts.el,
          h(
            'p',
            { class: 'meta muted small' },
            [
              w.client_sign_secret_set ? 'Signed' : 'Unsigned',
              ...(w.standard_webhooks ? ['Standard Webhooks'] : []),
              w.ignore_status ? 'Skips stories (status@broadcast)' : 'Includes stories (status@broadcast)',
              ...controlsSummary(w),
            ].join(' · '),
            ' · ',
            h('span', { class: 'mono' }, w.webhook_id),
          ),
          h(
            'div',
            { class: 'actions', 'data-write': '' },
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary',
                'data-focus': 'edit',
                onclick: () => openWebhookForm(instanceId, current, () => void refresh()),
              },
              'Edit',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'button secondary',
                'data-focus': 'test',
                disabled: !w.enabled,
                'aria-describedby': w.enabled ? null : `test-why-${w.webhook_id}`,
                onclick: () => openSendTest(instanceId, current, () => void refresh()),
              },
              'Send test',
            ),
            w.enabled
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: 'button secondary',
                    'data-focus': 'toggle',
                    onclick: () =>
                      act(() => api.setEnabled(instanceId, w.webhook_id, false), 'Webhook disabled'),
                  },
                  'Disable',
                )
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'button primary',
                    'data-focus': 'toggle',
                    onclick: () =>
                      act(() => api.setEnabled(instanceId, w.webhook_id, true), 'Webhook enabled'),
                  },
                  'Enable',
                ),
            h(
              'button',
              {
                type: 'button',
                class: 'button danger-quiet',
                'data-focus': 'delete',
                onclick: () => remove(current),
              },
              'Delete',
            ),
          ),
          // Why Send test is disabled, in text (a tooltip is never seen on a touch screen).
          w.enabled
            ? null
            : h(
                'p',
                { class: 'why-disabled', id: `test-why-${w.webhook_id}` },
                'Send test needs the webhook enabled: a disabled webhook receives nothing.',
              ),
        ),
      );
    };
    render(first);
    return { el, update: render };
  }

  async function remove(w: Webhook) {
    const ok = await confirmAction(
      'Delete webhook?',
      `${w.destination_url} will receive nothing more; its pending retries are cancelled and its delivery log is removed. This cannot be undone.`,
      'Delete webhook',
      true,
    );
    if (ok) await act(() => api.deleteWebhook(instanceId, w.webhook_id), 'Webhook deleted');
  }

  const rows = new KeyedList<Webhook>(list, (w) => w.webhook_id, webhookRow);
  const add = h('button', { type: 'button', class: 'button primary', 'data-write': '' }, 'Add webhook');
  add.addEventListener('click', () => openWebhookForm(instanceId, null, () => void refresh()));

  return {
    el: h(
      'section',
      { class: 'panel', 'aria-labelledby': 'webhooks-title' },
      h('div', { class: 'panel-head' }, h('h2', { id: 'webhooks-title' }, 'Webhooks'), add),
      empty,
      list,
    ),
    update(webhooks) {
      rows.set(webhooks);
      empty.hidden = webhooks.length > 0;
    },
  };
}
