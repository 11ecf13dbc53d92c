/** A source as the API shows it: its url with the password as ****, never the sealed one. */
import type { Source } from '../store/records.ts';

export const sourceView = (s: Source) => ({
  source_id: s.source_id,
  url: s.url,
  format: s.format,
  instance_id: s.instance_id,
  state: s.state,
  last_error: s.last_error,
  received: s.received,
  ingested: s.ingested,
  duplicates: s.duplicates,
  parked: s.parked,
  created_at: new Date(s.created_at).toISOString(),
  updated_at: new Date(s.updated_at).toISOString(),
});
