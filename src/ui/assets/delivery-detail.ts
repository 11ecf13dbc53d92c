/**
 * One delivery opened: its attempts (time, duration, result, response excerpt, next attempt and why), the request
 * body (indented, and its exact bytes), the headers, a copy-as-curl, a media preview of Herald's own media, and why
 * the engine's media was not stored when it was not (the receiver only learns that it failed). Its chat filters the
 * log to that chat; a delivery waiting its turn in its chat links the one it waits for.
 */
import type { DeliveryDetail, Webhook } from './api.ts';
import { type ChatActions, chatButton, waitedForButton } from './chat-links.ts';
import { curlCommand } from './curl.ts';
import { h, uid } from './dom.ts';
import { failureText, formatDuration, formatTime, nextAttemptText, relative, resultOf } from './format.ts';
import { mediaPreview } from './media-preview.ts';
import { notify } from './notices.ts';

const userAgent = () =>
  `Herald/${document.querySelector('meta[name="herald-version"]')?.getAttribute('content') ?? ''}`;

function attemptsTable(d: DeliveryDetail): HTMLElement {
  const { attempts } = d;
  if (attempts.length === 0) {
    const text = d.waiting_for
      ? 'No attempt yet: the first starts when its turn comes.'
      : d.next_attempt_at && Date.parse(d.next_attempt_at) <= Date.now()
        ? 'No attempt finished yet: the first is under way.'
        : 'No attempt yet: the first starts at once.';
    return h('p', { class: 'muted' }, text);
  }
  const rows = [...attempts].reverse().map((a) => {
    const ok = a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
    // data-label names each cell where a phone-width screen stacks the table.
    return h(
      'tr',
      {},
      h(
        'td',
        { 'data-label': 'Attempt' },
        h('span', {}, a.attempt, a.trigger === 'manual' ? h('span', { class: 'tag' }, 'manual') : null),
      ),
      h('td', { 'data-label': 'Started' }, h('span', {}, formatTime(a.started_at))),
      h('td', { class: 'num', 'data-label': 'Duration' }, h('span', {}, formatDuration(a.duration_ms))),
      h('td', { 'data-label': 'Result' }, h('span', { class: `result ${ok ? 'good' : 'bad'}` }, resultOf(a))),
      h(
        'td',
        { 'data-label': 'Response' },
        a.response_body
          ? h('pre', { class: 'excerpt' }, a.response_body)
          : h('span', { class: 'muted' }, '—'),
      ),
      h('td', { 'data-label': 'Next attempt' }, h('span', {}, nextAttemptText(a))),
    );
  });
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table attempts' },
      h('caption', { class: 'visually-hidden' }, 'Attempts, newest first'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['#', 'Started', 'Duration', 'Result', 'Response (first 4 KiB)', 'Next attempt'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

function statusLine(d: DeliveryDetail): string {
  if (d.status === 'delivered') return `Delivered ${formatTime(d.last_attempt_at)}.`;
  if (d.status === 'failed') {
    const last = resultOf({ status_code: d.last_status_code, error: d.last_error });
    return `Failed: ${failureText(d.failure_reason)}. Last result: ${last}${d.last_error ? ` (${d.last_error})` : ''}.`;
  }
  if (d.waiting_for)
    return 'Waiting its turn: it starts once the delivery of its chat before it is delivered or has failed.';
  if (d.next_attempt_at && Date.parse(d.next_attempt_at) > Date.now())
    return `Next attempt ${relative(d.next_attempt_at)} (${formatTime(d.next_attempt_at)}).`;
  // Due already: the attempt is under way (a chat's first, in flight, stays so until the receiver answers).
  if (d.next_attempt_at)
    return `Attempt in progress (due ${relative(d.next_attempt_at)}, ${formatTime(d.next_attempt_at)}).`;
  return 'Attempt in progress.';
}

function headersBlock(d: DeliveryDetail, webhook: Webhook | undefined): HTMLElement {
  const last = d.attempts[d.attempts.length - 1];
  const ts = last ? String(Math.floor(Date.parse(last.started_at) / 1000)) : '<time of the attempt>';
  const lines = [
    'Content-Type: application/json',
    `User-Agent: ${userAgent()}`,
    `X-Service-Event-Id: ${d.event_id}`,
    `X-Service-Timestamp: ${ts}`,
  ];
  if (webhook?.client_sign_secret_set)
    lines.push('X-Service-Signature: v1=<HMAC-SHA256 of "timestamp.body" with the secret>');
  return h(
    'div',
    {},
    h('pre', { class: 'code' }, lines.join('\n')),
    h(
      'p',
      { class: 'help' },
      'Rebuilt from the documented format (Herald does not store the headers it sent). Each attempt sends its own time',
      last ? `; shown: attempt ${last.attempt}` : '',
      '. ',
      webhook?.client_sign_secret_set
        ? 'The signature is not shown: the secret is kept sealed and never leaves Herald.'
        : 'The webhook has no secret now, so no signature is sent.',
    ),
  );
}

function curlBlock(d: DeliveryDetail, webhook: Webhook | undefined): HTMLElement | null {
  if (!webhook) return null;
  const command = curlCommand({
    url: webhook.destination_url,
    body: d.request_body,
    eventId: d.event_id,
    userAgent: userAgent(),
    signed: webhook.client_sign_secret_set,
  });
  const copy = h(
    'button',
    { type: 'button', class: 'button secondary small', 'data-focus': 'curl' },
    'Copy as curl',
  );
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(command);
      notify('curl command copied');
    } catch {
      notify('The browser refused the clipboard: select the command below and copy it.', 'bad');
    }
  });
  return h(
    'div',
    { class: 'curl' },
    h('div', { class: 'row space' }, h('h4', {}, 'Replay with curl'), copy),
    h('pre', { class: 'code', 'data-curl': '' }, command),
    h(
      'p',
      { class: 'help' },
      webhook.client_sign_secret_set
        ? 'Set WEBHOOK_SECRET to the webhook’s secret first: the command signs with a fresh timestamp, as Herald would now.'
        : 'Uses a fresh timestamp, as Herald would now.',
    ),
  );
}

/** The body indented for reading; the exact bytes stay one click away (they are what is signed). */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

export function deliveryDetail(
  d: DeliveryDetail,
  webhook: Webhook | undefined,
  ctx: ChatActions,
): (Node | null)[] {
  const bodyId = uid('body');
  return [
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Delivery'),
      h('dd', { class: 'mono' }, d.delivery_id),
      h('dt', {}, 'Event'),
      h('dd', { class: 'mono' }, d.event_id),
      h('dt', {}, 'Destination'),
      h('dd', { class: 'mono' }, webhook?.destination_url ?? d.webhook_id),
      d.chat ? h('dt', {}, 'Chat') : null,
      d.chat ? h('dd', {}, chatButton(ctx, d.chat)) : null,
      h('dt', {}, 'State'),
      h('dd', {}, statusLine(d)),
      d.waiting_for ? h('dt', {}, 'Waits for') : null,
      d.waiting_for ? h('dd', {}, waitedForButton(ctx, d.waiting_for)) : null,
      d.media_failure ? h('dt', {}, 'Media') : null,
      d.media_failure ? h('dd', { 'data-media-failure': '' }, `Not stored: ${d.media_failure}`) : null,
    ),
    h('h4', {}, 'Attempts'),
    attemptsTable(d),
    mediaPreview(d.request_body),
    h('h4', {}, 'Request headers'),
    headersBlock(d, webhook),
    h('h4', { id: bodyId }, 'Request body'),
    h(
      'pre',
      { class: 'code body', 'aria-labelledby': bodyId, 'data-body': 'pretty' },
      pretty(d.request_body),
    ),
    h(
      'details',
      { class: 'exact' },
      h('summary', {}, 'Exact bytes sent (what the signature covers)'),
      h('pre', { class: 'code body', 'data-body': 'exact' }, d.request_body),
    ),
    curlBlock(d, webhook),
  ];
}
