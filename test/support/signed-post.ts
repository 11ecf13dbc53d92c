/** A delivery as Herald's attempt sends it, for tests of receivers: signed POST, timestamp `ageSeconds` old. */
import { HEADERS, signWith } from '../../src/domain/signature.ts';

export interface SignedPost {
  /** Several during a secret rotation, new first, as Herald signs then. */
  secret: string | string[];
  eventId: string;
  /** The bytes sent. */
  body: string;
  /** The bytes signed, when a test tampers with what is sent; the body otherwise. */
  signed?: string;
  ageSeconds?: number;
}

export function signedPost(url: string, p: SignedPost): Promise<Response> {
  const ts = String(Math.floor(Date.now() / 1000) - (p.ageSeconds ?? 0));
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [HEADERS.eventId]: p.eventId,
      [HEADERS.timestamp]: ts,
      [HEADERS.signature]: signWith([p.secret].flat(), ts, p.signed ?? p.body),
    },
    body: p.body,
  });
}
