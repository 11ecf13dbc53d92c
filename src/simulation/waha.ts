/**
 * The simulated activity as WAHA would send it to its webhook: each event in WAHA's envelope, payloads as WAHA's
 * engines write them (no from_phone, media as `{ url, mimetype, filename, error }` on WAHA's file server, the
 * session's own account in `me` once it works). Pure: the caller says where the file server is.
 */
import { newId } from '../domain/ids.ts';
import type { Obj, SimulatedEvent } from './session.ts';

/** Herald's own kinds, which no engine sends: message.unknown (the platform's send API), the older group shapes. */
const NOT_FROM_WAHA = new Set(['message.unknown', 'group.update', 'group.participants']);

export interface WahaSession {
  name: string;
  engine: 'WEBJS' | 'NOWEB' | 'GOWS';
  /** The session's own account, known once it is WORKING. */
  me: { id: string; pushName: string } | null;
  /** URL of a file on the engine's file server: `large` ones are bigger than any limit Herald would keep. */
  fileUrl: (name: string, large: boolean) => string;
}

/** The WAHA webhook body of one simulated event, or null for a kind WAHA never sends. */
export function toWaha(e: SimulatedEvent, session: WahaSession, now: number): Obj | null {
  if (NOT_FROM_WAHA.has(e.event)) return null;
  let payload = e.payload;
  if (e.event === 'session.status') {
    const { phone, ...rest } = payload;
    session.me = payload.status === 'WORKING' ? { id: `${phone}@c.us`, pushName: 'Herald demo' } : null;
    payload = rest;
  } else if (e.event === 'message' || e.event === 'message.any') {
    payload = engineMessage(payload, session);
  }
  return {
    id: newId('evt', now),
    timestamp: now,
    event: e.event,
    session: session.name,
    metadata: {},
    ...(session.me ? { me: session.me } : {}),
    payload,
    engine: session.engine,
    environment: { version: '2025.11.1', engine: session.engine, tier: 'CORE' },
  };
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'video/mp4': 'mp4',
  'application/pdf': 'pdf',
};

/** A message as the engine writes it: media where its file server has it, or why it has none. */
function engineMessage(payload: Obj, session: WahaSession): Obj {
  const { from_phone: _, media, ...message } = payload;
  if (!media) return message;
  const { status, mimetype } = media as Obj;
  const name = `${payload.id}.${EXTENSIONS[mimetype as string] ?? 'oga'}`;
  const at = (large: boolean) => ({
    url: session.fileUrl(name, large),
    mimetype,
    filename: null,
    error: null,
  });
  switch (status) {
    case 'unavailable':
      return { ...message, media: null };
    case 'failed':
      return {
        ...message,
        media: { url: null, mimetype, filename: null, error: { message: 'media download failed' } },
      };
    case 'too_large':
      return { ...message, media: at(true) };
    default:
      return { ...message, media: at(false) };
  }
}
