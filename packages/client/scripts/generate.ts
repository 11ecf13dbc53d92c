/**
 * Generates src/openapi.ts, the types of Herald's API, from the /openapi.json a real Herald serves (started here on a
 * throw-away SQLite directory), with openapi-typescript. `npm run generate:client` writes it; test/client checks that
 * the committed file is what this produces, so the client never drifts from the API.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { startHerald } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';

export const OUTPUT = join(import.meta.dirname, '../src/openapi.ts');

const BANNER = `/**
 * Herald's HTTP API as TypeScript types: generated from /openapi.json by openapi-typescript. Do not edit; run
 * \`npm run generate:client\` (a test fails when this file and the API differ).
 */
`;

/** The API description, from a Herald started for the purpose. */
async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-client-'));
  const key = 'generate-client-admin-key-0123456789';
  const herald = await startHerald(
    loadConfig({ DATA_DIR: dataDir, PORT: '0', ADMIN_API_KEY: key, LOG_LEVEL: 'silent' }),
    { role: 'api' },
  );
  try {
    const res = await fetch(`${herald.url}/openapi.json`, { headers: { authorization: `Bearer ${key}` } });
    if (!res.ok) throw new Error(`/openapi.json answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  } finally {
    await herald.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The text of src/openapi.ts for the API as it is now. */
export async function generate(): Promise<string> {
  // biome-ignore lint/suspicious/noExplicitAny: openapi-typescript takes its own OpenAPI3 type; this is that JSON
  const ast = await openapiTS((await openApiDocument()) as any, { alphabetize: true });
  return BANNER + astToString(ast);
}

if (import.meta.main) {
  writeFileSync(OUTPUT, await generate());
  console.log(`wrote ${OUTPUT}`);
}
