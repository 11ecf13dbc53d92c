/** Parsing of command-line values shared by the commands: durations, rates, numbers. Errors name the option. */
import { UsageError } from './command.ts';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "2s", "500ms", "1.5m", "1h"; a bare number is seconds. */
export function parseDuration(option: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw new UsageError(`--${option}: must be a duration such as 500ms, 2s, 1m or 1h, got "${raw}"`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']);
}

/** "20/s", "300/m", "5"; returns events per second. */
export function parseRate(option: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|m|h))?$/.exec(raw.trim());
  const perSecond = m ? (Number(m[1]) * 1000) / UNITS[m[2] ?? 's'] : Number.NaN;
  if (!(perSecond > 0))
    throw new UsageError(`--${option}: must be a positive rate such as 20/s or 300/m, got "${raw}"`);
  return perSecond;
}

export function parseNumber(option: string, raw: string, min: number, max: number, integer = false): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const kind = integer ? 'an integer' : 'a number';
    throw new UsageError(`--${option}: must be ${kind} from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}
