/**
 * The request log's own work, alone: µs of CPU per request for the child logger Fastify makes per request and the
 * `onResponse` line (written to /dev/null), after 20,000 to warm up. WORKTREE is a checkout whose
 * src/api/request-log.ts is measured, so that two commits can be alternated from one place.
 *
 * Usage: npx node bench/request-log.ts WORKTREE [N=100000]
 */
import Fastify from 'fastify';
import pino from 'pino';

const [worktree = '.', count = '100000'] = process.argv.slice(2);
const { serverBase, installRequestLog } = await import(`${worktree}/src/api/request-log.ts`);
const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: true }));
const app = Fastify(serverBase(logger, []));
installRequestLog(app, 'ab'.repeat(32));
app.post('/instances/:id/events', async (_req, reply) => reply.code(202).send({ ok: true }));
await app.ready();
const factory = app.childLoggerFactory;
const url = '/instances/ins_01m8tp954xart262cdwcqeq85t/events';
// The request log's onResponse hook, the last of the instance's.
const hooksKey = Object.getOwnPropertySymbols(app).find((s) => String(s) === 'Symbol(fastify.hooks)');
const hook = (app as never as Record<symbol, { onResponse: ((...a: unknown[]) => Promise<void>)[] }>)[
  hooksKey as symbol
].onResponse.at(-1);
const once = async (i: number) => {
  const log = factory.call(app, app.log, { reqId: `req-${i}` }, {} as never, {} as never);
  await hook?.({ url, method: 'POST', log, headers: {} }, { elapsedTime: 0.9, statusCode: 202 });
};
for (let i = 0; i < 20_000; i++) await once(i);
const n = Number(count);
const t0 = process.cpuUsage();
for (let i = 0; i < n; i++) await once(i);
const t = process.cpuUsage(t0);
console.log(`${((t.user + t.system) / n).toFixed(2)} µs of CPU per request`);
