/**
 * @herald/client: Herald's HTTP API, typed. The types (openapi.ts) are generated from Herald's /openapi.json by
 * openapi-typescript; the requests are made by openapi-fetch, so every path, parameter, body and answer is checked
 * by the compiler:
 *
 *   const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:8080', key: process.env.HERALD_KEY! });
 *   const { data, error } = await herald.GET('/instances/{instance_id}/deliveries', {
 *     params: { path: { instance_id: 'ins_…' }, query: { status: 'failed' } },
 *   });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi.ts';

export type { components, operations, paths, webhooks } from './openapi.ts';

export type HeraldClient = Client<paths>;

export interface HeraldClientOptions {
  /** Herald's base URL, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** The admin key or an instance key, sent as `Authorization: Bearer <key>`. */
  key: string;
  /** A fetch of your own (tests, proxies); the global one by default. */
  fetch?: typeof fetch;
}

export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.key}` },
    fetch: options.fetch,
  });
}
