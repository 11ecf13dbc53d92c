/**
 * HTTP Range for single byte ranges (RFC 9110 §14). Several ranges are answered with the whole file, which the
 * RFC allows and which keeps the server free of multipart bodies. Pure: no I/O.
 */
export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** null: no usable Range (serve the whole file); 'unsatisfiable': a 416; otherwise the range to serve. */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    // A suffix: the last n bytes.
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return null; // invalid syntax: ignored, per the RFC
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
