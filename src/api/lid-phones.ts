/**
 * What an instance learned of hidden ids (`@lid`), around one publish call: the phones of the batch's hidden ids are
 * read before normalising (one query, none when the batch has no hidden id), and the pairs new to the instance are
 * written after the ingest (one statement). Best effort: when the store fails either, from_phone is what the
 * payloads alone give, and the ingest goes on.
 */
import { type LidPhones, lidBatch, newPairs } from '../domain/lid-phone.ts';
import type { Store } from '../store/ports.ts';

export interface LidLearning {
  /** Phones by hidden id for normalise: what the instance learned, with what the batch itself carries. */
  phones: LidPhones;
  /** Writes the pairs the batch carried that the instance did not know as they are. */
  learn(now: number): Promise<void>;
}

export async function lidLearning(
  store: Pick<Store, 'lidPhones'>,
  instanceId: string,
  events: { event: string; payload: unknown }[],
): Promise<LidLearning> {
  const { lookup, carried } = lidBatch(events.map((e) => ({ kind: e.event, payload: e.payload })));
  const none = new Map<string, string>();
  const learned =
    lookup.length > 0 ? await store.lidPhones.phonesOfLids(instanceId, lookup).catch(() => none) : none;
  const fresh = newPairs(carried, learned);
  return {
    // Most batches carry no pair: no map is built for them.
    phones: carried.size === 0 ? learned : new Map([...learned, ...carried]),
    async learn(now) {
      if (fresh.length > 0) await store.lidPhones.learnLidPhones(instanceId, fresh, now).catch(() => {});
    },
  };
}
