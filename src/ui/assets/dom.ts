/** Element building without innerHTML: every value from the API becomes text, never markup. */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces the children of `el`. */
export function fill(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

let counter = 0;
/** An id unique in the page, for label/aria wiring. */
export const uid = (prefix: string) => `${prefix}-${++counter}`;

export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el as T;
}

/**
 * Runs `rebuild` (which replaces children of `el`) and gives focus back to the control that had it, found again by
 * its `data-focus` name: a refresh must not pull the keyboard user's place away.
 */
export function keepingFocus(el: Element, rebuild: () => void): void {
  const active = document.activeElement;
  const name = active && el.contains(active) ? active.getAttribute('data-focus') : null;
  rebuild();
  if (name) el.querySelector<HTMLElement>(`[data-focus="${CSS.escape(name)}"]`)?.focus();
}
