/**
 * A real S3-compatible server on 127.0.0.1 for the tests: s3rver (npm @20minutes/s3rver), which speaks the S3
 * REST protocol over HTTP and keeps objects in a temporary directory. It runs in its own process, for two quirks:
 * its continuation tokens use DES, which Node 24's OpenSSL offers only with --openssl-legacy-provider; and its
 * signature check computes bucket-level paths ("/bucket/" of ListObjectsV2) differently from the current AWS SDK,
 * so signatures are not enforced. Everything else — keys, ranges, listing order and truncation, 404s — is the
 * server's own behaviour.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The environment that points Herald at it. */
  env(prefix: string): Record<string, string>;
  close(): Promise<void>;
}

const S3RVER = createRequire(import.meta.url).resolve('@20minutes/s3rver');

export async function startS3Server(bucket = 'herald-media'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'herald-s3-'));
  const options = {
    port: 0,
    address: '127.0.0.1',
    directory,
    silent: true,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: bucket }],
  };
  // The server exits when its stdin closes, so it never outlives a test process that died.
  const script = `const S3rver = require(${JSON.stringify(S3RVER)});
    process.stdin.on('end', () => process.exit(0)).resume();
    new S3rver(${JSON.stringify(options)}).run().then(({ port }) => console.log('port ' + port));`;
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code} before listening`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: (prefix) => ({
      MEDIA_STORE: `s3://${bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
    }),
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
