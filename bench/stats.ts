/** Figures of the benchmark: medians over runs, latency percentiles, and how they print. */

/** The middle value; with an even count, the mean of the two middle ones. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
}

/** Nearest-rank percentile (p in 0..100) of a sorted array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1];
}

export interface Latency {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function latency(ms: number[]): Latency {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), max: s[s.length - 1] };
}

export const rate = (n: number) => Math.round(n).toLocaleString('en-US');
export const ratio = (n: number) => n.toFixed(2);
export const millis = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const megabytes = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;

let printedAt = 0;
/** One line rewritten in place on a terminal; into a file or pipe, at most a line every 2 s. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${text.slice(0, process.stderr.columns - 1)}\x1b[K`);
  else if (Date.now() - printedAt >= 2000) {
    process.stderr.write(`${text}\n`);
    printedAt = Date.now();
  }
}

export function clearProgress(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}
