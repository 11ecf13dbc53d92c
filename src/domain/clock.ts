/** Time source in epoch milliseconds; injected so that time-dependent logic can be tested. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
