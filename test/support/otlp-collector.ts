/**
 * A test collector: an HTTP server on 127.0.0.1 that takes OTLP trace exports as a real collector does (POST, 200
 * with an empty answer) and keeps what came. OTLP/JSON exports are parsed into spans; any other body (protobuf) is
 * kept raw with its content type.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './herald.ts';

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The resource's attributes (service.name…). */
  resource: Record<string, string | number | boolean>;
}

export interface Export {
  path: string;
  contentType: string;
  body: Buffer;
}

export const SPAN_KIND = { server: 2, client: 3, producer: 4, consumer: 5 } as const;

export const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A publisher's own trace: its trace id and the id of its span that made the request. */
export const publisherTrace = () => {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
};
export const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The environment of a Herald that traces to `collector`. */
export const tracingEnv = (collector: TestCollector, extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  // Sent within 50 ms of ending, so the test waits on spans, not on the default 5 s batch.
  OTEL_BSP_SCHEDULE_DELAY: '50',
  ...extra,
});

export const attemptsOf = (spans: CollectedSpan[]) =>
  spans
    .filter((s) => s.name === 'herald.attempt')
    .sort((a, b) => Number(a.attributes['herald.attempt']) - Number(b.attributes['herald.attempt']));

export class TestCollector {
  readonly spans: CollectedSpan[] = [];
  readonly exports: Export[] = [];
  readonly #server: Server;
  url = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const contentType = String(req.headers['content-type'] ?? '');
        this.exports.push({ path: req.url ?? '', contentType, body });
        if (contentType.startsWith('application/json'))
          this.spans.push(...spansOf(JSON.parse(body.toString())));
        res.writeHead(200, { 'content-type': contentType || 'application/json' });
        res.end(contentType.startsWith('application/json') ? '{}' : '');
      });
    });
  }

  static async start(port = 0): Promise<TestCollector> {
    const c = new TestCollector();
    await new Promise<void>((resolve, reject) => {
      c.#server.once('error', reject);
      c.#server.listen(port, '127.0.0.1', resolve);
    });
    c.url = `http://127.0.0.1:${(c.#server.address() as AddressInfo).port}`;
    return c;
  }

  /** The spans of one trace. */
  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** Waits until `check` finds what it wants among the spans. */
  waitFor<T>(check: (spans: CollectedSpan[]) => T | undefined, what: string, ms = 20_000): Promise<T> {
    return eventually(async () => check(this.spans), ms, what);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

const plain = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));

const attributesOf = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, plain(kv.value)]));

const ms = (nanos: string | number) => Number(BigInt(nanos) / 1_000_000n);

function spansOf(request: any): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          startMs: ms(s.startTimeUnixNano),
          endMs: ms(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes),
          status: s.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return out;
}
