/**
 * The v1 signature (X-Service-Signature), and Standard Webhooks' (webhook-signature). They live in the receiver kit
 * (packages/receiver), which receivers install: Herald signs with the very code they verify with.
 */
export { HEADERS, SIGNATURE_VERSION, sign, signWith } from '../../packages/receiver/src/signature.ts';
export { STANDARD_HEADERS, signStandard, standardKey } from '../../packages/receiver/src/standard.ts';
