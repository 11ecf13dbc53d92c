/**
 * WhatsApp chat ids (JIDs) as engines write them: `<digits>@c.us` (WEBJS), `<digits>@s.whatsapp.net` (NOWEB,
 * GOWS; sometimes with a `:<device>` suffix), `<id>@g.us` for groups, `<id>@lid` for users known only by a
 * hidden id, `<id>@newsletter` for channels, `status@broadcast` for stories.
 */

/** The chat id of status/story messages. */
export const STATUS_CHAT = 'status@broadcast';

const PHONE_JID = /^(\d{5,20})(?::\d+)?@(c\.us|s\.whatsapp\.net)$/;

/** The phone number (digits only) a JID names, or null for a group, a hidden (@lid) id, a channel or anything else. */
export function phoneOf(jid: unknown): string | null {
  if (typeof jid !== 'string') return null;
  return PHONE_JID.exec(jid)?.[1] ?? null;
}

const LID_JID = /^(\d{1,20})(?::\d+)?@lid$/;

/** A hidden id as `<id>@lid` (any device suffix dropped), or null for anything else. */
export function lidOf(jid: unknown): string | null {
  if (typeof jid !== 'string') return null;
  const id = LID_JID.exec(jid)?.[1];
  return id === undefined ? null : `${id}@lid`;
}

export function isGroup(jid: unknown): boolean {
  return typeof jid === 'string' && jid.endsWith('@g.us');
}

/** A broadcast chat: stories (`status@broadcast`) or a broadcast list. */
export function isBroadcast(jid: unknown): boolean {
  return typeof jid === 'string' && jid.endsWith('@broadcast');
}

/** Who sent a message: the chat (`from`) in a private chat, the `participant` in a group or a broadcast. */
export function senderOf(message: Record<string, unknown>): unknown {
  const from = message.from;
  return isGroup(from) || isBroadcast(from) ? message.participant : from;
}
