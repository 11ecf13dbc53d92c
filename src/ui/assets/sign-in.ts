/** Sign in with an API key: the key is checked against the API before it is kept for the session. */
import { ApiError, api } from './api.ts';
import { h } from './dom.ts';
import { clearErrors, showErrors } from './field-errors.ts';
import { type Role, sessionKey } from './session-key.ts';

export function signInView(onSignedIn: () => void): HTMLElement {
  const input = h('input', {
    id: 'api-key',
    name: 'key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'api-key-help',
  });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card sign-in', novalidate: true },
    h('h1', {}, 'Sign in to Herald'),
    h('p', { class: 'muted' }, 'Manage webhooks and follow deliveries of your sessions.'),
    h('div', { class: 'form-error', role: 'alert' }),
    h(
      'div',
      { class: 'field', 'data-field': 'key' },
      h('label', { for: 'api-key' }, 'API key'),
      input,
      h(
        'p',
        { class: 'help', id: 'api-key-help' },
        'The admin key Herald printed at its first start, or an instance key. It is kept in this tab only.',
      ),
    ),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(form);
    const key = input.value.trim();
    if (!key) {
      showErrors(
        form,
        new ApiError(400, 'invalid_request', 'Enter an API key', [
          { field: 'key', message: 'Enter an API key' },
        ]),
      );
      return;
    }
    submit.disabled = true;
    try {
      const role = await roleOf(key);
      sessionKey.set(key, role);
      onSignedIn();
    } catch (err) {
      const error = err as ApiError;
      const message = error.status === 401 ? 'This key is unknown or has been revoked' : error.message;
      showErrors(form, new ApiError(error.status, error.code, message, [{ field: 'key', message }]));
    } finally {
      submit.disabled = false;
    }
  });
  queueMicrotask(() => input.focus());
  return form;
}

/**
 * An instance key sees its own instance only and is refused admin operations (403): listing that instance's keys
 * tells the two apart. No instance at all means the admin key (an instance key always sees its own).
 */
async function roleOf(key: string): Promise<Role> {
  const instances = await api.listInstances(key);
  if (instances.length !== 1) return 'admin';
  try {
    await api.listKeys(instances[0].instance_id, key);
    return 'admin';
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return 'instance';
    throw err;
  }
}
