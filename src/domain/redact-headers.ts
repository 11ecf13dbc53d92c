/**
 * Request headers as a log may show them: the credentials a client sends (Authorization, Proxy-Authorization,
 * Cookie) are always hidden, whatever they hold, and any other value holding one of Herald's credentials too.
 */
import { holdsCredential, type SecretTest } from './redact-url.ts';

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

export function redactHeaders(
  headers: Readonly<Record<string, unknown>>,
  isSecret?: SecretTest,
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    shown[name] = CREDENTIAL_HEADERS.has(name.toLowerCase()) || holdsCredential(text, isSecret) ? '…' : value;
  }
  return shown;
}
