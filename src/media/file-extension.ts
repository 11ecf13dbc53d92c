/**
 * The extension a media type implies, for naming a file that has no name of its own (`med_<id>.jpg`). The types
 * WhatsApp carries and the common documents; parameters (`audio/ogg; codecs=opus`, a voice note) are ignored.
 */

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/heic': 'heic',
  'image/bmp': 'bmp',
  'image/tiff': 'tif',
  'image/svg+xml': 'svg',
  'video/mp4': 'mp4',
  'video/3gpp': '3gp',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
  'video/ogg': 'ogv',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'audio/wav': 'wav',
  'audio/webm': 'weba',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/json': 'json',
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.ms-powerpoint': 'ppt',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/octet-stream': 'bin',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/html': 'html',
  'text/xml': 'xml',
  'text/vcard': 'vcf',
  'text/x-vcard': 'vcf',
};

/** The type without its parameters, lower case: `Audio/OGG; codecs=opus` → `audio/ogg`. */
export const essenceOf = (mimetype: string): string => mimetype.split(';')[0].trim().toLowerCase();

/** `.jpg` for image/jpeg; '' for a type not in the table. */
export function extensionFor(mimetype: string): string {
  const ext = EXTENSIONS[essenceOf(mimetype)];
  return ext ? `.${ext}` : '';
}
