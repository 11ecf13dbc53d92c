/** What the benchmark's processes share: the signing secret, the clock, and the events and bodies they send. */

export const SECRET = 'whsec_bench_0123456789abcdef';

/**
 * Milliseconds on the system's monotonic clock (CLOCK_MONOTONIC), with sub-millisecond resolution: the one clock
 * that processes of one machine share exactly. `performance.timeOrigin + performance.now()` differs between
 * processes by up to a millisecond (each rounds its own start time), which put W2's p50 anywhere from 0.1 to 0.9 ms.
 */
export const wallNow = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A message event payload (seed §2.3); `i` keeps ids and bodies distinct, as in real traffic. */
export const messagePayload = (i: number) => ({
  id: `false_491701234567@c.us_3EB0${String(i).padStart(8, '0')}`,
  from: '491701234567@c.us',
  from_phone: '491701234567',
  fromMe: false,
  body: `Hello ${i}, see you at six at the station`,
  hasMedia: false,
});

/** 30 characters, as long as the ids Herald generates (`evt_` + 26). */
export const baselineEventId = (i: number) => `evt_BENCH${String(i).padStart(21, '0')}`;

/** The body as Herald serialises it at ingest (src/domain/event-body.ts): the baselines send as many bytes. */
export const deliveryBody = (i: number, timestamp: number, eventId = baselineEventId(i)) =>
  JSON.stringify({
    event_id: eventId,
    event: 'message',
    instance_id: 'ins_BENCH000000000000000000000',
    timestamp,
    payload: messagePayload(i),
  });

/**
 * WAHA's webhook body of message `i`, as WAHA sends it to Herald's engine endpoint (README, *Point WAHA at Herald*):
 * the engine's payload has no from_phone; with `files` (the file server's URL prefix), the message carries a photo
 * there, WAHA's `{ url, mimetype, filename, error }`, a file of its own per event as WAHA keeps them.
 */
export const wahaMessage = (eventId: string, i: number, files: string | null) => {
  const { from_phone: _, ...message } = messagePayload(i);
  const media = files && {
    url: `${files}${eventId}.jpeg`,
    mimetype: 'image/jpeg',
    filename: null,
    error: null,
  };
  return {
    id: eventId,
    timestamp: Date.now(),
    event: 'message',
    session: 'default',
    engine: 'NOWEB',
    me: { id: '15550001111@c.us', pushName: 'Bench' },
    payload: { ...message, to: '15550001111@c.us', ...(media ? { hasMedia: true, media } : {}) },
    environment: { version: '2025.11.1', engine: 'NOWEB', tier: 'CORE', browser: null },
  };
};
