/**
 * A webhook's own headers as rows of name and value. Saved values are write-only: the API shows each as ****, so a
 * saved row starts with an empty value that keeps the saved one (sent back as ****) until something is typed in
 * it. Rows left empty are not sent.
 */
import { h, uid } from './dom.ts';

/** What the API shows for a saved value, and what keeps it when sent back. */
const MASKED = '****';

export interface HeaderRows {
  el: HTMLElement;
  /** The headers as the API takes them, null when there are none. */
  value(): Record<string, string> | null;
}

export function headerRows(saved: Record<string, string> | null): HeaderRows {
  const list = h('div', { class: 'header-rows' });
  const rows: { name: HTMLInputElement; value: HTMLInputElement; saved: boolean; el: HTMLElement }[] = [];

  const addRow = (name = '', isSaved = false) => {
    const n = rows.length + 1;
    const nameInput = h('input', {
      type: 'text',
      name: 'headers',
      autocomplete: 'off',
      spellcheck: 'false',
      class: 'mono',
      placeholder: 'X-Token',
      'aria-label': `Header ${n} name`,
      value: name,
    });
    const valueInput = h('input', {
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      class: 'mono',
      maxlength: 1024,
      'aria-label': `Header ${n} value`,
      placeholder: isSaved ? '•••• saved' : '',
    });
    const remove = h(
      'button',
      { type: 'button', class: 'button danger-quiet small', 'aria-label': `Remove header ${n}` },
      'Remove',
    );
    const row = { name: nameInput, value: valueInput, saved: isSaved, el: h('div', { class: 'header-row' }) };
    row.el.append(nameInput, valueInput, remove);
    remove.addEventListener('click', () => {
      rows.splice(rows.indexOf(row), 1);
      row.el.remove();
      add.focus();
    });
    rows.push(row);
    list.append(row.el);
    return row;
  };

  const add = h('button', { type: 'button', class: 'button secondary small' }, 'Add header');
  add.addEventListener('click', () => addRow().name.focus());
  for (const name of Object.keys(saved ?? {})) addRow(name, true);

  const legendId = uid('headers');
  return {
    el: h(
      'fieldset',
      { class: 'headers', 'aria-labelledby': legendId },
      h('legend', { id: legendId }, 'Headers sent with every delivery'),
      h(
        'p',
        { class: 'help' },
        'For a token or a tenant id your receiver expects. Saved values are never shown again: leave one empty ' +
          'to keep it, or type a new one. Herald’s own X-Service-* headers cannot be replaced.',
      ),
      list,
      add,
    ),
    value() {
      const filled = rows.filter((r) => r.name.value.trim() !== '' || r.value.value !== '');
      if (filled.length === 0) return null;
      const sent = (r: (typeof rows)[number]) => (r.saved && r.value.value === '' ? MASKED : r.value.value);
      return Object.fromEntries(filled.map((r) => [r.name.value.trim(), sent(r)]));
    },
  };
}
