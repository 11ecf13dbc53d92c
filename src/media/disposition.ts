/**
 * The Content-Disposition of a media link: whether a browser shows the file or saves it, and under which name.
 * Links are served from Herald's own origin, the session page's, with whatever type the uploader declared: an HTML
 * page or an SVG shown there would be a page of Herald's (the sandbox CSP and nosniff make it inert, this makes it
 * not a page at all). Only types a browser renders as a picture or a media player, never as a document, are shown;
 * everything else is a download. The name is the engine's (a document's `filename`), else `med_<id>.<extension>`;
 * the engine's name is someone else's text, so it is made safe for the header (RFC 6266, with RFC 5987's UTF-8 form
 * beside an ASCII fallback) and for a download folder.
 */
import { essenceOf, extensionFor } from './file-extension.ts';

const SHOWN = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'audio/mpeg',
  'audio/mp4',
  'audio/aac',
  'audio/ogg',
  'audio/opus',
  'audio/wav',
  'audio/webm',
  'video/mp4',
  'video/webm',
  'video/ogg',
]);

/** Longest name given, in characters (file systems allow 255 bytes; UTF-8 takes up to 4 a character). */
const MAX_NAME = 200;

export interface NamedFile {
  media_id: string;
  mimetype: string;
  /** The engine's name for it, when it gave one. */
  filename?: string;
}

export function contentDisposition(file: NamedFile): string {
  const kind = SHOWN.has(essenceOf(file.mimetype)) ? 'inline' : 'attachment';
  // Media ids are letters, digits and _ (ids.ts), extensions come from a table: safe as they are.
  const name = safeName(file.filename ?? '') ?? `${file.media_id}${extensionFor(file.mimetype)}`;
  // Printable ASCII only, no quote, backslash or percent (some browsers decode %XX in the plain form).
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return fallback === name
    ? `${kind}; filename="${name}"`
    : `${kind}; filename="${fallback}"; filename*=UTF-8''${rfc5987(name)}`;
}

/**
 * A name that can neither leave the download folder nor disguise itself: control characters (CR and LF included) and
 * bidirectional overrides (which turn "fdp.exe" into "exe.pdf" on screen) removed, path separators replaced, cut to
 * MAX_NAME characters with its extension kept. Null when nothing is left.
 */
function safeName(raw: string): string | null {
  const cleaned = raw
    .toWellFormed()
    .replace(/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '')
    .replace(/[/\\]/g, '_')
    .trim();
  const chars = Array.from(cleaned);
  if (chars.length === 0) return null;
  if (chars.length <= MAX_NAME) return cleaned;
  const ext = /\.[^.]{1,10}$/.exec(cleaned)?.[0] ?? '';
  return chars.slice(0, MAX_NAME - ext.length).join('') + ext;
}

/** RFC 5987 ext-value characters: percent-encoded UTF-8 for all but attr-char. */
const rfc5987 = (name: string) =>
  encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
