/**
 * The signing secret as an explicit choice, never an empty box whose meaning a person has to guess: keep, set a
 * new one, remove, or rotate (a new one, while the old one still signs for a grace period, so that a receiver can
 * be moved to the new secret without refusing a single delivery).
 */
import type { FieldError, Webhook } from './api.ts';
import { h, uid } from './dom.ts';

export type SecretChoice = 'keep' | 'set' | 'clear' | 'rotate';

export interface SecretFieldset {
  el: HTMLElement;
  choice(): SecretChoice;
  secret(): string;
  graceS(): number;
  /** A choice that needs a secret but has none: asked here, since the API would read empty as "none" or "keep". */
  problem(): FieldError | null;
}

const GRACES: [number, string][] = [
  [3600, '1 hour'],
  [86_400, '24 hours'],
  [604_800, '7 days'],
  [0, 'none: the old secret stops now'],
];

/**
 * A random signing secret, generated in the browser: the person copies it to the receiver before saving. The form
 * of the server's (whsec_ and the base64 of 24 bytes), which Standard Webhooks' libraries read.
 */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

function choices(current: Webhook | null): [SecretChoice, string][] {
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
    ['rotate', 'Rotate: a new secret, the current one still signs for a while'],
    ['set', 'Replace at once'],
    ['clear', 'Remove secret (deliveries are sent unsigned)'],
  ];
}

export function secretFieldset(current: Webhook | null): SecretFieldset {
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
  const graceId = uid('grace');
  const grace = h(
    'select',
    { id: graceId, name: 'grace_s' },
    GRACES.map(([s, label]) => h('option', { value: s, selected: s === 86_400 }, label)),
  );
  const graceRow = h(
    'div',
    { class: 'field compact grace' },
    h('label', { for: graceId }, 'The current secret keeps signing for'),
    grace,
    h(
      'p',
      { class: 'help' },
      'Meanwhile each delivery carries both signatures: the receiver accepts either.',
    ),
  );
  const secretRow = h(
    'div',
    { class: 'secret-input' },
    h('label', { for: secretId }, current?.client_sign_secret_set ? 'New secret' : 'Secret'),
    h('div', { class: 'row' }, secret, generate),
    h('p', { class: 'help' }, 'Give the same secret to the receiver; Herald never shows it again.'),
    graceRow,
  );
  const options = choices(current).map(([value, label], i) => {
    const radio = h('input', { type: 'radio', name: 'secret', value, checked: i === 0 });
    return { radio, el: h('label', { class: 'check' }, radio, label) };
  });
  const radios = options.map((o) => o.radio);
  const choice = () => (radios.find((r) => r.checked)?.value ?? 'keep') as SecretChoice;
  const sync = () => {
    secretRow.hidden = choice() !== 'set' && choice() !== 'rotate';
    graceRow.hidden = choice() !== 'rotate';
  };
  for (const r of radios) r.addEventListener('change', sync);
  sync();
  const rotating = current?.previous_secret_until
    ? h(
        'p',
        { class: 'note' },
        `A rotation is under way: the previous secret signs too until ${new Date(current.previous_secret_until).toLocaleString()}.`,
      )
    : null;

  return {
    el: h(
      'fieldset',
      { class: 'secret', 'data-field': 'clear_client_sign' },
      h('legend', {}, 'Signing secret'),
      rotating,
      options.map((o) => o.el),
      secretRow,
    ),
    choice,
    secret: () => secret.value,
    graceS: () => Number(grace.value),
    problem() {
      const c = choice();
      if ((c === 'set' || c === 'rotate') && secret.value === '') {
        return {
          field: 'client_sign_secret',
          message: 'Enter a secret, press Generate, or choose another option',
        };
      }
      return null;
    },
  };
}
