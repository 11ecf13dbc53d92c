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

export function isGroup(jid: unknown): boolean {
  return typeof jid === 'string' && jid.endsWith('@g.us');
}
