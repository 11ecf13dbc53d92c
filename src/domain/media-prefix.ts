/**
 * Where engine media may be downloaded from with the operator's permission (ENGINE_MEDIA_PREFIXES, an instance's
 * engine_media_prefix). A URL is under a prefix when its normalised form (scheme, host, port, path) starts with the
 * prefix's. A path that servers may read differently from the parser (dot segments, encoded separators, backslashes)
 * is refused outright rather than guessed at: `/api/files/%2e%2e/sessions` is outside on paper and inside on some
 * servers.
 */

import { urlCharacterProblem } from './url-characters.ts';

const MAX_LENGTH = 2048;
const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** The normalised form of a URL (`http://waha:80/api/files/x`), or why it has none. */
export type Normalised = { key: string } | { why: string };

/**
 * `scheme://host:port/path`: host as the WHATWG parser gives it (lowercase, IDNA, IPv4 forms folded) without a
 * trailing dot, the port always explicit, the path as parsed; query and fragment left out.
 */
export function normaliseMediaUrl(raw: string): Normalised {
  if (raw.length > MAX_LENGTH) return { why: `must be at most ${MAX_LENGTH} characters` };
  // The parser drops tabs and newlines and reads a backslash as a slash: what it would read is not what was sent.
  const characters = urlCharacterProblem(raw);
  if (characters) return { why: characters };
  // A literal scheme://authority: the parser would also take `http:waha` or `http:///waha`.
  const m = /^(https?):\/\/([^/?#]*)([^?#]*)/i.exec(raw);
  if (!m || m[2] === '' || !URL.canParse(raw)) return { why: 'must be an absolute http or https URL' };
  if (m[2].includes('@')) return { why: 'must not contain user information' };
  const encoded = /%(2f|5c|2e|25)/i.exec(m[3]);
  if (encoded) {
    return { why: `must not have an encoded "/", "\\", "." or "%" in its path (${encoded[0]})` };
  }
  if (m[3].split('/').some((s) => s === '.' || s === '..' || /^\.\.?;/.test(s))) {
    return { why: 'must not have a "." or ".." segment in its path' };
  }
  const url = new URL(raw);
  const host = url.hostname.replace(/\.+$/, '');
  return { key: `${url.protocol}//${host}:${url.port || DEFAULT_PORTS[url.protocol]}${url.pathname}` };
}

/** A prefix's normalised form: a URL without query or fragment, its path ending in "/" (a prefix names a folder). */
export function normalisePrefix(raw: string): Normalised {
  if (/[?#]/.test(raw)) return { why: 'must not have a query or fragment' };
  const n = normaliseMediaUrl(raw);
  if ('why' in n) return n;
  return { key: n.key.endsWith('/') ? n.key : `${n.key}/` };
}

/** Normalised prefixes (normalisePrefix) that contain the URL; false for a URL refused outright. */
export function isUnder(url: string, prefixKeys: readonly string[]): boolean {
  const n = normaliseMediaUrl(url);
  return 'key' in n && prefixKeys.some((p) => n.key.startsWith(p));
}

/**
 * The prefixes that count for an instance: its own (when still within the operator's), else the operator's.
 * An instance prefix the operator's list no longer covers counts as none: narrowing never widens.
 */
export function effectivePrefixes(
  operator: readonly string[],
  instance: string | null | undefined,
): string[] {
  const keys = operator.flatMap((p) => {
    const n = normalisePrefix(p);
    return 'key' in n ? [n.key] : [];
  });
  if (instance == null) return keys;
  const own = normalisePrefix(instance);
  return 'key' in own && keys.some((k) => own.key.startsWith(k)) ? [own.key] : [];
}

/** Why an instance's engine_media_prefix cannot be set, or null: it must lie within the operator's prefixes. */
export function instancePrefixProblem(raw: string, operator: readonly string[]): string | null {
  const n = normalisePrefix(raw);
  if ('why' in n) return `must be a URL prefix such as http://waha:3000/api/files/default/; it ${n.why}`;
  if (operator.length === 0) {
    return 'cannot be set while ENGINE_MEDIA_PREFIXES is unset: the operator allows no engine media prefix';
  }
  if (effectivePrefixes(operator, raw).length === 0) {
    return `must be within ENGINE_MEDIA_PREFIXES: one of ${operator.join(', ')} or a URL under it`;
  }
  return null;
}

/**
 * How an engine media URL may be downloaded: under a prefix, from any address (the prefix is the operator's
 * permission), with the engine's headers only for an event that came through an engine endpoint; elsewhere like a
 * public destination, never with them; refused outright when its spelling cannot be judged.
 */
export type MediaSource =
  | { kind: 'prefixed'; headers: boolean }
  | { kind: 'public' }
  | { kind: 'refused'; why: string };

export function mediaSource(url: string, prefixKeys: readonly string[], viaEngine: boolean): MediaSource {
  const n = normaliseMediaUrl(url);
  if ('why' in n) return { kind: 'refused', why: n.why };
  return prefixKeys.some((p) => n.key.startsWith(p))
    ? { kind: 'prefixed', headers: viaEngine }
    : { kind: 'public' };
}
