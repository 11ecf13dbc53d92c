/**
 * EM, engine media: events/s with media against without. WAHA's own bodies go to POST /instances/{id}/engine/waha
 * as ES1 sends Herald's events (one per request, 64 connections in a closed loop, one webhook), in two legs on
 * Herald started alike (ENGINE_MEDIA_HEADERS with the file server's key, ENGINE_MEDIA_PREFIXES naming the file server,
 * which lets it reach 127.0.0.1): (a) text messages, (b) each message with a file of its own on the bench's file server.
 * In (b) Herald answers 202 before it downloads, and starts the delivery once the file is in its media store: an
 * arrival is the delivery with the settled media, so events/s counts downloads made and stored. The receiver counts
 * the measured deliveries by media status, and a leg fails unless all are as they should be (none in (a), ready
 * in (b)): a figure must never measure failed downloads. The file server runs through both legs, so that both
 * report its CPU (in (a), what an idle server costs).
 */
import { FileServer } from './file-server.ts';
import { type Leg, type LegSpec, leg } from './legs.ts';
import type { Figure, RunContext } from './run-context.ts';

/** The file server's key, which Herald sends through ENGINE_MEDIA_HEADERS as it would WAHA's X-Api-Key. */
const API_KEY = 'bench-engine-files-key';

export async function engineMedia(ctx: RunContext, spec: LegSpec): Promise<Figure[]> {
  const files = await FileServer.start(API_KEY);
  try {
    const options = {
      env: { ENGINE_MEDIA_HEADERS: `X-Api-Key: ${API_KEY}`, ENGINE_MEDIA_PREFIXES: files.files },
      processes: { 'file server': files.pid },
      inspect: true,
    };
    const text = await leg(ctx, 'herald', spec, { ...options, name: 'text', engine: { files: null } });
    await expectMedia(text, 'none', spec.events, files);
    const media = await leg(ctx, 'herald', spec, {
      ...options,
      name: 'media',
      engine: { files: files.files },
    });
    await expectMedia(media, 'ready', spec.events, files);
    const ratio = (name: string, value: number): Figure => ({
      name: `media ÷ text ${name}`,
      value,
      unit: 'ratio',
    });
    const heraldCpu = (l: Leg) => l.cpu['Herald process'];
    return [
      ...text.figures,
      ...media.figures,
      { name: 'media deliveries with media ready', value: media.media.ready, unit: 'count' },
      ratio('events/s', media.eventsPerSecond / text.eventsPerSecond),
      ratio('acknowledged events/s', media.ackedPerSecond / text.ackedPerSecond),
      ratio('Herald CPU ms/event', heraldCpu(media) / heraldCpu(text)),
      // What one download costs Herald beyond the event itself: the difference says it more plainly than a ratio.
      {
        name: 'media − text Herald CPU ms/event',
        value: (heraldCpu(media) - heraldCpu(text)) * 1000,
        unit: 'ms',
      },
    ];
  } finally {
    await files.stop();
  }
}

/** Fails the leg unless each of its `events` deliveries carried media of `status` ("none": no media object). */
async function expectMedia(l: Leg, status: string, events: number, files: FileServer): Promise<void> {
  // At least `events`: a delivery made twice (a retry) is no fault of the media.
  if ((l.media[status] ?? 0) >= events && Object.keys(l.media).every((s) => s === status)) return;
  const { served, refused } = await files.stats();
  throw new Error(
    `EM: ${events} deliveries should carry media ${status}; the receiver counted ${JSON.stringify(l.media)} ` +
      `(file server since its start: ${served} served, ${refused} refused for their key)`,
  );
}
