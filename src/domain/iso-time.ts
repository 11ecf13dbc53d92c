/** ISO 8601 times with an offset, as engines write them, and the same instant in UTC ("…Z"), as Herald delivers them. */

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):?(\d{2}))$/;

/** The instant in UTC with the fraction as written, or null when `text` is no real ISO 8601 time with an offset. */
export function toUtc(text: string): string | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const fraction = m[7] ?? '';
  // A regex alone would pass 2026-02-30: the date must survive a round trip through the calendar.
  const local = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const real = local.getUTCFullYear() === y && local.getUTCMonth() === mo - 1 && local.getUTCDate() === d;
  const [offsetH, offsetM] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  if (!real || h > 23 || mi > 59 || s > 59 || offsetH > 23 || offsetM > 59) return null;
  if (m[8] === 'Z') return text;
  const sign = m[9] === '-' ? -1 : 1;
  const utc = new Date(local.getTime() - sign * (offsetH * 60 + offsetM) * 60_000);
  return `${utc.toISOString().slice(0, 19)}${fraction}Z`;
}
