/** Sources on PostgreSQL (ports.ts, Sources): shared by every process on the database. */
import type { Sources } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';
import type { ParkedMessage, Source, SourceConfig, SourceCounts, SourceState } from '../records.ts';
import { toParked, toSource } from './rows.ts';

type Rows = Record<string, unknown>[];

export class PostgresSources implements Sources {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async createSource(s: Source): Promise<void> {
    await this.#db.sql`
      INSERT INTO sources (source_id, url, url_sealed, format, instance_id, state, last_error, created_at, updated_at)
      VALUES (${s.source_id}, ${s.url}, ${s.url_sealed}, ${s.format}, ${s.instance_id}, ${s.state}, ${s.last_error},
        ${s.created_at}::bigint, ${s.updated_at}::bigint)`;
  }

  async listSources(): Promise<Source[]> {
    const rows = await this.#db.sql<Rows>`SELECT * FROM sources ORDER BY created_at, source_id`;
    return rows.map(toSource);
  }

  async getSource(sourceId: string): Promise<Source | null> {
    const [row] = await this.#db.sql<Rows>`SELECT * FROM sources WHERE source_id = ${sourceId}`;
    return row ? toSource(row) : null;
  }

  async updateSource(sourceId: string, c: SourceConfig, now: number): Promise<Source | null> {
    const [row] = await this.#db.sql<Rows>`
      UPDATE sources SET url = ${c.url}, url_sealed = ${c.url_sealed}, format = ${c.format},
        instance_id = ${c.instance_id}, state = 'connecting', last_error = NULL, updated_at = ${now}::bigint
      WHERE source_id = ${sourceId} RETURNING *`;
    return row ? toSource(row) : null;
  }

  async deleteSource(sourceId: string): Promise<boolean> {
    const deleted = await this.#db.sql`DELETE FROM sources WHERE source_id = ${sourceId}`;
    return deleted.count > 0;
  }

  async setSourceState(sourceId: string, state: SourceState, lastError: string | null): Promise<void> {
    await this.#db
      .sql`UPDATE sources SET state = ${state}, last_error = ${lastError} WHERE source_id = ${sourceId}`;
  }

  async addSourceCounts(sourceId: string, n: SourceCounts): Promise<void> {
    await this.#db.sql`
      UPDATE sources SET received = received + ${n.received}::bigint, ingested = ingested + ${n.ingested}::bigint,
        duplicates = duplicates + ${n.duplicates}::bigint, parked = parked + ${n.parked}::bigint
      WHERE source_id = ${sourceId}`;
  }

  async parkMessage(sourceId: string, p: ParkedMessage): Promise<void> {
    await this.#db.sql`
      INSERT INTO source_parked (source_id, parked_at, reason, body)
      VALUES (${sourceId}, ${p.parked_at}::bigint, ${p.reason}, ${p.body})`;
  }

  async listParked(sourceId: string, limit: number, cursor: number | null) {
    const rows = await this.#db.sql<Rows>`
      SELECT * FROM source_parked WHERE source_id = ${sourceId} AND seq > ${cursor ?? 0}::bigint
      ORDER BY seq LIMIT ${limit + 1}::integer`;
    const parked = rows.map(toParked);
    return { parked: parked.slice(0, limit), more: parked.length > limit };
  }
}
