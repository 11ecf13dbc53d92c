/** The refusals of an upload or a media link, made here alone (the API docs show them as they are thrown). */
import { HttpError } from './errors.ts';

export const linkErrors = {
  tooLarge: (maxBytes: number) =>
    new HttpError('payload_too_large', `body: larger than MEDIA_MAX_BYTES (${maxBytes} bytes)`),
  forbidden: () => new HttpError('forbidden', 'link: the signature does not match this media link'),
  expired: (expiresS: number) =>
    new HttpError('gone', `link: expired at ${new Date(expiresS * 1000).toISOString()}`),
  outsideFile: (size: number) =>
    new HttpError('range_not_satisfiable', `Range: not within the file's ${size} bytes`),
};
