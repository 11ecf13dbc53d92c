/** Event kinds picked from the catalog the API itself validates against, grouped by family. */
import { EVENT_KINDS, OPERATIONAL_KINDS } from '../../domain/event-kinds.ts';
import { h, uid } from './dom.ts';
import { eventFamilies } from './event-families.ts';

export interface EventPicker {
  el: HTMLElement;
  value(): string[];
}

export function eventPicker(selected: string[]): EventPicker {
  const all = h('input', { type: 'checkbox', id: uid('ev'), value: '*', checked: selected.includes('*') });
  const boxes = EVENT_KINDS.map((kind) =>
    h('input', { type: 'checkbox', id: uid('ev'), value: kind, checked: selected.includes(kind) }),
  );
  // `*` takes every kind but Herald's own, which are chosen by name beside it.
  const own = (b: HTMLInputElement) => OPERATIONAL_KINDS.includes(b.value);
  const sync = () => {
    for (const b of boxes) if (!own(b)) b.disabled = all.checked;
  };
  all.addEventListener('change', sync);
  sync();

  const groups = eventFamilies().map(({ title, kinds }) =>
    h(
      'div',
      { class: 'event-group' },
      h('p', { class: 'event-family' }, title),
      kinds.map((kind) => {
        const b = boxes.find((x) => x.value === kind) as HTMLInputElement;
        return h('label', { class: 'check', for: b.id }, b, h('span', { class: 'mono' }, b.value));
      }),
    ),
  );

  const el = h(
    'fieldset',
    { class: 'events' },
    h('legend', {}, 'Events'),
    h(
      'label',
      { class: 'check all', for: all.id },
      all,
      h('span', {}, "Every event kind, present and future (*), but Herald's own"),
    ),
    h('div', { class: 'event-groups' }, groups),
  );
  return {
    el,
    value: () => {
      const checked = boxes.filter((b) => b.checked && !(all.checked && !own(b))).map((b) => b.value);
      return all.checked ? ['*', ...checked] : checked;
    },
  };
}
