/**
 * How `herald simulate` hands its events to Herald: in batches to Herald's own event API, or one request per event
 * to an engine endpoint, in WAHA's body (optionally signed as WAHA signs it) or Evolution API's, a few at a time.
 */
import { createHmac } from 'node:crypto';
import { type EvolutionSession, toEvolution } from './evolution.ts';
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
const ENGINE_CONCURRENCY = 8;

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
  const stamp = stamper();
  return async (events) => {
    // In order, so that a session's status and its messages arrive as they happened.
    const bodies = events.flatMap((e) => {
      const body = toWaha(e, session, stamp());
      return body ? [[e.event, JSON.stringify(body)] as const] : [];
    });
    const headers = (raw: string): Record<string, string> =>
      hmacKey
        ? {
            'x-webhook-hmac': createHmac('sha512', hmacKey).update(raw).digest('hex'),
            'x-webhook-hmac-algorithm': 'sha512',
          }
        : {};
    const answers = await postEach(
      url,
      target.key,
      bodies.map(([, raw]) => raw),
      headers,
    );
    const deliveries = answers.reduce((n, a) => n + ((a.deliveries as number) ?? 0), 0);
    return { sent: bodies.map(([kind]) => kind), deliveries };
  };
}

/**
 * Evolution API's bodies to the Evolution endpoint, one request per event, the file of a media message inline (the
 * `base64` webhook setting). Herald answers each with the events it made (an incoming message: message and
 * message.any), which are what it counts.
 */
export function publishToEvolution(target: Target): Publisher {
  const url = new URL(`instances/${target.instance}/engine/evolution`, target.base);
  const small = Buffer.alloc(24 * 1024, 0x5a);
  const large = Buffer.alloc(1024 * 1024, 0x5a);
  const session: EvolutionSession = { name: 'simulated', wuid: null, file: (big) => (big ? large : small) };
  const stamp = stamper();
  return async (events) => {
    const bodies = events.flatMap((e) => {
      const body = toEvolution(e, session, stamp());
      return body ? [JSON.stringify(body)] : [];
    });
    const answers = await postEach(url, target.key, bodies, () => ({}));
    const made = answers.flatMap((a) => (a.events ?? []) as { event: string; deliveries: number }[]);
    return { sent: made.map((e) => e.event), deliveries: made.reduce((n, e) => n + e.deliveries, 0) };
  };
}

/**
 * Each event stamped when it happens, a millisecond apart at least, as an engine's are: the instance shows the
 * session.status with the newest time, and a batch made in one millisecond would otherwise tie.
 */
function stamper(): () => number {
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return last;
  };
}

/** The bodies posted a few at a time, in order; their answers. */
async function postEach(
  url: URL,
  key: string,
  bodies: string[],
  headers: (raw: string) => Record<string, string>,
): Promise<Record<string, unknown>[]> {
  const answers: Record<string, unknown>[] = [];
  for (let i = 0; i < bodies.length; i += ENGINE_CONCURRENCY) {
    const chunk = bodies.slice(i, i + ENGINE_CONCURRENCY);
    answers.push(...(await Promise.all(chunk.map((raw) => post(url, key, raw, headers(raw))))));
  }
  return answers;
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
