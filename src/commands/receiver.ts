/** `herald receiver`: the reference receiver as a command, with ways to misbehave on purpose. */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createReferenceReceiver } from '../../packages/receiver/src/reference-server.ts';
import { seededRandom } from '../domain/random.ts';
import { parseDuration, parseNumber } from './args.ts';
import type { Command } from './command.ts';

const help = `Usage: herald receiver [--port 9000] [--host 127.0.0.1] [--secret S]
                       [--fail-rate 0.2] [--status 500] [--delay 2s] [--seed N]

Runs the reference receiver: verifies each delivery's signature (401 when it does not match, or when the
timestamp is more than 300 s away), ignores an event_id it has already processed, answers 200, and prints
one line per delivery.

Options:
  --port N         port to listen on (default 9000; 0 picks a free one)
  --host H         address to listen on (default 127.0.0.1)
  --secret S       the webhook's client_sign_secret; without it, deliveries are accepted unverified
  --fail-rate F    answer this share of deliveries (0 to 1) with --status instead of 200, to watch retries
  --status N       status of a failed delivery (default 500); alone, it fails every delivery (e.g. 410, 429)
  --delay D        wait D (500ms, 2s, 9s…) before answering; beyond 8s Herald counts a timeout
  --seed N         seed of the --fail-rate draw, to replay the same failures`;

async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '9000' },
      host: { type: 'string', default: '127.0.0.1' },
      secret: { type: 'string' },
      'fail-rate': { type: 'string' },
      status: { type: 'string' },
      delay: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const port = parseNumber('port', values.port, 0, 65535, true);
  const failStatus =
    values.status === undefined ? undefined : parseNumber('status', values.status, 100, 599, true);
  const failRate =
    values['fail-rate'] !== undefined
      ? parseNumber('fail-rate', values['fail-rate'], 0, 1)
      : failStatus !== undefined
        ? 1
        : 0;
  const server = createReferenceReceiver({
    secret: values.secret,
    failRate,
    failStatus,
    delayMs: values.delay === undefined ? 0 : parseDuration('delay', values.delay),
    random:
      values.seed === undefined
        ? Math.random
        : seededRandom(parseNumber('seed', values.seed, 0, 2 ** 32, true)),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, values.host, resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  const host = values.host.includes(':') ? `[${values.host}]` : values.host;
  const signing = values.secret ? 'verifying signatures' : 'no --secret: accepting unsigned deliveries';
  const misbehaving =
    failRate > 0 ? `, failing ${Math.round(failRate * 100)}% with ${failStatus ?? 500}` : '';
  console.log(`Reference receiver on http://${host}:${bound}/ (${signing}${misbehaving})`);
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

export const receiverCommand: Command = {
  name: 'receiver',
  summary: 'run the reference receiver: verifies, deduplicates and prints deliveries',
  help,
  run,
};
