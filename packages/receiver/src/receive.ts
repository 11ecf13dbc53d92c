/**
 * What every receiver does with one delivery, whatever its HTTP framework: verify the signature on the raw bytes,
 * parse the body, ignore an event_id already processed, hand the event to the receiver's code. The adapters
 * (adapters/*.ts) only read the raw body and write the answer this returns.
 */

import type { DedupeStore } from './dedupe.ts';
import { HEADERS } from './signature.ts';
import { type HeaderInput, type VerifyFailure, verify } from './verify.ts';

/** The delivery request body. */
export interface HeraldDelivery {
  event_id: string;
  event: string;
  instance_id: string;
  timestamp: number;
  payload: Record<string, unknown>;
}

export interface CheckOptions {
  /** The webhook's client_sign_secret. Without one, deliveries are accepted unverified: only for trying things. */
  secret?: string;
  /** Maximum |now - X-Service-Timestamp| in seconds; default 300. */
  toleranceSeconds?: number;
  now?: () => number;
}

export type Checked =
  | { ok: true; delivery: HeraldDelivery; eventId: string; verified: boolean }
  | { ok: false; status: 400 | 401; reason: VerifyFailure | 'malformed_body'; message: string };

/** Verifies (when there is a secret) and parses one delivery. Nothing is recorded yet. */
export function checkDelivery(options: CheckOptions, headers: HeaderInput, rawBody: Uint8Array): Checked {
  let verified = false;
  if (options.secret) {
    const result = verify({
      secret: options.secret,
      headers,
      rawBody,
      toleranceSeconds: options.toleranceSeconds,
      now: options.now,
    });
    if (!result.ok) return { ok: false, status: 401, reason: result.reason, message: result.message };
    verified = true;
  }
  let delivery: HeraldDelivery;
  try {
    delivery = JSON.parse(Buffer.from(rawBody).toString('utf8'));
  } catch {
    return { ok: false, status: 400, reason: 'malformed_body', message: 'the body is not JSON' };
  }
  if (typeof delivery !== 'object' || delivery === null || typeof delivery.event_id !== 'string') {
    return { ok: false, status: 400, reason: 'malformed_body', message: 'the body has no event_id' };
  }
  const header = headerValue(headers, HEADERS.eventId);
  // Signed or not, the header and the body must name the same event, or dedupe would key on the wrong one.
  if (header !== undefined && header !== delivery.event_id) {
    return {
      ok: false,
      status: 400,
      reason: 'malformed_body',
      message: 'X-Service-Event-Id differs from the body event_id',
    };
  }
  return { ok: true, delivery, eventId: delivery.event_id, verified };
}

export interface ReceiveOptions extends CheckOptions {
  /** Where processed event ids are remembered (MemoryDedupe, or a shared store of your own). */
  dedupe: DedupeStore;
  /** Your code. Called once per event_id; throwing makes the answer a 500 and Herald retries later. */
  onDelivery: (delivery: HeraldDelivery) => void | Promise<void>;
  /** Told when onDelivery throws; default console.error. The error's text is not sent back to Herald. */
  onError?: (err: unknown, delivery: HeraldDelivery) => void;
}

/** The answer an adapter writes back. */
export interface Receipt {
  status: number;
  body: Record<string, unknown>;
}

export async function receiveDelivery(
  options: ReceiveOptions,
  headers: HeaderInput,
  rawBody: Uint8Array,
): Promise<Receipt> {
  const checked = checkDelivery(options, headers, rawBody);
  if (!checked.ok)
    return { status: checked.status, body: { error: checked.reason, message: checked.message } };
  if (!(await options.dedupe.firstSeen(checked.eventId))) {
    return { status: 200, body: { received: true, duplicate: true } };
  }
  try {
    await options.onDelivery(checked.delivery);
  } catch (err) {
    await options.dedupe.forget(checked.eventId);
    (options.onError ?? ((e) => console.error('herald receiver: onDelivery failed:', e)))(
      err,
      checked.delivery,
    );
    return { status: 500, body: { error: 'handler_failed' } };
  }
  return { status: 200, body: { received: true, duplicate: false } };
}

function headerValue(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}
