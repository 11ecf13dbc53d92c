/**
 * The event_id of an engine's event at one instance, derived from what names the event to the engine: `evt_` + 26
 * base32 characters of SHA-256 over the instance and that name. Pure. The engine's retries of one event get the same
 * id, so they are stored once; the same event at another instance is another event with an id of its own, unique as
 * every event_id is.
 */
import { createHash } from 'node:crypto';

const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

export function derivedEventId(instanceId: string, name: string): string {
  const digest = createHash('sha256').update(`${instanceId}\n${name}`).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += BASE32[digest[i] & 31];
  return `evt_${out}`;
}
