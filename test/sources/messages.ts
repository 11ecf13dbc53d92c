/** Bodies of messages a source reads, in each format, numbered so that a test can tell them apart. */
import { messagePayload } from '../support/herald.ts';

export type Format = 'herald' | 'waha';

/** The n-th message of a run: an incoming message whose body says n; `session` names the instance (WAHA). */
export function messageBody(format: Format, n: number, run: string, session = 'default'): string {
  const payload = messagePayload({ id: `false_491701234567@c.us_${run}_${n}`, body: `message ${n}` });
  if (format === 'herald') return JSON.stringify({ event: 'message', payload });
  return JSON.stringify({
    id: `evt_${run}_${n}`,
    timestamp: 1795341600000 + n,
    session,
    engine: 'WEBJS',
    event: 'message',
    payload,
  });
}

/** The number a delivered event's body carries. */
export const numberOf = (delivered: { payload?: { body?: string } }): number =>
  Number(/message (\d+)/.exec(delivered.payload?.body ?? '')?.[1] ?? Number.NaN);
