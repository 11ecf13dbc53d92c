/** SPEC §8: a slow receiver never delays deliveries to other webhooks. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { assertGaps, type Hook, hook, publish } from './helpers.ts';

const TIMEOUT_MS = 3000;
/** Short enough that a healthy webhook's retry falls while the slow one's attempts are still hanging. */
const STEP_MS = 500;
/** How soon after its publish each healthy delivery must arrive. */
const PROMPT_MS = 500;

describe('isolation between webhooks', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
      RETRY_SCHEDULE: Array(5)
        .fill(STEP_MS / 1000)
        .join(','),
    });
  });
  after(() => h.close());

  /** A healthy webhook and one whose receiver hangs; `run` gets both, and both are closed after. */
  async function slowAndHealthy(run: (slow: Hook, healthy: Hook) => Promise<void>): Promise<void> {
    const slow = await hook(h);
    const healthy = await hook(h);
    slow.receiver.answer = () => 'hang';
    try {
      await run(slow, healthy);
    } finally {
      // Disabling ends the slow webhook's backlog, so that it does not load the next test.
      await h.request('POST', `/instances/${slow.instanceId}/webhooks/${slow.webhookId}/enabled`, {
        body: { enabled: false },
      });
      await slow.receiver.close();
      await healthy.receiver.close();
    }
  }

  /** Publishes `count` events to the instance in batches of at most 1000. */
  async function flood(instanceId: string, count: number): Promise<void> {
    for (let done = 0; done < count; done += 1000) {
      const events = Array.from({ length: Math.min(1000, count - done) }, () => ({
        event: 'message',
        payload: messagePayload(),
      }));
      const r = await h.request('POST', `/instances/${instanceId}/events/batch`, { body: { events } });
      assert.equal(r.status, 202, JSON.stringify(r.body));
    }
  }

  for (const slowCount of [100, 1000]) {
    test(`${slowCount} events to a hanging receiver do not delay 20 events to a healthy one`, (t) =>
      slowAndHealthy(async (slow, healthy) => {
        await flood(slow.instanceId, slowCount);
        await slow.receiver.waitFor(1);
        const publishedAt = new Map<string, number>();
        for (let i = 0; i < 20; i++) {
          const before = Date.now();
          publishedAt.set(await publish(h, healthy.instanceId), before);
        }
        const arrivals = await healthy.receiver.waitFor(20, 5000);
        const delays = arrivals.map((r) => r.at - (publishedAt.get(r.body.event_id) ?? Number.NaN));
        t.diagnostic(`healthy delays (ms): max ${Math.max(...delays)}, all ${delays.join(' ')}`);
        for (const d of delays) assert.ok(d >= 0 && d < PROMPT_MS, `a healthy delivery took ${d} ms`);
        const lastHealthy = Math.max(...arrivals.map((r) => r.at));
        assert.ok(
          lastHealthy < slow.receiver.received[0].at + TIMEOUT_MS,
          'the slow attempts were still hanging',
        );
        assert.ok(
          slow.receiver.received.length < slowCount,
          'the slow receiver was still holding deliveries',
        );
      }));
  }

  test("a healthy webhook's retry is on time while a slow one has a backlog", (t) =>
    slowAndHealthy(async (slow, healthy) => {
      healthy.receiver.answer = (_req, n) => ({ status: n === 0 ? 500 : 200 });
      await flood(slow.instanceId, 100);
      await slow.receiver.waitFor(1);
      await publish(h, healthy.instanceId);
      const [first, second] = await healthy.receiver.waitFor(2, 5000);
      t.diagnostic(`retry gap ${second.at - first.at} ms (step ${STEP_MS} ms)`);
      assertGaps([first, second], [STEP_MS], 300);
      assert.ok(
        second.at < slow.receiver.received[0].at + TIMEOUT_MS,
        'the slow attempts were still hanging',
      );
    }));
});
