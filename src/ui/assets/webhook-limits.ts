/**
 * Which events of its kinds a webhook receives (a filter over the delivery body) and how fast deliveries to it
 * may start (a rate limit). Both are optional: left empty, the webhook receives every event of its kinds, as fast
 * as the receiver answers.
 */
import type { FieldError } from './api.ts';
import { h, uid } from './dom.ts';

export interface WebhookLimits {
  filterField: HTMLElement;
  rateField: HTMLElement;
  /** The filter and rate limit as the API takes them, or the problems found before asking it. */
  value(): { filter: unknown; rate_limit: { per_second: unknown } | null } | { errors: FieldError[] };
}

const FILTER_EXAMPLE = '{ "payload.fromMe": false, "payload.from": { "$prefix": "49" } }';

export function webhookLimits(filter: unknown, rateLimit: { per_second: number } | null): WebhookLimits {
  const filterId = uid('filter');
  const filterBox = h('textarea', {
    id: filterId,
    name: 'filter',
    rows: 3,
    spellcheck: 'false',
    autocomplete: 'off',
    class: 'mono',
    placeholder: FILTER_EXAMPLE,
  });
  filterBox.value = filter ? JSON.stringify(filter, null, 2) : '';
  const rateId = uid('rate');
  // Text, not type=number: a number box reads "abc" as empty, which would silently mean "no limit".
  const rate = h('input', {
    id: rateId,
    name: 'rate_limit',
    type: 'text',
    inputmode: 'numeric',
    autocomplete: 'off',
    placeholder: 'no limit',
    value: rateLimit?.per_second ?? '',
  });
  return {
    filterField: h(
      'div',
      { class: 'field', 'data-field': 'filter' },
      h('label', { for: filterId }, 'Filter (optional)'),
      filterBox,
      h(
        'p',
        { class: 'help' },
        'JSON: dotted paths of the delivery body to a value, or to $eq, $ne, $in, $nin, $exists, $prefix; ' +
          '$and / $or take lists. Only events that match are delivered. Empty: every event of the kinds above.',
      ),
    ),
    rateField: h(
      'div',
      { class: 'field', 'data-field': 'rate_limit' },
      h('label', { for: rateId }, 'Deliveries per second at most (optional)'),
      rate,
      h(
        'p',
        { class: 'help' },
        'Deliveries wait their turn instead of failing; other webhooks are not slowed. Empty: no limit.',
      ),
    ),
    value() {
      const errors: FieldError[] = [];
      let parsed: unknown = null;
      const text = filterBox.value.trim();
      if (text !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          errors.push({ field: 'filter', message: `is not valid JSON; for example ${FILTER_EXAMPLE}` });
        }
      }
      if (errors.length) return { errors };
      // The API judges the number (and names the rule); text that is no number at all goes as it is.
      const r = rate.value.trim();
      const perSecond = r === '' ? null : Number.isFinite(Number(r)) ? Number(r) : r;
      return { filter: parsed, rate_limit: perSecond === null ? null : { per_second: perSecond } };
    },
  };
}
