/**
 * Add or edit a webhook. An edit is a PATCH that replaces the whole configuration, so the form always shows and
 * sends every part of it: the destination (field by field, destination-fields.ts), the events, ignore_status,
 * Standard Webhooks, the ordering per chat, the filter, the headers and the rate limit.
 * The signing secret is an explicit choice (secret-fieldset.ts); a rotation is saved after the configuration, by
 * its own call, and shows what it did.
 */
import { ApiError, api, type Webhook } from './api.ts';
import { destinationFields } from './destination-fields.ts';
import { openDialog } from './dialog.ts';
import { h, uid } from './dom.ts';
import { eventPicker } from './event-picker.ts';
import { clearErrors, showErrors } from './field-errors.ts';
import { headerRows } from './header-rows.ts';
import { notify } from './notices.ts';
import { secretFieldset } from './secret-fieldset.ts';
import { webhookLimits } from './webhook-limits.ts';

export function openWebhookForm(instanceId: string, current: Webhook | null, onSaved: () => void): void {
  const destination = destinationFields(current?.destination_url ?? null);
  const events = eventPicker(current?.events ?? ['message']);
  const secret = secretFieldset(current);
  const limits = webhookLimits(current?.filter ?? null, current?.rate_limit ?? null);
  const headers = headerRows(current?.headers ?? null);
  const ignoreId = uid('ignore');
  const ignore = h('input', {
    id: ignoreId,
    type: 'checkbox',
    checked: current ? current.ignore_status : true,
  });
  const standardId = uid('standard');
  const standard = h('input', {
    id: standardId,
    type: 'checkbox',
    checked: current?.standard_webhooks ?? false,
  });
  const orderedId = uid('ordered');
  const ordered = h('input', {
    id: orderedId,
    name: 'ordering',
    type: 'checkbox',
    checked: current?.ordering === 'chat',
  });

  const more = h(
    'details',
    { class: 'more', open: Boolean(current?.filter || current?.headers || current?.rate_limit) },
    h('summary', {}, 'Filter, headers and rate limit'),
    limits.filterField,
    h('div', { class: 'field', 'data-field': 'headers' }, headers.el),
    limits.rateField,
  );
  /** Shows each error at its field, opening the section that holds it; a broker URL's, at the part it names. */
  const show = (error: ApiError) => {
    if (error.details?.some((d) => /^(filter|headers|rate_limit)/.test(d.field))) more.open = true;
    showErrors(form, error);
    const wrong = error.details?.find((d) => d.field === 'destination_url');
    if (wrong) destination.mark(wrong.message);
  };

  const save = h('button', { type: 'submit', class: 'button primary' }, 'Save');
  const form = h(
    'form',
    { class: 'webhook-form', novalidate: true },
    current
      ? h(
          'p',
          { class: 'help' },
          'Saving replaces the whole configuration: everything below is sent as shown, and a control left empty is removed.',
        )
      : h('p', { class: 'help' }, 'A new webhook starts disabled: enable it when the receiver is ready.'),
    h('div', { class: 'form-error', role: 'alert' }),
    h('div', { class: 'field', 'data-field': 'destination_url' }, destination.el),
    h('div', { class: 'field', 'data-field': 'events' }, events.el),
    h('div', { class: 'field', 'data-field': 'client_sign_secret' }, secret.el),
    h(
      'div',
      { class: 'field', 'data-field': 'ignore_status' },
      h('label', { class: 'check', for: ignoreId }, ignore, h('span', {}, 'Skip stories (status@broadcast)')),
      h(
        'p',
        { class: 'help' },
        'Stories are status posts, which engines send as messages of the chat status@broadcast. Unticked, they are ' +
          'delivered with the message events. (Unrelated to session.status, the session’s own state.)',
      ),
    ),
    h(
      'div',
      { class: 'field', 'data-field': 'standard_webhooks' },
      h(
        'label',
        { class: 'check', for: standardId },
        standard,
        h('span', {}, 'Standard Webhooks headers too'),
      ),
      h(
        'p',
        { class: 'help' },
        'Adds webhook-id, webhook-timestamp and webhook-signature, so the receiver can verify with the ' +
          'standardwebhooks or svix libraries. The secret must then start with whsec_ (a generated one does).',
      ),
    ),
    h(
      'div',
      { class: 'field', 'data-field': 'ordering' },
      h(
        'label',
        { class: 'check', for: orderedId },
        ordered,
        h('span', {}, 'Deliver each chat’s events in order'),
      ),
      h(
        'p',
        { class: 'help' },
        'One delivery of a chat at a time, in the order its events arrived: the next starts once the one before ' +
          'is delivered or has failed. Other chats are not held up. ' +
          (current?.ordering === 'chat'
            ? 'Unticked, the deliveries waiting now start at once.'
            : 'Unticked, each delivery starts on its own.'),
      ),
    ),
    more,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'button secondary', 'data-close': '' }, 'Cancel'),
      save,
    ),
  );

  const dialog = openDialog(current ? 'Edit webhook' : 'Add webhook', (close) => {
    form.querySelector('[data-close]')?.addEventListener('click', close);
    return [form];
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const limited = limits.value();
    const problems = [secret.problem(), ...('errors' in limited ? limited.errors : [])].filter(
      (p) => p !== null,
    );
    if (problems.length || 'errors' in limited) {
      show(new ApiError(400, 'invalid_request', problems[0]?.message ?? '', problems));
      return;
    }
    const body: Record<string, unknown> = {
      destination_url: destination.value(),
      events: events.value(),
      ignore_status: ignore.checked,
      standard_webhooks: standard.checked,
      ordering: ordered.checked ? 'chat' : 'none',
      filter: limited.filter,
      headers: headers.value(),
      rate_limit: limited.rate_limit,
    };
    const c = secret.choice();
    if (c === 'set') body.client_sign_secret = secret.secret();
    if (c === 'clear') body.clear_client_sign = true;
    save.disabled = true;
    try {
      const saved = current
        ? await api.updateWebhook(instanceId, current.webhook_id, body)
        : await api.createWebhook(instanceId, body);
      if (c === 'rotate') {
        await api.rotateSecret(instanceId, saved.webhook_id, {
          client_sign_secret: secret.secret(),
          grace_s: secret.graceS(),
        });
      }
      notify(
        c === 'rotate'
          ? 'Webhook saved; the secret is rotated (deliveries carry both signatures during the grace)'
          : current
            ? 'Webhook saved'
            : 'Webhook added (disabled until you enable it)',
      );
      dialog.close();
      onSaved();
    } catch (err) {
      show(err as ApiError);
    } finally {
      save.disabled = false;
    }
  });
  destination.focus();
}
