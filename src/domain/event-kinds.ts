/**
 * The event kinds alone, without imports, so the session page can load the same catalog in the browser.
 * The core kinds first, then the further ones (groups, calls, labels, polls, presence), then the rest of what
 * WAHA's engines emit, so that a webhook can subscribe to anything a real engine sends; last Herald's own.
 */
// biome-ignore format: one family of kinds per line reads better than one kind per line
export const EVENT_KINDS: readonly string[] = Object.freeze([
  'session.status',
  'message', 'message.any', 'message.ack', 'message.reaction', 'message.edited', 'message.revoked', 'message.unknown',
  'group.join', 'group.leave', 'group.update', 'group.participants',
  'call.received', 'call.accepted', 'call.rejected',
  'label.upsert', 'label.deleted', 'label.chat.added', 'label.chat.deleted',
  'poll.vote', 'poll.vote.failed',
  'presence.update',
  'message.waiting', 'message.ack.group',
  'group.v2.join', 'group.v2.leave', 'group.v2.update', 'group.v2.participants',
  'chat.archive',
  'event.response', 'event.response.failed',
  'engine.event',
  'webhook.disabled', 'webhook.failing', 'webhook.recovered', 'delivery.failed',
]);

/**
 * Herald's own events about its deliveries (operational-events.ts): in the catalog so that a webhook can subscribe
 * to them by name, but sent by Herald alone, and never to a webhook by its `*`.
 */
export const OPERATIONAL_KINDS: readonly string[] = Object.freeze([
  'webhook.disabled',
  'webhook.failing',
  'webhook.recovered',
  'delivery.failed',
]);
