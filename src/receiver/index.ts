/**
 * Public API for receivers of Herald deliveries. Depends only on Node built-ins and Herald's pure signing code,
 * so a receiver can import it (or copy src/receiver and src/domain/signature.ts) without Herald's server.
 */
export { SIGNATURE_VERSION, sign } from '../domain/signature.ts';
export { heraldExpress } from './adapters/express.ts';
export { heraldFastify } from './adapters/fastify.ts';
export { heraldNodeHandler, readRawBody } from './adapters/node-http.ts';
export type { DedupeStore, MemoryDedupeOptions } from './dedupe.ts';
export { MemoryDedupe } from './dedupe.ts';
export type { Checked, HeraldDelivery, Receipt, ReceiveOptions } from './receive.ts';
export { checkDelivery, receiveDelivery } from './receive.ts';
export type { HeaderInput, VerifyFailure, VerifyOptions, VerifyResult } from './verify.ts';
export { verify } from './verify.ts';
