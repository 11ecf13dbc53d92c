/**
 * The event kinds of the catalog in the order the page shows them everywhere (the webhook form's picker, the
 * delivery log's Event filter): grouped by family, families in this order, kinds in the catalog's order within.
 */
import { EVENT_KINDS } from '../../domain/event-kinds.ts';

const FAMILIES: Record<string, string> = {
  session: 'Session',
  message: 'Messages',
  group: 'Groups',
  chat: 'Chats',
  call: 'Calls',
  label: 'Labels',
  poll: 'Polls',
  event: 'Event messages',
  presence: 'Presence',
  engine: 'Engine',
  webhook: "Herald's own (not part of *)",
  delivery: "Herald's own (not part of *)",
};
/** A kind of a family not named above still gets a group: the page never hides a kind the API takes. */
const OTHER = 'Other';

export interface EventFamily {
  title: string;
  kinds: string[];
}

export function eventFamilies(kinds: readonly string[] = EVENT_KINDS): EventFamily[] {
  const familyOf = (kind: string) => FAMILIES[kind.split('.')[0]] ?? OTHER;
  const titles = [...new Set([...Object.values(FAMILIES), OTHER])];
  return titles
    .map((title) => ({ title, kinds: kinds.filter((k) => familyOf(k) === title) }))
    .filter((f) => f.kinds.length > 0);
}
