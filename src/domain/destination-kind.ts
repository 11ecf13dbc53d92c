/**
 * Which kind of destination a webhook's URL names, decided here and nowhere else, by its scheme alone: `http` for
 * http and https (and for a URL with no scheme, which the HTTP rules then refuse in their own words), a broker's
 * kind for its schemes (broker-url.ts), null for a scheme Herald does not know. Pure.
 */
import { type BrokerKind, brokerScheme, schemeOf } from './broker-url.ts';

export type DestinationKind = 'http' | BrokerKind;

export function destinationKind(raw: string): DestinationKind | null {
  const scheme = schemeOf(raw);
  if (scheme === null || scheme === 'http' || scheme === 'https') return 'http';
  return brokerScheme(scheme) ?? null;
}

export const isBrokerKind = (kind: DestinationKind | null): kind is BrokerKind =>
  kind !== null && kind !== 'http';
