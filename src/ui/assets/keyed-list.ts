/**
 * Updates a list in place by key: a row whose data did not change keeps its element (and with it focus, open
 * details and selection), a changed row updates itself, new rows are created and gone ones removed. This is what
 * lets the page refresh every few seconds without losing the reader's place.
 */
export interface Row<T> {
  el: HTMLElement;
  update(item: T): void;
}

export class KeyedList<T> {
  readonly #container: HTMLElement;
  readonly #key: (item: T) => string;
  readonly #create: (item: T) => Row<T>;
  readonly #rows = new Map<string, { row: Row<T>; sig: string }>();
  readonly #signature: (item: T) => string;

  /** `signature` tells when a row must update; by default its item's JSON. */
  constructor(
    container: HTMLElement,
    key: (item: T) => string,
    create: (item: T) => Row<T>,
    signature: (item: T) => string = (item) => JSON.stringify(item),
  ) {
    this.#container = container;
    this.#key = key;
    this.#create = create;
    this.#signature = signature;
  }

  set(items: T[]): void {
    const seen = new Set<string>();
    let cursor: ChildNode | null = this.#container.firstChild;
    for (const item of items) {
      const key = this.#key(item);
      seen.add(key);
      const sig = this.#signature(item);
      let entry = this.#rows.get(key);
      if (!entry) {
        entry = { row: this.#create(item), sig };
        this.#rows.set(key, entry);
      } else if (entry.sig !== sig) {
        entry.row.update(item);
        entry.sig = sig;
      }
      // Move only what is out of place, so untouched rows are never detached (detaching drops focus).
      if (entry.row.el !== cursor) this.#container.insertBefore(entry.row.el, cursor);
      else cursor = cursor.nextSibling;
    }
    for (const [key, entry] of this.#rows) {
      if (!seen.has(key)) {
        entry.row.el.remove();
        this.#rows.delete(key);
      }
    }
  }

  get(key: string): Row<T> | undefined {
    return this.#rows.get(key)?.row;
  }
}
