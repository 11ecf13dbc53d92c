/**
 * Add or edit a webhook. An edit is a PATCH that replaces the whole configuration (seed §4 rule 2), so the form
 * always shows and sends the destination, the events and ignore_status; the secret is an explicit choice among
 * keep / set new / remove (rule 3), never an empty box whose meaning a person has to guess.
 */
import { ApiError, api, type Webhook } from './api.ts';
import { openDialog } from './dialog.ts';
import { h, uid } from './dom.ts';
import { eventPicker } from './event-picker.ts';
import { clearErrors, showErrors } from './field-errors.ts';
import { notify } from './notices.ts';

type SecretChoice = 'keep' | 'set' | 'clear';

/** A random signing secret, generated in the browser: the person copies it to the receiver before saving. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function secretChoices(current: Webhook | null): [SecretChoice, string][] {
  if (!current)
    return [
      ['keep', 'No signing secret'],
      ['set', 'Sign deliveries with a secret'],
    ];
  if (!current.client_sign_secret_set)
    return [
      ['keep', 'Keep unsigned'],
      ['set', 'Set a secret'],
    ];
  return [
    ['keep', 'Keep current secret'],
    ['set', 'Set new secret'],
    ['clear', 'Remove secret (deliveries are sent unsigned)'],
  ];
}

export function openWebhookForm(instanceId: string, current: Webhook | null, onSaved: () => void): void {
  const urlId = uid('url');
  const url = h('input', {
    id: urlId,
    name: 'destination_url',
    type: 'text',
    inputmode: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://example.com/webhooks/herald',
    value: current?.destination_url ?? '',
  });
  const events = eventPicker(current?.events ?? ['message']);
  const secretId = uid('secret');
  const secret = h('input', {
    id: secretId,
    name: 'client_sign_secret',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: 1024,
    class: 'mono',
  });
  const generate = h('button', { type: 'button', class: 'button secondary small' }, 'Generate');
  generate.addEventListener('click', () => {
    secret.value = newSecret();
    secret.focus();
    secret.select();
  });
  const secretRow = h(
    'div',
    { class: 'secret-input' },
    h('label', { for: secretId }, current?.client_sign_secret_set ? 'New secret' : 'Secret'),
    h('div', { class: 'row' }, secret, generate),
    h('p', { class: 'help' }, 'Give the same secret to the receiver; Herald never shows it again.'),
  );
  const radios = secretChoices(current).map(([value, label], i) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'radio', name: 'secret', value, checked: i === 0 }),
      label,
    ),
  );
  const choice = (): SecretChoice =>
    (radios.map((r) => r.querySelector('input') as HTMLInputElement).find((r) => r.checked)?.value ??
      'keep') as SecretChoice;
  const syncSecret = () => {
    secretRow.hidden = choice() !== 'set';
  };
  for (const r of radios) r.addEventListener('change', syncSecret);
  syncSecret();

  const ignoreId = uid('ignore');
  const ignore = h('input', {
    id: ignoreId,
    type: 'checkbox',
    checked: current ? current.ignore_status : true,
  });

  const save = h('button', { type: 'submit', class: 'button primary' }, 'Save');
  const form = h(
    'form',
    { class: 'webhook-form', novalidate: true },
    current
      ? h(
          'p',
          { class: 'help' },
          'Saving replaces the whole configuration: the destination, the events and the stories setting below are sent as shown.',
        )
      : h('p', { class: 'help' }, 'A new webhook starts disabled: enable it when the receiver is ready.'),
    h('div', { class: 'form-error', role: 'alert' }),
    h(
      'div',
      { class: 'field', 'data-field': 'destination_url' },
      h('label', { for: urlId }, 'Destination URL'),
      url,
    ),
    h('div', { class: 'field', 'data-field': 'events' }, events.el),
    h(
      'div',
      { class: 'field', 'data-field': 'client_sign_secret' },
      h(
        'fieldset',
        { class: 'secret', 'data-field': 'clear_client_sign' },
        h('legend', {}, 'Signing secret'),
        radios,
        secretRow,
      ),
    ),
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
    const body: Record<string, unknown> = {
      destination_url: url.value.trim(),
      events: events.value(),
      ignore_status: ignore.checked,
    };
    const c = choice();
    if (c === 'set' && secret.value === '') {
      // The API would read an empty secret as "none" (create) or "keep" (PATCH): ask instead of guessing.
      const message = 'Enter a secret, press Generate, or choose another option';
      showErrors(
        form,
        new ApiError(400, 'invalid_request', message, [{ field: 'client_sign_secret', message }]),
      );
      return;
    }
    if (c === 'set') body.client_sign_secret = secret.value;
    if (c === 'clear') body.clear_client_sign = true;
    save.disabled = true;
    try {
      if (current) await api.updateWebhook(instanceId, current.webhook_id, body);
      else await api.createWebhook(instanceId, body);
      notify(current ? 'Webhook saved' : 'Webhook added (disabled until you enable it)');
      dialog.close();
      onSaved();
    } catch (err) {
      showErrors(form, err as ApiError);
    } finally {
      save.disabled = false;
    }
  });
  url.focus();
}
