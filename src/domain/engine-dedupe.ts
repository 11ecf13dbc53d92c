/**
 * Which engine events report the same thing twice. Engines emit some messages twice (WAHA on WEBJS and NOWEB, each
 * time under a new envelope id), so an envelope id alone cannot tell a repeat: the thing reported can. Pure: the key
 * of a payload, or null when its kind is never a repeat (a session status, a presence, anything without a message id).
 *
 *   message, message.any and the other message kinds   the kind, the message id, and its time and text (a repeat
 *                                                      is the same message again, never another one that only
 *                                                      shares a placeholder id, as documentation examples do)
 *   message.ack, message.ack.group                     the message id and the ack value (each step is news)
 *   message.reaction                                   the message reacted to, who reacted, and the reaction
 *   message.revoked                                    the message revoked
 */
import { createHash } from 'node:crypto';
import { isObj } from './payload-rules.ts';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function dedupeKey(kind: string, payload: unknown): string | null {
  if (!isObj(payload)) return null;
  const id = str(payload.id);
  switch (kind) {
    case 'message.ack':
    case 'message.ack.group':
      return id && typeof payload.ack === 'number' ? `${kind}|${id}|${payload.ack}` : null;
    case 'message.reaction': {
      const r = isObj(payload.reaction) ? payload.reaction : null;
      const target = r && str(r.messageId);
      if (!r || !target || typeof r.text !== 'string') return null;
      const sender = str(payload.participant) ?? str(payload.from) ?? '';
      return `${kind}|${target}|${sender}|${r.text}`;
    }
    case 'message.revoked': {
      const before = isObj(payload.before) ? str(payload.before.id) : null;
      const after = isObj(payload.after) ? str(payload.after.id) : null;
      const revoked = str(payload.revokedMessageId) ?? before ?? after ?? id;
      return revoked ? `${kind}|${revoked}` : null;
    }
    default: {
      if (!kind.startsWith('message') || !id) return null;
      const content = JSON.stringify([payload.timestamp ?? null, payload.body ?? null]);
      return `${kind}|${id}|${createHash('sha256').update(content).digest('base64url').slice(0, 16)}`;
    }
  }
}
