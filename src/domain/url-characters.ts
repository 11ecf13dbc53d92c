/**
 * Characters a URL given to Herald may not hold, checked on the raw string: the WHATWG parser would quietly drop
 * tabs and line breaks and read `\` as `/`, so that the URL shown, saved and sent would not be the one written.
 */

/** Control characters (C0, DEL, C1), any whitespace, and the backslash. */
const REFUSED = /[\p{Cc}\s\\]/u;

const NAMES: Record<string, string> = {
  '\0': 'NUL',
  '\t': 'a tab',
  '\n': 'a line feed (LF)',
  '\r': 'a carriage return (CR)',
  ' ': 'a space',
  '\\': 'a backslash',
};

/** What is wrong with the URL's characters, in words without the field's name, or null when nothing is. */
export function urlCharacterProblem(url: string): string | null {
  const found = REFUSED.exec(url);
  if (!found) return null;
  const ch = found[0];
  const code = `U+${ch.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[ch] ? `${NAMES[ch]} (${code})` : code;
  return `must not contain a control character, a space or a backslash (percent-encode them): found ${name} at character ${found.index + 1}`;
}
