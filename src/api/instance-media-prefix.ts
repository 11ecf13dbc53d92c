/** An instance's engine_media_prefix as PATCH takes it: null clears it; a string must lie within ENGINE_MEDIA_PREFIXES. */
import type { Config } from '../config.ts';
import { instancePrefixProblem } from '../domain/media-prefix.ts';
import { HttpError } from './errors.ts';

export function instanceMediaPrefix(
  value: string | null,
  config: Pick<Config, 'engineMediaPrefixes'>,
): string | null {
  if (value === null) return null;
  const problem = instancePrefixProblem(value, config.engineMediaPrefixes);
  if (problem) throw HttpError.invalid([{ field: 'engine_media_prefix', message: problem }]);
  return value;
}
