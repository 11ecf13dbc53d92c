/**
 * Webhook health as Prometheus gauges, for the whole fleet and without a webhook_id label: with thousands of
 * webhooks a series per webhook is thousands of series, and naming only the busiest few made series come and go as
 * the ranking changed while the webhook in trouble, often a quiet one, hid in "other". So /metrics says how many
 * webhooks are failing and how badly (for an alert), and which ones it is, with their hours, is the API's to tell
 * (each webhook's health and stats, and the webhook.failing operational event). One store read per scrape, shared.
 */
import { Gauge, type Registry } from 'prom-client';
import type { WebhookHealth } from '../domain/health.ts';

type Fleet = readonly WebhookHealth[];

const sum = (all: Fleet, field: keyof WebhookHealth) => all.reduce((n, h) => n + Number(h[field] ?? 0), 0);

const GAUGES: [name: string, help: string, value: (all: Fleet) => number][] = [
  [
    'herald_webhooks_failing',
    'Webhooks whose last attempt failed (one failure or more since their last delivery)',
    (all) => all.filter((h) => h.consecutive_failures > 0).length,
  ],
  [
    'herald_webhook_consecutive_failures_max',
    'The longest run of failed attempts since a delivery, of any webhook',
    (all) => all.reduce((n, h) => Math.max(n, h.consecutive_failures), 0),
  ],
  [
    'herald_webhook_attempts_24h',
    'Attempts that started in the current hour and the 23 before it, all webhooks together',
    (all) => sum(all, 'attempts_24h'),
  ],
  [
    'herald_webhook_retried_attempts_24h',
    'Attempts of the same hours that failed and were retried, all webhooks together',
    (all) => sum(all, 'retried_24h'),
  ],
];

export function registerHealthGauges(
  registry: Registry,
  read: () => Promise<Map<string, WebhookHealth>>,
): void {
  let reading: Promise<Fleet> | null = null;
  const fleet = () => {
    reading ??= read()
      .then((all) => [...all.values()])
      .finally(() => {
        reading = null;
      });
    return reading;
  };
  for (const [name, help, value] of GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(value(await fleet()));
      },
    });
  }
  new Gauge({
    name: 'herald_webhook_deliveries_24h',
    help: 'Deliveries that ended in the current hour and the 23 before it, all webhooks together, by outcome: delivered or failed',
    labelNames: ['outcome'],
    registers: [registry],
    async collect() {
      const all = await fleet();
      this.set({ outcome: 'delivered' }, sum(all, 'delivered_24h'));
      this.set({ outcome: 'failed' }, sum(all, 'failed_24h'));
    },
  });
}
