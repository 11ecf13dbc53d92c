/**
 * The formats a source's messages may be in, each a reader (domain/source-message.ts: body → instance, event and
 * its id) and the options its events are published with, as the HTTP route of that format publishes them.
 */

import { engineOptions } from '../api/engine-ingest.ts';
import type { PublishOptions } from '../api/publish.ts';
import type { Config } from '../config.ts';
import {
  readEvolutionMessage,
  readHeraldMessage,
  readWahaMessage,
  type SourceReader,
} from '../domain/source-message.ts';

export interface SourceFormat {
  read: SourceReader;
  /** An engine's body: published like the engine's own route (any kind, engine-sized bodies, repeats dropped). */
  engine: boolean;
}

export const SOURCE_FORMATS: Record<string, SourceFormat> = {
  herald: { read: readHeraldMessage, engine: false },
  waha: { read: readWahaMessage, engine: true },
  evolution: { read: readEvolutionMessage, engine: true },
};

export const isSourceFormat = (f: unknown): f is string =>
  typeof f === 'string' && Object.hasOwn(SOURCE_FORMATS, f);

/** Herald's own events as its event API takes them; an engine's as the engine's route does (engineOptions). */
export function publishOptions(
  format: SourceFormat,
  ctx: { config: Pick<Config, 'engineDedupeMs'> },
): PublishOptions {
  return format.engine ? engineOptions(ctx) : { prefix: () => '' };
}
