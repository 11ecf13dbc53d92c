/** Portal links on PostgreSQL: each a hashed token for one instance's session page (ports.ts, PortalLinks). */
import type { PortalLinks } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';
import type { PortalLink } from '../records.ts';
import { toPortalLink } from '../rows.ts';

export class PostgresPortalLinks implements PortalLinks {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * The instance's row is locked before the count, so creates for one instance, from every process, take turns (as
   * webhooks' do); FOR NO KEY UPDATE leaves ingest alone.
   */
  async createPortalLink(l: PortalLink, maxLive = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.#db.tx(async (sql) => {
      await sql`SELECT 1 FROM instances WHERE instance_id = ${l.instance_id} FOR NO KEY UPDATE`;
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::integer AS n FROM portal_links
        WHERE instance_id = ${l.instance_id} AND expires_at > ${l.created_at}::bigint`;
      if ((row?.n ?? 0) >= maxLive) return false;
      await sql`
        INSERT INTO portal_links (link_id, instance_id, token_hash, read_only, key_id, expires_at, created_at)
        VALUES (${l.link_id}, ${l.instance_id}, ${l.token_hash}, ${l.read_only}, ${l.key_id},
          ${l.expires_at}::bigint, ${l.created_at}::bigint)`;
      return true;
    });
  }

  async listPortalLinks(instanceId: string, now: number): Promise<PortalLink[]> {
    const rows = await this.#db.sql<Record<string, unknown>[]>`
      SELECT * FROM portal_links WHERE instance_id = ${instanceId} AND expires_at > ${now}::bigint
      ORDER BY created_at, link_id`;
    return rows.map(toPortalLink);
  }

  async findPortalLinkByHash(tokenHash: string): Promise<PortalLink | null> {
    const [row] = await this.#db.sql<Record<string, unknown>[]>`
      SELECT * FROM portal_links WHERE token_hash = ${tokenHash}`;
    return row ? toPortalLink(row) : null;
  }

  async deletePortalLink(instanceId: string, linkId: string): Promise<boolean> {
    const deleted = await this.#db.sql`
      DELETE FROM portal_links WHERE instance_id = ${instanceId} AND link_id = ${linkId}`;
    return deleted.count > 0;
  }

  async forgetExpiredPortalLinks(now: number): Promise<number> {
    return (await this.#db.sql`DELETE FROM portal_links WHERE expires_at <= ${now}::bigint`).count;
  }
}
