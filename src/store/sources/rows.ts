/** A sources row as either database gives it back (bigints may come as strings). */
import type { Source, SourceFormat, SourceState } from '../records.ts';

type Row = Record<string, unknown>;

export const toSource = (r: Row): Source => ({
  source_id: r.source_id as string,
  url: r.url as string,
  url_sealed: (r.url_sealed as string | null) ?? null,
  format: r.format as SourceFormat,
  instance_id: (r.instance_id as string | null) ?? null,
  state: r.state as SourceState,
  last_error: (r.last_error as string | null) ?? null,
  received: Number(r.received),
  ingested: Number(r.ingested),
  duplicates: Number(r.duplicates),
  parked: Number(r.parked),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

export const toParked = (r: Row) => ({
  seq: Number(r.seq),
  parked_at: Number(r.parked_at),
  reason: r.reason as string,
  body: r.body as string,
});
