/**
 * A resolver for tests to inject as the destination guard's (`lookup` of a policy, `resolve` of a Herald): each
 * name answers the addresses set for it, fails with the Error set for it, or, when nothing is set, fails like
 * getaddrinfo (ENOTFOUND). It counts how often each name was asked, so a test can wait for a client to ask again.
 * Names under .test are reserved: the system resolver answers none of them, so only this one can.
 */
import type { Lookup } from '../../src/net/destination.ts';

export class TestDns {
  readonly #answers = new Map<string, string[] | Error>();
  readonly #asked = new Map<string, number>();

  readonly lookup: Lookup = async (host) => {
    this.#asked.set(host, this.asked(host) + 1);
    const answer = this.#answers.get(host);
    if (answer instanceof Error) throw answer;
    if (answer === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answer;
  };

  set(host: string, answer: string[] | Error): void {
    this.#answers.set(host, answer);
  }

  asked(host: string): number {
    return this.#asked.get(host) ?? 0;
  }
}
