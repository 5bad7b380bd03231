/** The OAuth server's records and connections on PostgreSQL. */
import type { NewOAuthRecord, OAuthConnection, OAuthRecord } from '../oauth-port.ts';
import { oauthConnectionFrom, oauthRecordFrom } from '../rows.ts';
import type { PgDb } from './db.ts';

export class PgOAuth {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async upsertOAuthRecord(model: string, id: string, r: NewOAuthRecord): Promise<void> {
    await this.#db.q(
      `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
       ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
      [model, id, r.payload, r.grantId, r.uid, r.userCode, r.expiresAt],
    );
  }

  async findOAuthRecord(model: string, id: string, now: number): Promise<OAuthRecord | null> {
    const { rows } = await this.#db.q(
      'SELECT * FROM oauth_records WHERE model = $1 AND id = $2 AND (expires_at IS NULL OR expires_at > $3)',
      [model, id, now],
    );
    return rows[0] ? oauthRecordFrom(rows[0]) : null;
  }

  async findOAuthRecordBy(
    model: string,
    by: 'uid' | 'user_code',
    value: string,
    now: number,
  ): Promise<OAuthRecord | null> {
    const { rows } = await this.#db.q(
      `SELECT * FROM oauth_records WHERE model = $1 AND ${by === 'uid' ? 'uid' : 'user_code'} = $2
         AND (expires_at IS NULL OR expires_at > $3) LIMIT 1`,
      [model, value, now],
    );
    return rows[0] ? oauthRecordFrom(rows[0]) : null;
  }

  async consumeOAuthRecord(model: string, id: string, at: number): Promise<boolean> {
    const { rowCount } = await this.#db.q(
      'UPDATE oauth_records SET consumed_at = $1 WHERE model = $2 AND id = $3 AND consumed_at IS NULL',
      [at, model, id],
    );
    return rowCount === 1;
  }

  async destroyOAuthRecord(model: string, id: string): Promise<void> {
    await this.#db.q('DELETE FROM oauth_records WHERE model = $1 AND id = $2', [model, id]);
  }

  async revokeOAuthGrant(grantId: string): Promise<void> {
    await this.#db.q('DELETE FROM oauth_records WHERE grant_id = $1', [grantId]);
  }

  async pruneOAuthRecords(before: number, limit: number): Promise<number> {
    const { rowCount } = await this.#db.q(
      `DELETE FROM oauth_records WHERE (model, id) IN
         (SELECT model, id FROM oauth_records WHERE expires_at < $1 LIMIT $2)`,
      [before, limit],
    );
    return rowCount ?? 0;
  }

  async insertOAuthConnection(c: OAuthConnection): Promise<void> {
    await this.#db.q(
      'INSERT INTO oauth_connections (key_id, account_id, client_id, client_name, redirect_host, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [c.keyId, c.accountId, c.clientId, c.clientName, c.redirectHost, c.createdAt],
    );
  }

  async listOAuthConnections(accountId: string): Promise<OAuthConnection[]> {
    const { rows } = await this.#db.q(
      'SELECT * FROM oauth_connections WHERE account_id = $1 ORDER BY created_at DESC',
      [accountId],
    );
    return rows.map(oauthConnectionFrom);
  }
}
