/** Who makes a request, as authentication found it (auth.ts): the admin, an instance's key, or a portal link. */
import type { KeyScope, PortalLink } from '../store/records.ts';

export type Principal =
  | { kind: 'admin' }
  | { kind: 'instance'; instance_id: string; key_id: string; scope: KeyScope }
  | { kind: 'portal'; instance_id: string; link: PortalLink };
