/**
 * The event kinds alone, without imports, so the session page can load the same catalog in the browser.
 */
/** SPEC §7's catalog, in its order (the seed's kinds first, then the further ones the SPEC names). */
// biome-ignore format: one family of kinds per line reads better than one kind per line
export const EVENT_KINDS: readonly string[] = Object.freeze([
  'session.status',
  'message', 'message.any', 'message.ack', 'message.reaction', 'message.edited', 'message.revoked', 'message.unknown',
  'group.join', 'group.leave', 'group.update', 'group.participants',
  'call.received', 'call.accepted', 'call.rejected',
  'label.upsert', 'label.deleted', 'label.chat.added', 'label.chat.deleted',
  'poll.vote', 'poll.vote.failed',
  'presence.update',
]);
