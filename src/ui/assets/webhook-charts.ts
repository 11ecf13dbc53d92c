/**
 * A webhook's last 24 hours as charts, on its card: per hour, the deliveries that ended delivered and failed with
 * the failed attempts that were retried, and the answer time (p50, p95), from the stats endpoint. Drawn by uPlot,
 * served by Herald itself (/src/vendor/uplot/) and loaded when the first card needs it. A table of the same numbers
 * is there for screen readers (visually hidden), so the charts are images to them (aria-hidden).
 */
import type uPlot from 'uplot';
import { api, type StatsBucket, type Webhook } from './api.ts';
import { fill, h } from './dom.ts';

type UPlot = typeof uPlot;

/** A variable, so that TypeScript leaves the URL alone (it is the browser's to resolve, not a module of src/). */
const UPLOT_URL = '/src/vendor/uplot/uPlot.esm.js';
let loading: Promise<UPlot> | null = null;
const loadUPlot = (): Promise<UPlot> => {
  loading ??= import(UPLOT_URL).then((m: { default: UPlot }) => m.default);
  return loading;
};

/** Stats are read again when the health changed, but at most this often, and at least once a minute. */
const MIN_REFRESH_MS = 10_000;
const MAX_AGE_MS = 60_000;
const HEIGHT = 150;

const hourFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
/** An axis label: the hour alone ("3 PM", "15 Uhr"), short enough for a phone's width. */
const axisFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric' });
const hourLabel = (iso: string) => hourFormat.format(new Date(iso));
const color = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);

export interface WebhookCharts {
  el: HTMLElement;
  /** The webhook as the last poll read it: its charts are redrawn when its health moved. */
  update(w: Webhook): void;
}

export function webhookCharts(instanceId: string, webhookId: string): WebhookCharts {
  const deliveries = chartBox('Deliveries per hour', [
    ['Delivered', 'good bar'],
    ['Failed', 'bad bar'],
    ['Retried attempts', 'warn line'],
  ]);
  const times = chartBox('Answer time', [
    ['p50', 'accent line'],
    ['p95', 'accent dash'],
  ]);
  const table = h('table', {});
  // Hidden until there is something to draw: for a quiet webhook the health line says so, in words.
  const el = h(
    'section',
    { class: 'webhook-charts', 'aria-label': 'Last 24 hours', hidden: true },
    h('div', { class: 'chart-grid', 'aria-hidden': 'true' }, deliveries.el, times.el),
    // A table is never narrower than its text: hidden in a box of its own, or a phone would zoom out to fit it.
    h('div', { class: 'visually-hidden' }, table),
  );
  let plots: uPlot[] = [];
  let health = '';
  let readAt = 0;
  let reading = false;

  async function read() {
    reading = true;
    readAt = Date.now();
    try {
      const buckets = await api.webhookStats(instanceId, webhookId);
      fill(table, ...statsTable(buckets));
      const quiet = buckets.every(
        (b) => b.delivered + b.failed + b.retried_attempts === 0 && b.p50_ms === null,
      );
      el.dataset.drawn = quiet ? 'empty' : 'charts';
      el.hidden = quiet;
      if (!quiet) await draw(buckets);
    } catch {
      // The card's health line still tells; the next poll tries again.
      readAt = 0;
    } finally {
      reading = false;
    }
  }

  async function draw(buckets: StatsBucket[]) {
    const U = await loadUPlot();
    const x = buckets.map((b) => Date.parse(b.start) / 1000 + 1800);
    for (const p of plots) p.destroy();
    plots = [
      new U(
        countOptions(U, deliveries.plot),
        [
          x,
          // Failed is drawn first, as tall as both, and delivered over it: the red shows above the green, stacked.
          buckets.map((b) => b.delivered + b.failed),
          buckets.map((b) => b.delivered),
          buckets.map((b) => b.retried_attempts),
        ],
        deliveries.plot,
      ),
      new U(
        timeOptions(times.plot),
        [x, buckets.map((b) => b.p50_ms), buckets.map((b) => b.p95_ms)],
        times.plot,
      ),
    ];
  }

  // Each plot follows its box's width: two side by side on a wide card, one above the other on a phone.
  // Redrawn only when its width really changed: a resize that leaves it as it was (a taller window) costs nothing.
  const resized = new ResizeObserver(() => {
    for (const p of plots) {
      const width = (p.root.parentElement as HTMLElement).clientWidth;
      if (width !== p.width) p.setSize({ width, height: HEIGHT });
    }
  });
  resized.observe(deliveries.plot);
  resized.observe(times.plot);

  return {
    el,
    update(w) {
      const now = Date.now();
      const seen = JSON.stringify(w.health);
      // A move held back by the interval stays a move until it is read: the charts catch up with the health line.
      const moved = seen !== health;
      // A webhook's first activity is drawn at once: its card showed no charts until then.
      const due = el.hidden ? 0 : MIN_REFRESH_MS;
      if (reading || !((moved && now - readAt >= due) || now - readAt >= MAX_AGE_MS)) return;
      health = seen;
      void read();
    },
  };
}

/** A chart's title, its legend in words and colours (swatch classes, session.css), and the box uPlot draws in. */
function chartBox(title: string, legend: [label: string, swatch: string][]) {
  const plot = h('div', { class: 'chart-plot' });
  const el = h(
    'div',
    { class: 'chart' },
    h('h4', { class: 'chart-title small' }, title),
    h(
      'ul',
      { class: 'chart-legend small muted' },
      legend.map(([label, swatch]) => h('li', {}, h('span', { class: `swatch ${swatch}` }), label)),
    ),
    plot,
  );
  return { el, plot };
}

const axis = (values?: uPlot.Axis['values']): uPlot.Axis => ({
  stroke: color('--muted'),
  grid: { stroke: color('--line'), width: 1 },
  ticks: { show: false },
  font: '11px system-ui, sans-serif',
  values,
});

/** The hour axis: a label every few hours, as many as the width has room for. */
const hourAxis = (): uPlot.Axis => ({
  ...axis((_u, splits) => splits.map((s) => axisFormat.format(new Date(s * 1000)))),
  space: 44,
  size: 26,
  incrs: [3600, 7200, 10800, 21600, 43200],
  grid: { show: false },
});

/** Each point sits in the middle of its hour; the axis spans the whole hours, so the last bar is not cut in half. */
const HOURS: uPlot.Scale = { time: true, range: (_u, min, max) => [min - 1800, max + 1800] };

const base = (
  box: HTMLElement,
): Pick<uPlot.Options, 'width' | 'height' | 'legend' | 'cursor' | 'padding'> => ({
  width: box.clientWidth || 300,
  height: HEIGHT,
  legend: { show: false },
  cursor: { show: false },
  padding: [8, 8, 0, 0],
});

function countOptions(U: UPlot, box: HTMLElement): uPlot.Options {
  const bars = U.paths.bars?.({ size: [0.7, 24] });
  return {
    ...base(box),
    scales: { x: HOURS, y: { range: (_u, _min, max) => [0, Math.max(2, Math.ceil(max * 1.15))] } },
    axes: [
      hourAxis(),
      { ...axis(), size: 36, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10_000] },
    ],
    series: [
      {},
      {
        label: 'Failed',
        fill: color('--bad'),
        stroke: color('--bad'),
        paths: bars,
        width: 0,
        points: { show: false },
      },
      {
        label: 'Delivered',
        fill: color('--good'),
        stroke: color('--good'),
        paths: bars,
        width: 0,
        points: { show: false },
      },
      { label: 'Retried attempts', stroke: color('--warn'), width: 2, points: { show: false } },
    ],
  };
}

function timeOptions(box: HTMLElement): uPlot.Options {
  return {
    ...base(box),
    scales: { x: HOURS, y: { range: (_u, _min, max) => [0, Math.max(10, Math.ceil(max * 1.15))] } },
    axes: [hourAxis(), { ...axis((_u, splits) => splits.map((s) => `${s} ms`)), size: 56 }],
    series: [
      {},
      { label: 'p50', stroke: color('--accent'), width: 2, points: { show: true, size: 4 } },
      { label: 'p95', stroke: color('--accent'), width: 2, dash: [6, 4], points: { show: true, size: 4 } },
    ],
  };
}

/** The same numbers as a table, for screen readers: one row per hour, oldest first. */
function statsTable(buckets: StatsBucket[]): HTMLElement[] {
  return [
    h('caption', {}, 'Deliveries per hour in the last 24 hours, oldest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Hour', 'Delivered', 'Failed', 'Retried attempts', 'Answer time p50', 'Answer time p95'].map((c) =>
          h('th', { scope: 'col' }, c),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      buckets.map((b) =>
        h(
          'tr',
          { 'data-start': b.start },
          h('th', { scope: 'row' }, hourLabel(b.start)),
          h('td', {}, b.delivered),
          h('td', {}, b.failed),
          h('td', {}, b.retried_attempts),
          h('td', {}, ms(b.p50_ms)),
          h('td', {}, ms(b.p95_ms)),
        ),
      ),
    ),
  ];
}
