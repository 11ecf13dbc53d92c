/** Store records for tests that talk to a store directly: a valid webhook whose fields a test overrides. */
import type { Webhook } from '../../src/domain/types.ts';

/** An enabled webhook for every kind, unsigned, created and updated at `at`. */
export function webhookRecord(
  over: Pick<Webhook, 'webhook_id' | 'instance_id'> & Partial<Webhook>,
  at: number,
): Webhook {
  return {
    destination_url: 'https://example.com/hook',
    events: ['*'],
    ignore_status: true,
    enabled: true,
    secret_sealed: null,
    disabled_reason: null,
    disabled_at: null,
    created_at: at,
    updated_at: at,
    ...over,
  };
}
