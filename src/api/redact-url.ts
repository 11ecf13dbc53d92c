/**
 * A URL as logs may show it. Signed media links (`/media/med_…?expires=…&sig=…`) open a file to whoever holds them,
 * and other URLs carry tokens in their query (`?token=`, `?api_key=`) or user information: a log line is read by
 * more people, and kept longer, than the link was meant for. The path stays, so a line still says what was asked.
 */

/** Query parameters that are credentials wherever they appear. */
const SECRET_PARAMS =
  /^(sig|signature|token|access_token|refresh_token|key|api_key|apikey|secret|password|auth|code)$/i;

/** `url` with credential-bearing query values and user information replaced by `…` (relative URLs too). */
export function redactUrl(url: string): string {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://relative.invalid');
  } catch {
    return url.split('?')[0];
  }
  if (parsed.username || parsed.password) {
    parsed.username = '…';
    parsed.password = '';
  }
  // Every value of a media link's query is part of its signature; elsewhere only the known credential names.
  const media = parsed.pathname.startsWith('/media/');
  const params = [...parsed.searchParams.keys()];
  const query = params
    .map((name) => `${name}=${media || SECRET_PARAMS.test(name) ? '…' : parsed.searchParams.get(name)}`)
    .join('&');
  const base = absolute ? `${parsed.protocol}//${parsed.username ? '…@' : ''}${parsed.host}` : '';
  return `${base}${parsed.pathname}${query ? `?${query}` : ''}`;
}
