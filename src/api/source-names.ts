/**
 * A source without an instance_id finds each message's instance by the name its body gives (WAHA's session): two
 * instances of one name would make that ambiguous, so while such a source exists, a second instance may not take a
 * name another instance has.
 */
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';

export const instanceNameInUse = (name: string) =>
  new HttpError(
    'conflict',
    `name: another instance is named "${name}", and a source without an instance_id finds instances by name; ` +
      'choose another name',
  );

/** Throws the 409 when `name` would be a second instance's name that a source relies on. */
export async function checkInstanceName(
  ctx: Pick<ApiContext, 'store'>,
  name: string | undefined,
  instanceId: string | null,
): Promise<void> {
  if (!name) return;
  const sources = await ctx.store.sources.listSources();
  if (!sources.some((s) => s.instance_id === null && s.format !== 'herald')) return;
  const instances = await ctx.store.catalog.listInstances();
  if (instances.some((i) => i.name === name && i.instance_id !== instanceId)) throw instanceNameInUse(name);
}
