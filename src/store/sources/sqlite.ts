/** Sources on SQLite (ports.ts, Sources). */
import type { Sources } from '../ports.ts';
import type { ParkedMessage, Source, SourceConfig, SourceCounts, SourceState } from '../records.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';
import { toParked, toSource } from './rows.ts';

export class SqliteSources implements Sources {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async createSource(s: Source): Promise<void> {
    this.#db
      .q(
        `INSERT INTO sources (source_id, url, url_sealed, format, instance_id, state, last_error, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        s.source_id,
        s.url,
        s.url_sealed,
        s.format,
        s.instance_id,
        s.state,
        s.last_error,
        s.created_at,
        s.updated_at,
      );
  }

  async listSources(): Promise<Source[]> {
    return this.#db.q('SELECT * FROM sources ORDER BY created_at, source_id').all().map(toSource);
  }

  async getSource(sourceId: string): Promise<Source | null> {
    const row = this.#db.q('SELECT * FROM sources WHERE source_id = ?').get(sourceId);
    return row ? toSource(row) : null;
  }

  async updateSource(sourceId: string, c: SourceConfig, now: number): Promise<Source | null> {
    this.#db
      .q(
        `UPDATE sources SET url = ?, url_sealed = ?, format = ?, instance_id = ?, state = 'connecting',
           last_error = NULL, updated_at = ? WHERE source_id = ?`,
      )
      .run(c.url, c.url_sealed, c.format, c.instance_id, now, sourceId);
    return this.getSource(sourceId);
  }

  async deleteSource(sourceId: string): Promise<boolean> {
    return this.#db.q('DELETE FROM sources WHERE source_id = ?').run(sourceId).changes > 0;
  }

  async setSourceState(sourceId: string, state: SourceState, lastError: string | null): Promise<void> {
    this.#db
      .q('UPDATE sources SET state = ?, last_error = ? WHERE source_id = ?')
      .run(state, lastError, sourceId);
  }

  async addSourceCounts(sourceId: string, n: SourceCounts): Promise<void> {
    this.#db
      .q(
        `UPDATE sources SET received = received + ?, ingested = ingested + ?, duplicates = duplicates + ?,
           parked = parked + ? WHERE source_id = ?`,
      )
      .run(n.received, n.ingested, n.duplicates, n.parked, sourceId);
  }

  async parkMessage(sourceId: string, p: ParkedMessage): Promise<void> {
    this.#db
      .q('INSERT INTO source_parked (source_id, parked_at, reason, body) VALUES (?, ?, ?, ?)')
      .run(sourceId, p.parked_at, p.reason, p.body);
  }

  async listParked(sourceId: string, limit: number, cursor: number | null) {
    const rows = this.#db
      .q('SELECT * FROM source_parked WHERE source_id = ? AND seq > ? ORDER BY seq LIMIT ?')
      .all(sourceId, cursor ?? 0, limit + 1)
      .map(toParked);
    return { parked: rows.slice(0, limit), more: rows.length > limit };
  }
}
