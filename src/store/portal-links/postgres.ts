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

  async createPortalLink(l: PortalLink): Promise<void> {
    await this.#db.sql`
      INSERT INTO portal_links (link_id, instance_id, token_hash, read_only, key_id, expires_at, created_at)
      VALUES (${l.link_id}, ${l.instance_id}, ${l.token_hash}, ${l.read_only}, ${l.key_id}, ${l.expires_at}::bigint,
        ${l.created_at}::bigint)`;
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
