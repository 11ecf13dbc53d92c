/**
 * A collector that accepts OTLP over HTTP and throws it away, to measure what tracing costs Herald without a real
 * collector's own load on the machine: answers every POST 200 at once, counts requests and bytes, and prints them
 * when stopped.
 *
 * Usage: npx node bench/otlp-sink.ts [--port 4318]
 *        OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npm run bench -- --workload W2 --runs 3
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '4318' } } });
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (c: Buffer) => {
    bytes += c.length;
  });
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf') });
    res.end();
  });
});
server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`otlp sink on http://127.0.0.1:${values.port}`);
});
const stop = () => {
  console.log(`otlp sink: ${requests} exports, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
