/**
 * Who may do what: the principals an API call can come from, the rights an operation needs, and the words of a
 * refusal. Pure rules; src/api/rights.ts says which right each route needs and applies them to every request.
 * Every principal but the admin is untrusted (instance keys and portal links go to a platform's customers), so what
 * one may reach is exactly what GRANTS lists.
 */

/** What a credential is, as far as rights go. */
export type Role = 'admin' | 'manage_key' | 'publish_key' | 'portal_link' | 'read_only_link';

export const ROLES: readonly Role[] = ['admin', 'manage_key', 'publish_key', 'portal_link', 'read_only_link'];

/** What an operation needs. */
export type Right =
  | 'manage_instances'
  | 'manage_keys'
  | 'read_metrics'
  | 'manage_sources'
  | 'manage_portal_links'
  | 'read_instance'
  | 'change_instance'
  | 'publish'
  | 'read_webhooks'
  | 'change_webhooks'
  | 'read_deliveries'
  | 'redeliver'
  | 'read_own_link';

const ALL: readonly Role[] = ROLES;
const KEYS: readonly Role[] = ['admin', 'manage_key'];
const NOT_PUBLISH: readonly Role[] = ['admin', 'manage_key', 'portal_link', 'read_only_link'];
const WRITERS: readonly Role[] = ['admin', 'manage_key', 'portal_link'];

/** The roles each right is granted to; anyone else is refused with a 403. */
// biome-ignore format: one right per line reads as the table it is
export const GRANTS: Record<Right, readonly Role[]> = {
  manage_instances:    ['admin'],
  manage_keys:         ['admin'],
  read_metrics:        ['admin'],
  manage_sources:      ['admin'],
  manage_portal_links: KEYS,
  read_instance:       ALL,
  change_instance:     KEYS,
  publish:             ['admin', 'manage_key', 'publish_key'],
  read_webhooks:       NOT_PUBLISH,
  change_webhooks:     WRITERS,
  read_deliveries:     NOT_PUBLISH,
  redeliver:           WRITERS,
  read_own_link:       ['portal_link', 'read_only_link'],
};

export const mayAct = (role: Role, right: Right): boolean => GRANTS[right].includes(role);

/**
 * The fields of an instance a manage key may change: its name. The others (engine_hmac_key, engine_media_prefix)
 * decide what Herald trusts and fetches, so they are the admin's; a field added later is the admin's too.
 */
export const MANAGE_KEY_INSTANCE_FIELDS: readonly string[] = ['name'];

/** The first field of `body` that `role` may not change on its instance; null when nothing is refused. */
export function refusedInstanceField(role: Role, body: object): string | null {
  if (role === 'admin') return null;
  return Object.keys(body).find((field) => !MANAGE_KEY_INSTANCE_FIELDS.includes(field)) ?? null;
}

/** The admin sees every instance's operator deliveries (the operator's own destination); no one else does. */
export const seesOperatorDeliveries = (role: Role): boolean => role === 'admin';

export const ROLE_NAMES: Record<Role, string> = {
  admin: 'the admin key',
  manage_key: 'a manage key',
  publish_key: 'a publish key',
  portal_link: 'a portal link',
  read_only_link: 'a read-only portal link',
};

// biome-ignore format: one right per line reads as the table it is
const ACTIONS: Record<Right, string> = {
  manage_instances:    'create or delete instances',
  manage_keys:         'manage instance keys',
  read_metrics:        'read /metrics',
  manage_sources:      'manage sources',
  manage_portal_links: 'manage portal links',
  read_instance:       'read its instance',
  change_instance:     'change the instance',
  publish:             'publish events',
  read_webhooks:       'read webhooks',
  change_webhooks:     'change webhooks',
  read_deliveries:     'read the delivery log',
  redeliver:           'redeliver',
  read_own_link:       "read a portal link's own facts",
};

/** What each role may do instead, said after a refusal so that the caller knows which credential to use. */
const WHAT_IT_MAY: Record<Role, string> = {
  admin: 'it may do everything else',
  manage_key: 'it acts on its own instance, without the admin operations',
  publish_key: 'it may only publish events and read its instance',
  portal_link: "it manages its instance's webhooks and reads its delivery log",
  read_only_link: 'it is read-only and may only read',
};

/** Why `role` is refused `right`, in words: the principal, what it lacks, and what would do. */
export function refusal(role: Role, right: Right): string {
  const why =
    right === 'read_own_link'
      ? "call it with a portal link's token"
      : GRANTS[right].length === 1 && GRANTS[right][0] === 'admin'
        ? 'this needs the admin key'
        : WHAT_IT_MAY[role];
  return `${ROLE_NAMES[role]} cannot ${ACTIONS[right]}: ${why}`;
}

/** Why a non-admin principal may not change an admin-only field of the instance. */
export const fieldRefusal = (role: Role, field: string): string =>
  `${ROLE_NAMES[role]} cannot change ${field}: only the admin key may`;

/** The words for a credential of another instance. */
export const otherInstanceRefusal = (role: Role): string =>
  `${ROLE_NAMES[role]} of another instance cannot act on this one`;
