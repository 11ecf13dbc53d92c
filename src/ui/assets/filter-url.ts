/**
 * The delivery log's filters in the page's address (its query; the hash is a portal link's token), so a reload, a
 * bookmark or a link sent to a colleague shows the same deliveries. Replaced in place: no history entry per change.
 */
type Control = HTMLInputElement | HTMLSelectElement;

export interface FilterUrl {
  /** The value the address gives `name` (set into its control by restore, or kept for a select still filling). */
  initial(name: string): string;
  /** Puts every control's value (or the one `values` gives its name) in the address, empty ones left out. */
  save(values?: Record<string, string>): void;
}

export function filterUrl(controls: Record<string, Control>): FilterUrl {
  const given = new URLSearchParams(location.search);
  for (const [name, el] of Object.entries(controls)) el.value = given.get(name) ?? '';
  return {
    initial: (name) => given.get(name) ?? '',
    save(values = {}) {
      const query = new URLSearchParams(location.search);
      for (const [name, el] of Object.entries(controls)) {
        const value = (values[name] ?? el.value).trim();
        if (value) query.set(name, value);
        else query.delete(name);
      }
      const search = query.size ? `?${query}` : '';
      if (search !== location.search)
        history.replaceState(history.state, '', `${location.pathname}${search}${location.hash}`);
    },
  };
}
