/**
 * Send test: the sample event of a kind the webhook subscribes to goes to this webhook only, through the normal
 * pipeline (signed, retried, in the delivery log), so a person can check a receiver without a real session.
 */
import { EVENT_KINDS } from '../../domain/event-kinds.ts';
import { type ApiError, api, type Webhook } from './api.ts';
import { openDialog } from './dialog.ts';
import { h, uid } from './dom.ts';
import { clearErrors, showErrors } from './field-errors.ts';
import { notify } from './notices.ts';

export function openSendTest(instanceId: string, webhook: Webhook, onSent: () => void): void {
  const kinds = webhook.events.includes('*') ? [...EVENT_KINDS] : webhook.events;
  const selectId = uid('test-kind');
  const select = h(
    'select',
    { id: selectId, name: 'event' },
    kinds.map((k) => h('option', { value: k }, k)),
  );
  const send = h('button', { type: 'submit', class: 'button primary' }, 'Send test');
  const form = h(
    'form',
    { novalidate: true },
    h(
      'p',
      { class: 'help' },
      `A sample event goes to ${webhook.destination_url} only, signed and retried like any delivery, and shows in the delivery log.`,
    ),
    h('div', { class: 'form-error', role: 'alert' }),
    h('div', { class: 'field', 'data-field': 'event' }, h('label', { for: selectId }, 'Event kind'), select),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button secondary', 'data-close': '' }, 'Cancel'),
      send,
    ),
  );
  const dialog = openDialog('Send a test delivery', (close) => {
    form.querySelector('[data-close]')?.addEventListener('click', close);
    return [form];
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    send.disabled = true;
    try {
      const { delivery_id } = await api.sendTest(instanceId, webhook.webhook_id, select.value);
      notify(`Test ${select.value} queued (${delivery_id}): it appears in the delivery log`);
      dialog.close();
      onSent();
    } catch (err) {
      showErrors(form, err as ApiError);
    } finally {
      send.disabled = false;
    }
  });
  select.focus();
}
