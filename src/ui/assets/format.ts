/** How times, results and states read on the page: one place, so every panel says them alike. */
import type { Attempt, Delivery } from './api.ts';

/** Day, time and zone, always: a log read tomorrow, or by a colleague elsewhere, must still say when. */
const timeFormat = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

/** The same in a list's narrow column: day, time and zone, without weekday and year. */
const shortFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

/** A time of today, with its zone like every other time on the page: "8:13:05 PM UTC". */
const clockFormat = new Intl.DateTimeFormat(undefined, {
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});
export const formatClock = (date: Date) => clockFormat.format(date);

/** "Tue, Nov 25, 2026, 04:25:13 GMT+1", or "—" for no time. */
export function formatTime(iso: string | null): string {
  if (!iso) return '—';
  return timeFormat.format(new Date(iso));
}

/** "Nov 25, 04:25:13 GMT+1". */
export const formatShortTime = (iso: string) => shortFormat.format(new Date(iso));

/** "in 12 s", "3 min ago": relative to now, for due times and the age of things. */
export function relative(iso: string, now = Date.now()): string {
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const abs = Math.abs(s);
  const span =
    abs < 60 ? `${abs} s` : abs < 3600 ? `${Math.round(abs / 60)} min` : `${Math.round(abs / 3600)} h`;
  if (abs < 1) return 'now';
  return s > 0 ? `in ${span}` : `${span} ago`;
}

export const formatDuration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);

const ERRORS: Record<string, string> = {
  timeout: 'Timed out',
  connection_refused: 'Connection refused',
  connection_reset: 'Connection reset',
  dns_error: 'Host not found',
  host_unreachable: 'Host unreachable',
  tls_error: 'TLS error',
  connection_error: 'Connection error',
  destination_not_allowed: 'Destination not allowed',
  internal_error: 'Internal error',
};

/** "HTTP 503", "Timed out", or "—" before any attempt. */
export function resultOf(r: { status_code: number | null; error: string | null }): string {
  if (r.status_code !== null) return `HTTP ${r.status_code}${r.status_code === 410 ? ' Gone' : ''}`;
  if (r.error) return ERRORS[r.error] ?? r.error;
  return '—';
}

export const lastResult = (d: Delivery) => resultOf({ status_code: d.last_status_code, error: d.last_error });

export function failureText(reason: string | null): string {
  switch (reason) {
    case 'attempts_exhausted':
      return 'every attempt of the cycle failed';
    case 'gone':
      return 'the receiver answered 410 Gone, so the webhook was disabled';
    case 'webhook_disabled':
      return 'the webhook was disabled while retries were pending';
    case 'destination_not_allowed':
      return (
        'the destination is not allowed: its address is not globally reachable, so nothing was sent. Change the ' +
        'webhook’s URL, or allow the address with ALLOW_PRIVATE_DESTINATIONS or ALLOWED_DESTINATION_CIDRS'
      );
    default:
      return reason ?? '';
  }
}

/** Why the next attempt is at its time: the fixed schedule, or the receiver's Retry-After. */
export function nextAttemptText(a: Attempt): string {
  if (!a.next_attempt_at) return '—';
  const why = a.next_attempt_reason === 'retry-after' ? "receiver's Retry-After" : 'retry schedule';
  return `${formatTime(a.next_attempt_at)} (${why})`;
}

/** Badge tone of a session status. */
export function sessionTone(status: string): string {
  if (status === 'WORKING') return 'good';
  if (status === 'FAILED') return 'bad';
  if (status === 'SCAN_QR_CODE' || status === 'STARTING') return 'warn';
  return 'muted';
}

export const sessionLabel = (status: string) => status.replaceAll('_', ' ').toLowerCase();

export const formatPhone = (phone: string | null) => (phone ? `+${phone}` : 'No phone linked');

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A delivery's chat as the log names it: "*" is the key of events of the whole session. */
export const chatLabel = (chat: string) => (chat === '*' ? 'whole session (*)' : chat);

/** A destination as a person scans it: host and path, without the scheme. */
export const shortUrl = (url: string) => url.replace(/^https?:\/\//, '');
