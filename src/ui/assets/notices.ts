/** Short confirmations and failures in a polite live region, so a screen reader hears what a click did. */
import { byId, h } from './dom.ts';

/** Space kept between a notice and the top bar's brand or links. */
const MARGIN = 24;
/** The narrowest bar middle a notice goes in (a short sentence on one or two lines). */
const ROOM = 300;

/**
 * Where notices show: in the top bar's empty middle, between the brand and the links, when it has room. There they
 * cover nothing at the page's top, and, wherever the page is scrolled, not the buttons it aligns right (Redeliver
 * all failed, Add webhook). Without room (a narrow screen, a long portal title), at the bottom right. Measured at each
 * notice: the brand and the links are not the same on every page, and they wrap on a phone.
 */
function place(box: HTMLElement): void {
  const brand = document.querySelector('.brand')?.getBoundingClientRect();
  const nav = byId('nav').getBoundingClientRect();
  const left = (brand?.right ?? 0) + MARGIN;
  const right = (nav.width > 0 ? nav.left : window.innerWidth) - MARGIN;
  const oneRow = !brand || nav.height === 0 || nav.top < brand.bottom;
  const inBar = oneRow && right - left >= ROOM;
  box.dataset.place = inBar ? 'bar' : 'corner';
  box.style.setProperty('--bar-left', `${left}px`);
  box.style.setProperty('--bar-width', `${right - left}px`);
}

export function notify(message: string, tone: 'good' | 'bad' = 'good'): void {
  const box = byId('notices');
  if (!box.children.length) place(box);
  const note = h('div', { class: `notice ${tone}` }, message);
  box.append(note);
  setTimeout(() => note.remove(), tone === 'bad' ? 8000 : 4000);
}
