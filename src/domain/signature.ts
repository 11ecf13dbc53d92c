/**
 * The v1 signature (X-Service-Signature). It lives in the receiver kit (packages/receiver), which receivers install: Herald
 * signs with the very code they verify with.
 */
export { HEADERS, SIGNATURE_VERSION, sign, signWith } from '../../packages/receiver/src/signature.ts';
