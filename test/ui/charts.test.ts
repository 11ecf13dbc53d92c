/**
 * The webhooks' charts in real Chromium, on the session page and in a read-only portal link, at 1280 and 390 px.
 * Attempts are placed in known hours by moving Herald's clock (test/api/webhook-stats.test.ts does the same): one
 * webhook delivers, one retry included; the other always fails. Each card must show drawn charts (its bars' colours
 * on the canvas) and a screen reader's table whose numbers are the stats endpoint's, its health line in deliveries,
 * every request on Herald's own origin (the charting library included) and no sideways scroll.
 */
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  ADMIN_KEY,
  eventually,
  messagePayload,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import { HourClock, hourFromNow } from '../support/hour-clock.ts';
import { TestReceiver } from '../support/receiver.ts';
import { assertNoSidewaysScroll, launch, missingChromium, openPage, screenshot, signIn } from './browser.ts';

/** Four hours A…D (A = 0), D the present one. */
const clock = new HourClock(hourFromNow(-3));

const SCREENSHOTS = resolve(import.meta.dirname, '../../test-output/screenshots');

/** The page's colours for delivered and failed (base.css --good, --bad). */
const GOOD = [0x12, 0x7a, 0x4a];
const BAD = [0xb4, 0x23, 0x18];

describe('webhook charts', { skip: missingChromium() ?? false }, () => {
  let h: TestHerald;
  let good: TestReceiver;
  let bad: TestReceiver;
  let browser: Browser;
  let ins = '';
  let steady = '';
  let failing = '';
  let quiet = '';

  const moveTo = (hour: number) => clock.at(hour, () => h?.herald.dispatcher.wake());
  /** Waits until the instance's log holds `n` attempts in all. */
  const logged = (n: number) =>
    eventually(async () => {
      const r = await h.request('GET', `/instances/${ins}/deliveries?limit=200`);
      const total = r.body.deliveries.reduce((sum: number, d: any) => sum + d.attempt_count, 0);
      return total === n ? true : undefined;
    }, 15_000);
  const publish = (body: string) => h.publish(ins, { event: 'message', payload: messagePayload({ body }) });

  before(async () => {
    moveTo(0);
    h = await startTestHerald({ RETRY_SCHEDULE: '600,600' }, { clock: clock.now });
    [good, bad] = await Promise.all([TestReceiver.start(), TestReceiver.start()]);
    const tries = new Map<string, number>();
    good.answer = (req) => {
      const body = req.body.payload.body as string;
      tries.set(body, (tries.get(body) ?? 0) + 1);
      return body === 'flaky' && tries.get(body) === 1 ? { status: 503 } : { status: 200, delayMs: 30 };
    };
    bad.answer = () => ({ status: 503, delayMs: 10 });
    ins = await h.createInstance('Charts line');
    steady = await h.createWebhook(ins, { destination_url: good.url, events: ['message'] });
    failing = await h.createWebhook(ins, { destination_url: bad.url, events: ['message'] });
    quiet = await h.createWebhook(ins, { destination_url: good.url, events: ['message.ack'] });
    await publish('first'); // A: delivered; failing #1
    await logged(2);
    moveTo(1);
    await publish('flaky'); // B: failing first #2; flaky fails once, failing flaky #1
    await logged(5);
    moveTo(2);
    await logged(8); // C: flaky delivered; failing first #3 (failed for good), flaky #2
    moveTo(3);
    await publish('last'); // D: failing flaky #3 (failed for good); last delivered; failing last #1
    await logged(11);
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await Promise.all([good?.close(), bad?.close()]);
    await h?.close();
  });

  /** What the page must show for one webhook's card, checked against the stats endpoint. */
  async function checkCard(page: Page, webhookId: string, health: string) {
    const card = page.locator(`article.webhook[data-webhook-id="${webhookId}"]`);
    await card.getByLabel('Health').getByText(health).waitFor();
    const charts = card.locator('.webhook-charts[data-drawn="charts"]');
    await charts.waitFor({ state: 'attached' });
    await charts.locator('canvas').first().waitFor();
    const stats = (await h.request('GET', `/instances/${ins}/webhooks/${webhookId}/stats?hours=24`)).body
      .buckets as any[];
    const rows = await charts
      .locator('table tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          (tr as HTMLElement).dataset.start,
          ...[...tr.querySelectorAll('td')].map((td) => td.textContent),
        ]),
      );
    const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
    assert.deepEqual(
      rows,
      stats.map((b) => [
        b.start,
        String(b.delivered),
        String(b.failed),
        String(b.retried_attempts),
        ms(b.p50_ms),
        ms(b.p95_ms),
      ]),
      'the screen reader’s table says what the stats endpoint says',
    );
    assert.equal(
      await charts.locator('table caption').innerText(),
      'Deliveries per hour in the last 24 hours, oldest first',
    );
    assert.equal(await charts.locator('.chart-grid').getAttribute('aria-hidden'), 'true');
    return { card, stats, colours: await colours(charts) };
  }

  /** How many pixels of each bar colour the card's canvases hold, and in which quarter of the width they lie. */
  async function colours(charts: Locator) {
    return charts.locator('canvas').evaluateAll(
      (canvases, [good, bad]) => {
        const near = (d: Uint8ClampedArray, i: number, c: number[]) =>
          Math.abs(d[i] - c[0]) < 12 && Math.abs(d[i + 1] - c[1]) < 12 && Math.abs(d[i + 2] - c[2]) < 12;
        const count = { good: 0, bad: 0, goodRightmost: 0, drawn: 0 };
        for (const canvas of canvases as HTMLCanvasElement[]) {
          const { width, height } = canvas;
          const data = canvas.getContext('2d')?.getImageData(0, 0, width, height).data;
          if (!data) continue;
          for (let i = 0; i < data.length; i += 4) {
            if (data[i + 3] > 0) count.drawn++;
            if (near(data, i, good)) {
              count.good++;
              count.goodRightmost = Math.max(count.goodRightmost, ((i / 4) % width) / width);
            }
            if (near(data, i, bad)) count.bad++;
          }
        }
        return count;
      },
      [GOOD, BAD],
    );
  }

  for (const width of [1280, 390]) {
    for (const where of ['session page', 'portal link'] as const) {
      it(`${where} at ${width} px: a drawn chart per webhook, its numbers the endpoint's, a table for screen readers`, async () => {
        const page = await openPage(browser, width);
        const requested: string[] = [];
        page.on('request', (r) => requested.push(r.url()));
        if (where === 'session page') {
          await signIn(page, h.url, ADMIN_KEY, `/ui/instances/${ins}`);
        } else {
          const link = await h.request('POST', `/instances/${ins}/portal-links`, {
            body: { read_only: true },
          });
          assert.equal(link.status, 201, JSON.stringify(link.body));
          await page.goto(link.body.url);
        }
        const s = await checkCard(
          page,
          steady,
          '3 of 3 delivered in 24 h; 1 of 4 attempts failed and was retried',
        );
        const f = await checkCard(
          page,
          failing,
          '0 of 2 delivered in 24 h; 4 of 7 attempts failed and were retried',
        );
        await s.card.scrollIntoViewIfNeeded();
        const name = `charts-${where.replace(' ', '-')}-${width}`;
        await screenshot(page, name);
        // The cards alone, at full size, for a person to look at the charts closely.
        await s.card.screenshot({ path: join(SCREENSHOTS, `${name}-card.png`) });
        await f.card.screenshot({ path: join(SCREENSHOTS, `${name}-failing-card.png`) });
        // A webhook with nothing in 24 hours draws no empty charts: its health line says it in words.
        const still = page.locator(`article.webhook[data-webhook-id="${quiet}"]`);
        await still.getByLabel('Health').getByText('No deliveries ended in the last 24 h').waitFor();
        await still.locator('.webhook-charts[data-drawn="empty"]').waitFor({ state: 'hidden' });
        // What the endpoint says of the four hours, hour by hour: [delivered, failed, retried].
        const hours = (stats: any[]) =>
          stats.slice(-4).map((b) => [b.delivered, b.failed, b.retried_attempts]);
        assert.deepEqual(hours(s.stats), [
          [1, 0, 0],
          [0, 0, 1],
          [1, 0, 0],
          [1, 0, 0],
        ]);
        assert.deepEqual(hours(f.stats), [
          [0, 0, 1],
          [0, 0, 2],
          [0, 1, 1],
          // "last" failed at its first attempt, whose retry is not made yet.
          [0, 1, 0],
        ]);
        assert.ok(s.colours.good > 50, `delivered bars drawn: ${JSON.stringify(s.colours)}`);
        assert.equal(s.colours.bad, 0, 'nothing failed, so no red');
        assert.ok(s.colours.goodRightmost > 0.85, 'the last bar is the present hour, at the right');
        assert.ok(f.colours.bad > 50, `failed bars drawn: ${JSON.stringify(f.colours)}`);
        assert.equal(f.colours.good, 0, 'nothing delivered, so no green');

        await s.card.scrollIntoViewIfNeeded();
        await assertNoSidewaysScroll(page);
        // A phone's browser widens its layout to fit what is too wide: the document must stay the screen's width.
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), width);
        const canvasWidth = await s.card
          .locator('canvas')
          .first()
          .evaluate((c) => c.getBoundingClientRect().width);
        assert.ok(canvasWidth <= width - 32, `a chart fits the screen (${canvasWidth} px)`);
        const origin = new URL(h.url).origin;
        assert.deepEqual(
          requested.filter((u) => new URL(u).origin !== origin),
          [],
          'no request leaves Herald',
        );
        assert.ok(
          requested.some((u) => u.endsWith('/src/vendor/uplot/uPlot.esm.js')),
          'the charting library comes from Herald',
        );
        await page.close();
      });
    }
  }
});
