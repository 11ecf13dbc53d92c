/** Public API for receivers of Herald deliveries. */
export { SIGNATURE_VERSION, sign } from '../domain/signature.ts';
export type { DedupeStore, MemoryDedupeOptions } from './dedupe.ts';
export { MemoryDedupe } from './dedupe.ts';
export type { HeaderInput, VerifyFailure, VerifyOptions, VerifyResult } from './verify.ts';
export { verify } from './verify.ts';
