/**
 * Whether a browser opening a media link shows the file or saves it. Links are served from Herald's own origin,
 * the session page's, with whatever type the uploader declared: an HTML page or an SVG shown there would be a page
 * of Herald's (the sandbox CSP and nosniff make it inert, this makes it not a page at all). Only types a browser
 * renders as a picture or a media player, never as a document, are shown; everything else is a download.
 */

const SHOWN = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'audio/mpeg',
  'audio/mp4',
  'audio/aac',
  'audio/ogg',
  'audio/opus',
  'audio/wav',
  'audio/webm',
  'video/mp4',
  'video/webm',
  'video/ogg',
]);

/** The Content-Disposition of a stored file of this media type (parameters such as `codecs=opus` ignored). */
export function contentDisposition(mimetype: string, mediaId: string): string {
  const essence = mimetype.split(';')[0].trim().toLowerCase();
  // Media ids are letters, digits and _ (ids.ts): safe inside quotes as they are.
  return SHOWN.has(essence) ? 'inline' : `attachment; filename="${mediaId}"`;
}
