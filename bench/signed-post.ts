/**
 * Herald's delivery request as the baselines send it (the raw loop, the BullMQ worker): the same headers, signed
 * per request with the same function as Herald's sender (src/domain/signature.ts), on an undici Agent configured
 * as Herald's sender configures its own. Herald itself is never measured through this file.
 */
import { Agent, request } from 'undici';
import { HEADERS, sign } from '../src/domain/signature.ts';
import { SECRET } from './payloads.ts';

/** Connections per origin: the same 64 as Herald's HTTP provider keeps (src/net/destinations/http.ts) and its per-webhook cap. */
export const DELIVERY_CONNECTIONS = 64;

export const deliveryAgent = (): Agent =>
  new Agent({ keepAliveTimeout: 30_000, connections: DELIVERY_CONNECTIONS });

/** POSTs `body` to `url` signed as Herald signs an attempt; resolves to the status code, the answer read. */
export async function signedPost(agent: Agent, url: string, eventId: string, body: string): Promise<number> {
  // The timestamp is part of the signed payload: signed per request, as each of Herald's attempts is.
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Herald/bench',
    [HEADERS.eventId]: eventId,
    [HEADERS.timestamp]: timestamp,
    [HEADERS.signature]: sign(SECRET, timestamp, body),
  };
  const res = await request(url, { method: 'POST', dispatcher: agent, headers, body });
  await res.body.dump();
  return res.statusCode;
}
