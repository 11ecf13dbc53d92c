/** Event kinds picked from the catalog the API itself validates against, grouped by family. */
import { EVENT_KINDS } from '../../domain/event-kinds.ts';
import { h, uid } from './dom.ts';

const FAMILIES: Record<string, string> = {
  session: 'Session',
  message: 'Messages',
  group: 'Groups',
  chat: 'Chats',
  call: 'Calls',
  label: 'Labels',
  poll: 'Polls',
  event: 'Event messages',
  presence: 'Presence',
  engine: 'Engine',
};
/** A kind of a family not named above still gets a box: the picker never hides a kind the API takes. */
const OTHER = 'Other';

export interface EventPicker {
  el: HTMLElement;
  value(): string[];
}

export function eventPicker(selected: string[]): EventPicker {
  const all = h('input', { type: 'checkbox', id: uid('ev'), value: '*', checked: selected.includes('*') });
  const boxes = EVENT_KINDS.map((kind) =>
    h('input', { type: 'checkbox', id: uid('ev'), value: kind, checked: selected.includes(kind) }),
  );
  const sync = () => {
    for (const b of boxes) b.disabled = all.checked;
  };
  all.addEventListener('change', sync);
  sync();

  const familyOf = (kind: string) => FAMILIES[kind.split('.')[0]] ?? OTHER;
  const titles = [...new Set([...Object.values(FAMILIES), OTHER])];
  const groups = titles.flatMap((title) => {
    const members = boxes.filter((b) => familyOf(b.value) === title);
    if (members.length === 0) return [];
    return [
      h(
        'div',
        { class: 'event-group' },
        h('p', { class: 'event-family' }, title),
        members.map((b) =>
          h('label', { class: 'check', for: b.id }, b, h('span', { class: 'mono' }, b.value)),
        ),
      ),
    ];
  });

  const el = h(
    'fieldset',
    { class: 'events' },
    h('legend', {}, 'Events'),
    h(
      'label',
      { class: 'check all', for: all.id },
      all,
      h('span', {}, 'Every event kind, present and future (*)'),
    ),
    h('div', { class: 'event-groups' }, groups),
  );
  return {
    el,
    value: () => (all.checked ? ['*'] : boxes.filter((b) => b.checked).map((b) => b.value)),
  };
}
