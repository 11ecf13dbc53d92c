/**
 * Receiver answers are capped (issue 5): of a 32 MiB answer the first 4 KiB are kept and the rest is read and
 * discarded as it streams — the attempt succeeds, and the memory held meanwhile stays far below the answer's size.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RESPONSE_BODY_KEPT } from '../../src/net/destinations/http.ts';
import { Destinations } from '../../src/net/destinations/registry.ts';

// Collected garbage is not held memory: measure after a collection.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a 32 MiB answer: 4 KiB kept, the rest discarded while streaming', async () => {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const total = 32 * 1024 * 1024;
  let written = 0;
  let finished = false;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end(() => {
        finished = true;
      });
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const destinations = new Destinations({
    timeoutMs: 30_000,
    destinations: { allowPrivate: true },
    userAgent: 'Herald/test',
  });
  let peak = 0;
  const base = process.memoryUsage().arrayBuffers;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
  }, 5);
  try {
    const outcome = await destinations.attempt({
      event_id: 'evt_cap00000000000000000000',
      destination_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      body: '{}',
      timestamp: String(Math.floor(Date.now() / 1000)),
      secrets: [],
      headers: null,
      standard: false,
    });
    assert.equal(outcome.status_code, 200);
    assert.equal(outcome.error, null);
    assert.equal(outcome.response_body, 'a'.repeat(RESPONSE_BODY_KEPT));
    assert.equal(written, total);
    assert.ok(finished, 'the whole answer was read');
    // Sender and receiver share this process: their buffers together stay a fraction of the 32 MiB answer.
    assert.ok(peak < total / 4, `peak external memory ${Math.round(peak / 1024)} KiB`);
    console.log(`peak external memory while streaming: ${Math.round(peak / 1024)} KiB`);
  } finally {
    clearInterval(sampler);
    await destinations.close();
    server.close();
  }
});
