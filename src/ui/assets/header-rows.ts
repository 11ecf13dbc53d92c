/**
 * A webhook's own headers as rows of name and value. Values already saved are masked (they often carry tokens,
 * and a screen is shared more often than people think); Show reveals one. Rows left empty are not sent.
 */
import { h, uid } from './dom.ts';

export interface HeaderRows {
  el: HTMLElement;
  /** The headers as the API takes them, null when there are none. */
  value(): Record<string, string> | null;
}

export function headerRows(saved: Record<string, string> | null): HeaderRows {
  const list = h('div', { class: 'header-rows' });
  const rows: { name: HTMLInputElement; value: HTMLInputElement; el: HTMLElement }[] = [];

  const addRow = (name = '', value = '', masked = false) => {
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
      type: masked ? 'password' : 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      class: 'mono',
      maxlength: 1024,
      'aria-label': `Header ${n} value`,
      value,
    });
    const show = h('button', { type: 'button', class: 'button secondary small', hidden: !masked }, 'Show');
    show.addEventListener('click', () => {
      valueInput.type = 'text';
      show.hidden = true;
      valueInput.focus();
    });
    const remove = h(
      'button',
      { type: 'button', class: 'button danger-quiet small', 'aria-label': `Remove header ${n}` },
      'Remove',
    );
    const row = { name: nameInput, value: valueInput, el: h('div', { class: 'header-row' }) };
    row.el.append(nameInput, valueInput, show, remove);
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
  for (const [name, value] of Object.entries(saved ?? {})) addRow(name, value, true);

  const legendId = uid('headers');
  return {
    el: h(
      'fieldset',
      { class: 'headers', 'aria-labelledby': legendId },
      h('legend', { id: legendId }, 'Headers sent with every delivery'),
      h(
        'p',
        { class: 'help' },
        'For a token or a tenant id your receiver expects. Herald’s own X-Service-* headers cannot be replaced.',
      ),
      list,
      add,
    ),
    value() {
      const filled = rows.filter((r) => r.name.value.trim() !== '' || r.value.value !== '');
      if (filled.length === 0) return null;
      return Object.fromEntries(filled.map((r) => [r.name.value.trim(), r.value.value]));
    },
  };
}
