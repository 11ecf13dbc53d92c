/** Portal links on SQLite: each a hashed token for one instance's session page (ports.ts, PortalLinks). */
import type { PortalLinks } from '../ports.ts';
import type { PortalLink } from '../records.ts';
import { toPortalLink } from '../rows.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqlitePortalLinks implements PortalLinks {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /** One synchronous write transaction: no other create can run between the count and the insert. */
  async createPortalLink(l: PortalLink, maxLive = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.#db.tx(() => {
      const row = this.#db
        .q('SELECT COUNT(*) AS n FROM portal_links WHERE instance_id = ? AND expires_at > ?')
        .get(l.instance_id, l.created_at);
      if (Number(row?.n) >= maxLive) return false;
      this.#db
        .q(
          `INSERT INTO portal_links (link_id, instance_id, token_hash, read_only, key_id, expires_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          l.link_id,
          l.instance_id,
          l.token_hash,
          l.read_only ? 1 : 0,
          l.key_id,
          l.expires_at,
          l.created_at,
        );
      return true;
    });
  }

  async listPortalLinks(instanceId: string, now: number): Promise<PortalLink[]> {
    return this.#db
      .q('SELECT * FROM portal_links WHERE instance_id = ? AND expires_at > ? ORDER BY created_at, link_id')
      .all(instanceId, now)
      .map(toPortalLink);
  }

  async findPortalLinkByHash(tokenHash: string): Promise<PortalLink | null> {
    const row = this.#db.q('SELECT * FROM portal_links WHERE token_hash = ?').get(tokenHash);
    return row ? toPortalLink(row) : null;
  }

  async deletePortalLink(instanceId: string, linkId: string): Promise<boolean> {
    const deleted = this.#db
      .q('DELETE FROM portal_links WHERE instance_id = ? AND link_id = ?')
      .run(instanceId, linkId);
    return deleted.changes > 0;
  }

  async forgetExpiredPortalLinks(now: number): Promise<number> {
    return Number(this.#db.q('DELETE FROM portal_links WHERE expires_at <= ?').run(now).changes);
  }
}
