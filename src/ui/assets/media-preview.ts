/** A delivery's media (seed §2.5): an image previewed, anything else linked. Only http(s) urls become links. */
import { h } from './dom.ts';

interface Media {
  url?: unknown;
  mimetype?: unknown;
  status?: unknown;
  expires_at?: unknown;
}

export function mediaPreview(requestBody: string): HTMLElement | null {
  let media: Media | undefined;
  try {
    media = JSON.parse(requestBody)?.payload?.media;
  } catch {
    return null;
  }
  if (!media || typeof media !== 'object' || typeof media.url !== 'string') return null;
  if (!/^https?:\/\//i.test(media.url)) return null;
  const type = typeof media.mimetype === 'string' ? media.mimetype : 'unknown type';
  const expires = typeof media.expires_at === 'string' ? ` · available until ${media.expires_at}` : '';
  const link = h(
    'a',
    { href: media.url, target: '_blank', rel: 'noopener noreferrer' },
    `Open media (${type})`,
  );
  return h(
    'figure',
    { class: 'media' },
    type.startsWith('image/')
      ? h('img', { src: media.url, alt: `Image sent with the message (${type})`, loading: 'lazy' })
      : null,
    h('figcaption', { class: 'small' }, link, expires),
  );
}
