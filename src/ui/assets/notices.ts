/** Short confirmations and failures in a polite live region, so a screen reader hears what a click did. */
import { byId, h } from './dom.ts';

export function notify(message: string, tone: 'good' | 'bad' = 'good'): void {
  const box = byId('notices');
  const note = h('div', { class: `notice ${tone}` }, message);
  box.append(note);
  setTimeout(() => note.remove(), tone === 'bad' ? 8000 : 4000);
}
