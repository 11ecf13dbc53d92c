/**
 * Webhook health as Prometheus gauges: the `top` webhooks with the most attempts in the last 24 hours by name, the
 * others under webhook_id="other" (summed, or their latest time), so the series stay few however many webhooks
 * there are. One store read per scrape, shared by the gauges.
 */
import { Gauge, type Registry } from 'prom-client';
import type { WebhookHealth } from '../domain/health.ts';

const GAUGES: [
  name: string,
  help: string,
  field: keyof WebhookHealth,
  combine: 'sum' | 'max',
  scale: number,
][] = [
  [
    'herald_webhook_attempts_24h',
    'Attempts in the current hour and the 23 before it',
    'attempts_24h',
    'sum',
    1,
  ],
  ['herald_webhook_delivered_24h', 'Attempts answered 2xx in the same hours', 'delivered_24h', 'sum', 1],
  [
    'herald_webhook_consecutive_failures',
    'Failed attempts since the last delivery',
    'consecutive_failures',
    'sum',
    1,
  ],
  [
    'herald_webhook_last_delivered_timestamp_seconds',
    'When the last delivery was answered 2xx',
    'last_delivered_at',
    'max',
    1000,
  ],
  [
    'herald_webhook_last_failed_timestamp_seconds',
    'When the last attempt failed',
    'last_failed_at',
    'max',
    1000,
  ],
];

export function registerHealthGauges(
  registry: Registry,
  read: () => Promise<Map<string, WebhookHealth>>,
  top: number,
): void {
  let reading: Promise<[string, WebhookHealth][]> | null = null;
  const ranked = () => {
    reading ??= read()
      .then((all) => [...all.entries()].sort((a, b) => b[1].attempts_24h - a[1].attempts_24h))
      .finally(() => {
        reading = null;
      });
    return reading;
  };
  for (const [name, help, field, combine, scale] of GAUGES) {
    new Gauge({
      name,
      help: `${help}, per webhook (the ${top} busiest; the others as webhook_id="other")`,
      labelNames: ['webhook_id'],
      registers: [registry],
      async collect() {
        this.reset();
        const all = await ranked();
        const value = (h: WebhookHealth) => (h[field] ?? 0) / scale;
        for (const [id, h] of all.slice(0, top))
          if (h[field] !== null) this.set({ webhook_id: id }, value(h));
        const rest = all.slice(top).flatMap(([, h]) => (h[field] === null ? [] : [value(h)]));
        if (rest.length > 0) {
          this.set(
            { webhook_id: 'other' },
            combine === 'sum' ? rest.reduce((a, b) => a + b, 0) : Math.max(...rest),
          );
        }
      },
    });
  }
}
