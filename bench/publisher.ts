/**
 * The session engine's side, in the bench process: sets up instances and webhooks through the API and publishes
 * events, in batches as fast as Herald acknowledges them, or one by one at a steady rate.
 */
import { Agent, request } from 'undici';
import { paced } from './drive.ts';
import { ADMIN_KEY } from './herald-process.ts';
import { messagePayload, SECRET, wallNow } from './payloads.ts';

export interface PublishedEvent {
  event: string;
  event_id: string;
  payload: Record<string, unknown>;
}

/** A prefix of event ids unique across runs (a PostgreSQL database outlives a run), known to the bench for latencies. */
let series = 0;
export const eventSeries = (): string => `evt_b${process.pid}x${Date.now().toString(36)}x${series++}x`;

export const messageEvent = (prefix: string, i: number): PublishedEvent => ({
  event: 'message',
  event_id: `${prefix}${i}`,
  payload: messagePayload(i),
});

export function messageEvents(count: number): PublishedEvent[] {
  const prefix = eventSeries();
  return Array.from({ length: count }, (_, i) => messageEvent(prefix, i));
}

export class Publisher {
  readonly #base: string;
  readonly #agent: Agent;

  constructor(base: string, connections = 128) {
    this.#base = base;
    this.#agent = new Agent({ keepAliveTimeout: 30_000, connections });
  }

  async #post(path: string, body: unknown, expected: number) {
    const res = await request(this.#base + path, {
      method: 'POST',
      dispatcher: this.#agent,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== expected) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }

  async createInstance(name: string): Promise<string> {
    return (await this.#post('/instances', { name }, 201)).instance_id;
  }

  /** An enabled, signed webhook subscribed to messages; `ordering` "chat" delivers each chat's events one at a time. */
  async createWebhook(instanceId: string, url: string, ordering?: 'none' | 'chat'): Promise<string> {
    const hooks = `/instances/${instanceId}/webhooks`;
    const body = {
      destination_url: url,
      events: ['message'],
      client_sign_secret: SECRET,
      ...(ordering ? { ordering } : {}),
    };
    const { webhook_id } = await this.#post(hooks, body, 201);
    await this.#post(`${hooks}/${webhook_id}/enabled`, { enabled: true }, 200);
    return webhook_id;
  }

  /** Deletes the instance with its webhooks and deliveries (a PostgreSQL database is kept between runs). */
  async deleteInstance(instanceId: string): Promise<void> {
    const res = await request(`${this.#base}/instances/${instanceId}`, {
      method: 'DELETE',
      dispatcher: this.#agent,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    await res.body.dump();
  }

  /** One POST …/events/batch; `body` is its JSON, `{ events: [...] }`. */
  async publishBatch(instanceId: string, body: string): Promise<void> {
    await this.#post(`/instances/${instanceId}/events/batch`, body, 202);
  }

  /**
   * Publishes `events` through POST …/events/batch, `inFlight` batches at a time; `onAck` counts acknowledged
   * events, `onBatch` each batch's send and acknowledgement times (`wallNow`). Bodies are serialised before the clock
   * starts: only Herald's work is timed, not the publisher's.
   */
  async publishBatches(
    instanceId: string,
    events: PublishedEvent[],
    o: {
      batch: number;
      inFlight: number;
      onAck?: (n: number) => void;
      onBatch?: (index: number, sentAt: number, ackedAt: number) => void;
    },
  ): Promise<{ startedAt: number; ackedAt: number }> {
    const bodies: { body: string; n: number }[] = [];
    for (let i = 0; i < events.length; i += o.batch) {
      const slice = events.slice(i, i + o.batch);
      bodies.push({ body: JSON.stringify({ events: slice }), n: slice.length });
    }
    let next = 0;
    const startedAt = wallNow();
    const worker = async () => {
      while (next < bodies.length) {
        const index = next++;
        const { body, n } = bodies[index];
        const sentAt = o.onBatch ? wallNow() : 0;
        await this.publishBatch(instanceId, body);
        o.onBatch?.(index, sentAt, wallNow());
        o.onAck?.(n);
      }
    };
    await Promise.all(Array.from({ length: o.inFlight }, worker));
    return { startedAt, ackedAt: wallNow() };
  }

  /** One event, one request (POST …/events), as an engine's webhook sends it; `body` is its JSON. */
  async publish(instanceId: string, body: string): Promise<void> {
    await this.#post(`/instances/${instanceId}/events`, body, 202);
  }

  /** One WAHA webhook body to the engine endpoint (POST …/engine/waha), as WAHA sends it; `body` is its JSON. */
  async publishToEngine(instanceId: string, body: string): Promise<void> {
    await this.#post(`/instances/${instanceId}/engine/waha`, body, 202);
  }

  /**
   * Publishes `events` one request each at `perSecond`, on schedule whatever the answers take; returns each event
   * id's publish time (taken just before its request is sent) and how long its 202 took.
   */
  async publishPaced(
    instanceId: string,
    events: PublishedEvent[],
    perSecond: number,
    onSent?: (n: number) => void,
  ): Promise<{ sentAt: Map<string, number>; acked: number[] }> {
    const bodies = events.map((e) => JSON.stringify(e));
    const driven = await paced(events.length, perSecond, (i) => this.publish(instanceId, bodies[i]), onSent);
    return { sentAt: new Map(events.map((e, i) => [e.event_id, driven.sentAt[i]])), acked: driven.ackMs };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
