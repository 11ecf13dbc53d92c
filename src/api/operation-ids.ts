/**
 * Each operation's `operationId` in /openapi.json, in one table: the names generated clients give their methods
 * (createWebhook, listDeliveries, …), so they are chosen once, here, as camelCase verb + noun, and never change
 * once published. docs.ts gives every documented route its name from here; a route missing from the table stops
 * the server from starting, naming the route, so a new route cannot ship without one. A few rows name routes yet to
 * come (sources, the Evolution engine, webhook stats), so that their names are settled when they are added.
 */

// biome-ignore format: one operation per line reads as a table
export const OPERATION_IDS: Record<string, string> = {
  'GET /healthz': 'checkLiveness',
  'GET /readyz': 'checkReadiness',
  'GET /metrics': 'getMetrics',
  'POST /instances': 'createInstance',
  'GET /instances': 'listInstances',
  'GET /instances/{instance_id}': 'getInstance',
  'PATCH /instances/{instance_id}': 'updateInstance',
  'DELETE /instances/{instance_id}': 'deleteInstance',
  'POST /instances/{instance_id}/keys': 'createInstanceKey',
  'GET /instances/{instance_id}/keys': 'listInstanceKeys',
  'DELETE /instances/{instance_id}/keys/{key_id}': 'revokeInstanceKey',
  'GET /instances/{instance_id}/webhooks': 'listWebhooks',
  'POST /instances/{instance_id}/webhooks': 'createWebhook',
  'GET /instances/{instance_id}/webhooks/{webhook_id}': 'getWebhook',
  'PATCH /instances/{instance_id}/webhooks/{webhook_id}': 'updateWebhook',
  'DELETE /instances/{instance_id}/webhooks/{webhook_id}': 'deleteWebhook',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/enabled': 'setWebhookEnabled',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test': 'sendTestEvent',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/rotate-secret': 'rotateWebhookSecret',
  'GET /instances/{instance_id}/webhooks/{webhook_id}/stats': 'getWebhookStats',
  'POST /instances/{instance_id}/events': 'publishEvent',
  'POST /instances/{instance_id}/events/batch': 'publishEventBatch',
  'POST /instances/{instance_id}/engine/waha': 'receiveWahaEvent',
  'POST /instances/{instance_id}/engine/evolution': 'receiveEvolutionEvent',
  'POST /instances/{instance_id}/engine/evolution/{event}': 'receiveEvolutionEventByPath',
  'GET /instances/{instance_id}/deliveries': 'listDeliveries',
  'GET /instances/{instance_id}/deliveries/{delivery_id}': 'getDelivery',
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver': 'redeliverDelivery',
  'POST /instances/{instance_id}/deliveries/redeliver': 'redeliverFailedDeliveries',
  'POST /instances/{instance_id}/media': 'uploadMedia',
  'GET /media/{media_id}': 'downloadMedia',
  'POST /instances/{instance_id}/portal-links': 'createPortalLink',
  'GET /instances/{instance_id}/portal-links': 'listPortalLinks',
  'DELETE /instances/{instance_id}/portal-links/{link_id}': 'revokePortalLink',
  'GET /portal-link': 'getPortalLink',
  'POST /sources': 'createSource',
  'GET /sources': 'listSources',
  'GET /sources/{source_id}': 'getSource',
  'PATCH /sources/{source_id}': 'updateSource',
  'DELETE /sources/{source_id}': 'deleteSource',
  'GET /sources/{source_id}/parked': 'listParkedMessages',
};

/** The operationId of `METHOD /openapi/{path}`; throws for a route the table does not name. */
export function operationId(method: string, path: string): string {
  const id = OPERATION_IDS[`${method} ${path}`];
  if (id === undefined) {
    throw new Error(
      `${method} ${path} has no operationId: add one to OPERATION_IDS in src/api/operation-ids.ts ` +
        '(camelCase verb + noun, e.g. createWebhook)',
    );
  }
  return id;
}
