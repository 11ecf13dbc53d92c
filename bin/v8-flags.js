/**
 * The V8 flags Herald runs with (README, "Run it"): a small young generation and one background compiler thread
 * keep its memory and its share of the cores small. Read by the launcher (herald.js) and by the benchmark, which
 * must measure Herald as `npm start` runs it.
 */
export const V8_FLAGS = ['--max-semi-space-size=8', '--v8-pool-size=1', '--heap-growing-percent=150'];
