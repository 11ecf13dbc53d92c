/**
 * Fastify plugin: registers one POST route whose JSON body is kept as the raw bytes (Fastify parses JSON by
 * default, which would lose them). The parser is changed only inside the plugin's own encapsulated context,
 * so the rest of the application keeps its JSON parsing.
 *
 *   app.register(heraldFastify, { path: '/webhooks/herald', secret, onDelivery: async (d) => { … } });
 */
import type { FastifyInstance } from 'fastify';
import { MemoryDedupe } from '../dedupe.ts';
import { type ReceiveOptions, receiveDelivery } from '../receive.ts';
import type { HandlerOptions } from './node-http.ts';

export type HeraldFastifyOptions = HandlerOptions & { path?: string };

export async function heraldFastify(app: FastifyInstance, options: HeraldFastifyOptions): Promise<void> {
  const receive: ReceiveOptions = { ...options, dedupe: options.dedupe ?? new MemoryDedupe() };
  const keepBytes = (_req: unknown, body: Buffer, done: (err: null, body: Buffer) => void) =>
    done(null, body);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: options.maxBodyBytes ?? 1024 * 1024 },
    keepBytes,
  );
  app.post(options.path ?? '/', async (request, reply) => {
    const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const receipt = await receiveDelivery(receive, request.headers, raw);
    return reply.status(receipt.status).send(receipt.body);
  });
}
