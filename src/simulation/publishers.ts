/**
 * How `herald simulate` hands its events to Herald: in batches to Herald's own event API, or one request per event
 * to the engine endpoint, in WAHA's body and (optionally) signed as WAHA signs it, a few requests at a time.
 */
import { createHmac } from 'node:crypto';
import type { SimulatedEvent } from './session.ts';
import { toWaha, type WahaSession } from './waha.ts';

export interface Target {
  /** Herald's base URL, ending in a slash. */
  base: string;
  instance: string;
  key: string;
}

/** Publishes events; says which kinds it sent (WAHA never sends some) and how many deliveries were queued. */
export type Publisher = (events: SimulatedEvent[]) => Promise<{ sent: string[]; deliveries: number }>;

export class SimulationFailed extends Error {}

/** Requests to the engine endpoint in flight at once. */
const WAHA_CONCURRENCY = 8;

export function publishBatches(target: Target): Publisher {
  const url = new URL(`instances/${target.instance}/events/batch`, target.base);
  return async (events) => {
    const body = await post(url, target.key, JSON.stringify({ events }), {});
    const results = (body.results ?? []) as { deliveries: number }[];
    return { sent: events.map((e) => e.event), deliveries: results.reduce((n, r) => n + r.deliveries, 0) };
  };
}

export function publishToWaha(
  target: Target,
  files: Pick<WahaSession, 'fileUrl'>,
  hmacKey: string | null,
): Publisher {
  const url = new URL(`instances/${target.instance}/engine/waha`, target.base);
  const session: WahaSession = {
    name: 'default',
    engine: 'WEBJS',
    me: null,
    fileUrl: (name, large) => files.fileUrl(name, large),
  };
  // Each event stamped when it happens, a millisecond apart at least, as an engine's are: the instance shows the
  // session.status with the newest timestamp, and a batch made in one millisecond would otherwise tie.
  let last = 0;
  const stamp = () => {
    last = Math.max(Date.now(), last + 1);
    return last;
  };
  return async (events) => {
    // In order, so that a session's status and its messages arrive as they happened.
    const bodies = events.flatMap((e) => {
      const body = toWaha(e, session, stamp());
      return body ? [[e.event, JSON.stringify(body)] as const] : [];
    });
    let deliveries = 0;
    for (let i = 0; i < bodies.length; i += WAHA_CONCURRENCY) {
      const answers = await Promise.all(
        bodies.slice(i, i + WAHA_CONCURRENCY).map(([, raw]) => {
          const headers: Record<string, string> = hmacKey
            ? {
                'x-webhook-hmac': createHmac('sha512', hmacKey).update(raw).digest('hex'),
                'x-webhook-hmac-algorithm': 'sha512',
              }
            : {};
          return post(url, target.key, raw, headers);
        }),
      );
      for (const a of answers) deliveries += (a.deliveries as number) ?? 0;
    }
    return { sent: bodies.map(([kind]) => kind), deliveries };
  };
}

async function post(
  url: URL,
  key: string,
  body: string,
  headers: Record<string, string>,
): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  }).catch((err: Error) => {
    throw new SimulationFailed(`cannot reach Herald at ${url.origin}: ${err.cause ?? err.message}`);
  });
  const answer = (await res.json().catch(() => null)) as { error?: { message: string } } | null;
  if (res.status !== 202 || !answer) {
    throw new SimulationFailed(`Herald answered ${res.status}: ${answer?.error?.message ?? 'no JSON body'}`);
  }
  return answer as Record<string, unknown>;
}
