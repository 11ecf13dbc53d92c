/**
 * @herald/receiver: what a receiver of Herald deliveries needs (verify, deduplicate, adapters for node:http,
 * Express and Fastify, the reference receiver). Depends only on Node's built-ins.
 */

export { heraldExpress } from './adapters/express.ts';
export { heraldFastify } from './adapters/fastify.ts';
export { heraldNodeHandler, readRawBody } from './adapters/node-http.ts';
export type { DedupeStore, MemoryDedupeOptions } from './dedupe.ts';
export { MemoryDedupe } from './dedupe.ts';
export type { Checked, HeraldDelivery, Receipt, ReceiveOptions } from './receive.ts';
export { checkDelivery, receiveDelivery } from './receive.ts';
export { createReferenceReceiver, type ReferenceReceiverOptions } from './reference-server.ts';
export { HEADERS, SIGNATURE_VERSION, sign } from './signature.ts';
export {
  STANDARD_HEADERS,
  type StandardVerifyOptions,
  signStandard,
  standardKey,
  verifyStandard,
} from './standard.ts';
export type { HeaderInput, VerifyFailure, VerifyOptions, VerifyResult } from './verify.ts';
export { verify } from './verify.ts';
