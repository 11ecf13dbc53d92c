/** Set-up shared by the tests that run Herald as a child process: an instance, a webhook, the whole delivery log. */
import assert from 'node:assert/strict';
import type { ChildHerald } from './spawn.ts';

/** Creates an instance with one enabled webhook (all kinds by default) to `destinationUrl`. */
export async function instanceWithWebhook(
  herald: ChildHerald,
  destinationUrl: string,
  events: string[] = ['message'],
): Promise<{ instanceId: string; webhookId: string }> {
  const ins = await herald.request('POST', '/instances', { name: 'child' });
  assert.equal(ins.status, 201, JSON.stringify(ins.body));
  const instanceId = ins.body.instance_id as string;
  const base = `/instances/${instanceId}/webhooks`;
  const w = await herald.request('POST', base, { destination_url: destinationUrl, events });
  assert.equal(w.status, 201, JSON.stringify(w.body));
  const webhookId = w.body.webhook_id as string;
  const on = await herald.request('POST', `${base}/${webhookId}/enabled`, { enabled: true });
  assert.equal(on.status, 200, JSON.stringify(on.body));
  return { instanceId, webhookId };
}

/** Every delivery of the instance, newest first, walking the log's pages (`query` adds filters). */
export async function allDeliveries(herald: ChildHerald, instanceId: string, query = ''): Promise<any[]> {
  const all: any[] = [];
  let cursor = '';
  for (;;) {
    const res = await herald.request('GET', `/instances/${instanceId}/deliveries?limit=200${query}${cursor}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    all.push(...res.body.deliveries);
    if (!res.body.next_cursor) return all;
    cursor = `&cursor=${res.body.next_cursor}`;
  }
}
