/**
 * Copy-as-curl for a delivery: the exact request body and Herald's X-Service-* headers, as a shell snippet that
 * replays it now. It takes a fresh X-Service-Timestamp (a receiver refuses one more than 300 s old)
 * and, for a signed webhook, computes the signature with openssl from $WEBHOOK_SECRET: Herald keeps the secret
 * sealed and the page never sees it.
 */

export interface CurlInput {
  url: string;
  body: string;
  eventId: string;
  userAgent: string;
  signed: boolean;
}

/** A single-quoted shell word: everything literal, a quote closed, escaped and reopened. */
export const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export function curlCommand(c: CurlInput): string {
  const lines = [`BODY=${shellQuote(c.body)}`, 'TS=$(date +%s)'];
  if (c.signed) {
    lines.push(
      `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -r | cut -d' ' -f1)`,
    );
  }
  const headers = [
    'Content-Type: application/json',
    `User-Agent: ${c.userAgent}`,
    `X-Service-Event-Id: ${c.eventId}`,
  ].map((header) => `  -H ${shellQuote(header)}`);
  headers.push('  -H "X-Service-Timestamp: $TS"');
  if (c.signed) headers.push('  -H "X-Service-Signature: v1=$SIG"');
  lines.push([`curl -sS -X POST ${shellQuote(c.url)}`, ...headers, '  --data-raw "$BODY"'].join(' \\\n'));
  return lines.join('\n');
}
