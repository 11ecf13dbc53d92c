/**
 * A delivery's media. Only Herald's own signed links are previewed, and from this page's origin: a media
 * url in an event is whatever its publisher wrote, and an <img> of it would make the admin's browser fetch any
 * address, the intranet's included. Herald's link `/media/med_…?expires=…&sig=…` is loaded here as
 * `/media/med_…?expires=…&sig=…` on this origin (the signature does not depend on the host); anything else is
 * shown as its address, never fetched by the page (the CSP allows images from this origin only).
 */
import { h } from './dom.ts';

interface Media {
  url?: unknown;
  mimetype?: unknown;
  status?: unknown;
  expires_at?: unknown;
}

/** This origin's path to a Herald media link, or null when `url` is not one. */
export function ownMediaPath(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!/^\/media\/med_[A-Za-z0-9_-]{1,100}$/.test(parsed.pathname)) return null;
  const expires = parsed.searchParams.get('expires');
  const sig = parsed.searchParams.get('sig');
  if (!expires || !/^\d+$/.test(expires) || !sig || !/^[A-Za-z0-9_-]+$/.test(sig)) return null;
  return `${parsed.pathname}?${new URLSearchParams({ expires, sig })}`;
}

export function mediaPreview(requestBody: string): HTMLElement | null {
  let media: Media | undefined;
  try {
    media = JSON.parse(requestBody)?.payload?.media;
  } catch {
    return null;
  }
  if (!media || typeof media !== 'object' || typeof media.url !== 'string') return null;
  const type = typeof media.mimetype === 'string' ? media.mimetype : 'unknown type';
  const expires = typeof media.expires_at === 'string' ? ` · available until ${media.expires_at}` : '';
  const own = ownMediaPath(media.url);
  if (!own) {
    return h(
      'figure',
      { class: 'media' },
      h(
        'figcaption',
        { class: 'small' },
        `Media (${type}) stored elsewhere, not previewed: `,
        h('span', { class: 'mono url' }, media.url),
      ),
    );
  }
  return h(
    'figure',
    { class: 'media' },
    type.startsWith('image/')
      ? h('img', { src: own, alt: `Image sent with the message (${type})`, loading: 'lazy' })
      : null,
    h(
      'figcaption',
      { class: 'small' },
      h('a', { href: own, target: '_blank', rel: 'noopener noreferrer' }, `Open media (${type})`),
      expires,
    ),
  );
}
