/**
 * URLs as logs may show them. Signed media links (`/media/med_…?expires=…&sig=…`) open a file to whoever holds
 * them, and other URLs carry tokens in their query (`?token=`, `?x-api-key=`), their path or their user
 * information: a log line is read by more people, and kept longer, than the link was meant for. Herald's own
 * credentials are hidden wherever they stand, whatever a parameter is called; the rest of the path stays, so a line
 * still says what was asked.
 */

/** Tells whether a piece of text is a credential known only by its hash (the admin key). */
export type SecretTest = (text: string) => boolean;
const noSecret: SecretTest = () => false;

/** Query parameter names that hold credentials: any name containing one of these words. */
const SECRET_PARAM = /sig|token|key|secret|pass|auth|code|credential/i;

/**
 * Herald's own credentials, by their prefix: instance keys and a generated admin key (`hk_`), portal link tokens
 * (`hpl_`) and signing secrets (`whsec_`). Not inside a longer word, so a webhook id (`whk_…`) is not one.
 */
const HERALD_CREDENTIAL = /(?<![A-Za-z0-9])(?:hk|hpl|whsec)_/;

/** Whether `text` (a path segment, a query value, a header value) holds one of Herald's credentials. */
export function holdsCredential(text: string, isSecret: SecretTest = noSecret): boolean {
  if (HERALD_CREDENTIAL.test(text)) return true;
  // The admin key may have any form: each word of the text is tried, decoded as a URL would carry it.
  const decoded = decode(text);
  return (
    decoded.split(/[\s,;=&]+/).some((word) => word !== '' && isSecret(word)) ||
    HERALD_CREDENTIAL.test(decoded)
  );
}

/**
 * A request to Herald (`request.url`) as its log line shows it: every value of a media link's query (all of it is
 * signed), values of credential-named parameters elsewhere, and any path segment, parameter name or value that
 * holds one of Herald's credentials (or is `isSecret`), replaced by `…`; other parameters (`limit=5`) stay.
 */
export function redactUrl(url: string, isSecret: SecretTest = noSecret): string {
  // A path alone (most requests) with no credential in it has nothing to hide; `//…` would be read as a host,
  // perhaps with user information.
  if (url.startsWith('/') && !url.startsWith('//') && !url.includes('?') && !pathHolds(url, isSecret))
    return url;
  return redact(url, isSecret, (name, path) => path.startsWith('/media/') || SECRET_PARAM.test(name));
}

/**
 * A URL of someone else's (an engine's file link, a receiver's address) as a log shows it: user information and
 * every query value replaced by `…`, since what its owner put there as a key cannot be told by its name; a path
 * segment holding one of Herald's credentials too.
 */
export function redactForeignUrl(url: string): string {
  return redact(url, noSecret, () => true);
}

function redact(url: string, isSecret: SecretTest, hidden: (name: string, path: string) => boolean): string {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.test(url);
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://relative.invalid');
  } catch {
    return redactPath(url.split('?')[0].replace(/\/\/[^/]*@/, '//…@'), isSecret);
  }
  const secret = (text: string) => holdsCredential(text, isSecret);
  const query = [...parsed.searchParams]
    .map(([name, value]) => {
      const shown = secret(name) ? '…' : name;
      return `${shown}=${hidden(name, parsed.pathname) || secret(value) ? '…' : value}`;
    })
    .join('&');
  const userinfo = parsed.username || parsed.password ? '…@' : '';
  const base = absolute ? `${parsed.protocol}//${userinfo}${parsed.host}` : '';
  return `${base}${redactPath(parsed.pathname, isSecret)}${query ? `?${query}` : ''}`;
}

const pathHolds = (path: string, isSecret: SecretTest) =>
  path.split('/').some((segment) => segment !== '' && holdsCredential(segment, isSecret));

const redactPath = (path: string, isSecret: SecretTest) =>
  path
    .split('/')
    .map((segment) => (segment !== '' && holdsCredential(segment, isSecret) ? '…' : segment))
    .join('/');

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
