/**
 * The rights table: the right every authenticated route needs (src/domain/rights.ts says who holds which), checked
 * in one place, the authentication hook, before a byte of the body is read. A route missing from the table cannot
 * be registered: the server refuses to start, so a new route is never open by mistake.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GRANTS, mayAct, type Right, ROLES, type Role, refusal } from '../domain/rights.ts';
import { HttpError } from './errors.ts';
import type { Principal } from './principal.ts';
import { rightsErrors } from './refusals.ts';

/**
 * "METHOD /path" as Fastify registers it → the right it needs. HEAD needs what GET needs. A few rows name routes
 * yet to come (sources, the Evolution engine, webhook stats), so that they are governed when they are added.
 */
// biome-ignore format: one route per line reads as the table it is
export const ROUTE_RIGHTS: Record<string, Right> = {
  'POST /instances':                                                  'manage_instances',
  'DELETE /instances/:instance_id':                                   'manage_instances',
  'POST /instances/:instance_id/keys':                                'manage_keys',
  'GET /instances/:instance_id/keys':                                 'manage_keys',
  'DELETE /instances/:instance_id/keys/:key_id':                      'manage_keys',
  'GET /metrics':                                                     'read_metrics',
  'POST /sources':                                                    'manage_sources',
  'GET /sources':                                                     'manage_sources',
  'GET /sources/:source_id':                                          'manage_sources',
  'PATCH /sources/:source_id':                                        'manage_sources',
  'DELETE /sources/:source_id':                                       'manage_sources',
  'GET /sources/:source_id/parked':                                   'manage_sources',
  'POST /instances/:instance_id/portal-links':                        'manage_portal_links',
  'GET /instances/:instance_id/portal-links':                         'manage_portal_links',
  'DELETE /instances/:instance_id/portal-links/:link_id':             'manage_portal_links',
  'GET /portal-link':                                                 'read_own_link',
  'GET /instances':                                                   'read_instance',
  'GET /instances/:instance_id':                                      'read_instance',
  'GET /openapi.json':                                                'read_instance',
  'PATCH /instances/:instance_id':                                    'change_instance',
  'POST /instances/:instance_id/events':                              'publish',
  'POST /instances/:instance_id/events/batch':                        'publish',
  'POST /instances/:instance_id/engine/waha':                         'publish',
  'POST /instances/:instance_id/engine/evolution':                    'publish',
  'POST /instances/:instance_id/engine/evolution/:event':             'publish',
  'POST /instances/:instance_id/media':                               'publish',
  'GET /instances/:instance_id/webhooks':                             'read_webhooks',
  'GET /instances/:instance_id/webhooks/:webhook_id':                 'read_webhooks',
  'GET /instances/:instance_id/webhooks/:webhook_id/stats':           'read_webhooks',
  'POST /instances/:instance_id/webhooks':                            'change_webhooks',
  'PATCH /instances/:instance_id/webhooks/:webhook_id':               'change_webhooks',
  'DELETE /instances/:instance_id/webhooks/:webhook_id':              'change_webhooks',
  'POST /instances/:instance_id/webhooks/:webhook_id/enabled':        'change_webhooks',
  'POST /instances/:instance_id/webhooks/:webhook_id/test':           'change_webhooks',
  'POST /instances/:instance_id/webhooks/:webhook_id/rotate-secret':  'change_webhooks',
  'GET /instances/:instance_id/deliveries':                           'read_deliveries',
  'GET /instances/:instance_id/deliveries/:delivery_id':              'read_deliveries',
  'POST /instances/:instance_id/deliveries/:delivery_id/redeliver':   'redeliver',
  'POST /instances/:instance_id/deliveries/redeliver':                'redeliver',
};

/** The right a route needs; undefined for a route the table does not know. */
function rightOf(method: string, url: string): Right | undefined {
  return ROUTE_RIGHTS[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}

export function roleOf(p: Principal): Role {
  if (p.kind === 'admin') return 'admin';
  if (p.kind === 'instance') return p.scope === 'publish' ? 'publish_key' : 'manage_key';
  return p.link.read_only ? 'read_only_link' : 'portal_link';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes anyone may call: health checks, signed media links and the UI's static files. */
    public?: boolean;
  }
}

/**
 * Refuses to register an authenticated route the table does not know. Installed before any route, so that every
 * one passes it (the docs' own /openapi.json included).
 */
export function installRightsTable(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (rightOf(method, route.url) === undefined) {
        throw new Error(
          `${method} ${route.url} needs an entry in the rights table (ROUTE_RIGHTS, src/api/rights.ts): ` +
            'say which right it needs, or mark it public',
        );
      }
    }
  });
}

/**
 * Whether the request's principal may call its route, on the instance of its path: a 403 naming the principal and
 * what it lacks. A request that matched no route needs no right (it is a 404).
 */
export function checkRights(request: FastifyRequest): void {
  const url = request.routeOptions.url;
  if (url === undefined) return;
  const right = rightOf(request.method, url);
  const role = roleOf(request.principal);
  // The table is complete (installRightsTable), so an unknown route here is a fault: refused, never let through.
  if (right === undefined) throw new HttpError('internal', 'internal error');
  if (!mayAct(role, right)) throw rightsErrors.refused(role, right);
  const p = request.principal;
  const { instance_id } = request.params as { instance_id?: unknown };
  if (p.kind !== 'admin' && typeof instance_id === 'string' && p.instance_id !== instance_id)
    throw rightsErrors.otherInstance(role);
}

/** A refusal's name in the error catalog: `publish_key_cannot_read_webhooks`. */
export type RefusalName = `${Role}_cannot_${Right}`;

const refusalName = (role: Role, right: Right): RefusalName => `${role}_cannot_${right}`;

/** Roles other than the admin that hold `right`: those whose key or link of another instance is refused. */
const scopedHolders = (right: Right) => GRANTS[right].filter((r) => r !== 'admin');

/** A refusal as the error catalog shows it (error-catalog.ts, ErrorCause). */
interface RefusalCause {
  status: 403;
  when: string;
  example: () => HttpError;
}

/** One catalog entry per refusal the table can give: who is refused what, and the message it gets. */
export function refusalCauses(): Record<RefusalName, RefusalCause> {
  const causes: Partial<Record<RefusalName, RefusalCause>> = {};
  for (const right of Object.keys(GRANTS) as Right[]) {
    for (const role of ROLES) {
      if (mayAct(role, right)) continue;
      causes[refusalName(role, right)] = {
        status: 403,
        when: refusal(role, right),
        example: () => rightsErrors.refused(role, right),
      };
    }
  }
  return causes as Record<RefusalName, RefusalCause>;
}

/** The refusals a route can give: one per role without its right, and another instance's credential. */
export function routeRefusals(method: string, url: string): (RefusalName | 'other_instance')[] {
  const right = rightOf(method, url);
  if (right === undefined) return [];
  const names: (RefusalName | 'other_instance')[] = ROLES.filter((role) => !mayAct(role, right)).map((r) =>
    refusalName(r, right),
  );
  if (url.includes(':instance_id') && scopedHolders(right).length > 0) names.push('other_instance');
  return names;
}
