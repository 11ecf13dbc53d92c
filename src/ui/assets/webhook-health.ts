/**
 * How a webhook is doing, on its card: the deliveries that ended in the last 24 hours and how many were delivered,
 * the attempts that failed and were retried, the last delivery, and failures in a row when there are any (the
 * first sign of a receiver in trouble). Deliveries, not attempts: three retries before a delivery are one delivery
 * delivered, not 25%.
 */
import type { Webhook } from './api.ts';
import { h } from './dom.ts';
import { formatShortTime, formatTime, plural } from './format.ts';

/**
 * The health line's content. Times are absolute: the card is redrawn only when something changes, and "3 s ago"
 * would go stale on a quiet webhook.
 */
export function webhookHealth(w: Webhook): (HTMLElement | string | null)[] {
  const { delivered_24h: delivered, failed_24h: failed, consecutive_failures: failing } = w.health;
  const ended = delivered + failed;
  const rate =
    ended === 0
      ? h('span', {}, 'No deliveries ended in the last 24 h')
      : h(
          'span',
          { class: failed === 0 ? 'good' : failing > 0 ? 'bad' : 'warn' },
          `${delivered} of ${ended} delivered in 24 h`,
        );
  const retried = retriedNote(w.health.retried_24h, w.health.attempts_24h);
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
  return [rate, retried ? '; ' : null, retried, ' · ', last, streak ? ' · ' : null, streak];
}

/** "6 of 8 attempts failed and were retried", when any was. */
function retriedNote(retried: number, attempts: number): HTMLElement | null {
  if (retried === 0) return null;
  const were = retried === 1 ? 'failed and was retried' : 'failed and were retried';
  return h('span', { class: 'warn' }, `${retried} of ${plural(attempts, 'attempt')} ${were}`);
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
