/**
 * URLs as logs may show them. Signed media links (`/media/med_…?expires=…&sig=…`) open a file to whoever holds
 * them, and other URLs carry tokens in their query (`?token=`, `?x-api-key=`) or user information: a log line is
 * read by more people, and kept longer, than the link was meant for. The path stays, so a line still says what
 * was asked.
 */

/** Query parameter names that hold credentials: any name containing one of these words. */
const SECRET_PARAM = /sig|token|key|secret|pass|auth|code|credential/i;

/**
 * A request to Herald (`request.url`) as its log line shows it: every value of a media link's query (all of it is
 * signed), and values of credential-named parameters elsewhere, replaced by `…`; other parameters (`limit=5`) stay.
 */
export function redactUrl(url: string): string {
  // A path alone (most requests) has nothing to hide; `//…` would be read as a host, perhaps with user information.
  if (url.startsWith('/') && !url.startsWith('//') && !url.includes('?')) return url;
  return redact(url, (name, path) => path.startsWith('/media/') || SECRET_PARAM.test(name));
}

/**
 * A URL of someone else's (an engine's file link, a receiver's address) as a log shows it: user information and
 * every query value replaced by `…`, since what its owner put there as a key cannot be told by its name.
 */
export function redactForeignUrl(url: string): string {
  return redact(url, () => true);
}

function redact(url: string, hidden: (name: string, path: string) => boolean): string {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://relative.invalid');
  } catch {
    return url.split('?')[0].replace(/\/\/[^/]*@/, '//…@');
  }
  const query = [...parsed.searchParams]
    .map(([name, value]) => `${name}=${hidden(name, parsed.pathname) ? '…' : value}`)
    .join('&');
  const userinfo = parsed.username || parsed.password ? '…@' : '';
  const base = absolute ? `${parsed.protocol}//${userinfo}${parsed.host}` : '';
  return `${base}${parsed.pathname}${query ? `?${query}` : ''}`;
}
