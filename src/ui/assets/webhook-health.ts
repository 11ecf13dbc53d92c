/**
 * How a webhook is doing, on its card: the share of attempts of the last 24 hours that delivered, the last
 * delivery, and failures in a row when there are any (the first sign of a receiver in trouble).
 */
import type { Webhook } from './api.ts';
import { h } from './dom.ts';
import { formatShortTime, formatTime, plural } from './format.ts';

/**
 * The health line's content. Times are absolute: the card is redrawn only when something changes, and "3 s ago"
 * would go stale on a quiet webhook.
 */
export function webhookHealth(w: Webhook): (HTMLElement | string | null)[] {
  const { attempts_24h: attempts, delivered_24h: delivered, consecutive_failures: failing } = w.health;
  const rate =
    attempts === 0
      ? h('span', {}, 'No attempts in the last 24 h')
      : h(
          'span',
          { class: delivered === attempts ? 'good' : failing > 0 ? 'bad' : 'warn' },
          `${Math.floor((delivered / attempts) * 100)}% delivered in 24 h (${delivered} of ${plural(attempts, 'attempt')})`,
        );
  const last = w.health.last_delivered_at
    ? h(
        'span',
        { title: formatTime(w.health.last_delivered_at) },
        `last delivery ${formatShortTime(w.health.last_delivered_at)}`,
      )
    : h('span', {}, 'nothing delivered yet');
  const streak =
    failing > 0 && w.health.last_failed_at
      ? h(
          'span',
          { class: 'bad', title: formatTime(w.health.last_failed_at) },
          `${plural(failing, 'failed attempt')} in a row, the last ${formatShortTime(w.health.last_failed_at)}`,
        )
      : null;
  return [rate, ' · ', last, streak ? ' · ' : null, streak];
}

/** The controls a webhook has beyond its kinds, in a few words for its card. */
export function controlsSummary(w: Webhook): string[] {
  const headers = w.headers ? Object.keys(w.headers).length : 0;
  return [
    w.ordering === 'chat' ? 'Ordered per chat' : null,
    w.filter ? 'Filtered' : null,
    headers ? plural(headers, 'own header') : null,
    w.rate_limit ? `At most ${w.rate_limit.per_second}/s` : null,
    w.previous_secret_until ? `Rotating secret until ${formatTime(w.previous_secret_until)}` : null,
  ].filter((s) => s !== null);
}
