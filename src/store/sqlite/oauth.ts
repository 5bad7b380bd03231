/** The OAuth server's records and connections on SQLite. */
import type { NewOAuthRecord, OAuthConnection, OAuthRecord } from '../oauth-port.ts';
import { oauthConnectionFrom, oauthRecordFrom } from '../rows.ts';
import type { SqliteDb } from './db.ts';

export class SqliteOAuth {
  readonly #db: SqliteDb;

  constructor(db: SqliteDb) {
    this.#db = db;
  }

  async upsertOAuthRecord(model: string, id: string, r: NewOAuthRecord): Promise<void> {
    this.#db.run(
      `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
       ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
      model,
      id,
      r.payload,
      r.grantId,
      r.uid,
      r.userCode,
      r.expiresAt,
    );
  }

  async findOAuthRecord(model: string, id: string, now: number): Promise<OAuthRecord | null> {
    const row = this.#db.get(
      'SELECT * FROM oauth_records WHERE model = ? AND id = ? AND (expires_at IS NULL OR expires_at > ?)',
      model,
      id,
      now,
    );
    return row ? oauthRecordFrom(row) : null;
  }

  async findOAuthRecordBy(
    model: string,
    by: 'uid' | 'user_code',
    value: string,
    now: number,
  ): Promise<OAuthRecord | null> {
    const row = this.#db.get(
      `SELECT * FROM oauth_records WHERE model = ? AND ${by === 'uid' ? 'uid' : 'user_code'} = ?
         AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`,
      model,
      value,
      now,
    );
    return row ? oauthRecordFrom(row) : null;
  }

  async consumeOAuthRecord(model: string, id: string, at: number): Promise<boolean> {
    const { changes } = this.#db.run(
      'UPDATE oauth_records SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL',
      at,
      model,
      id,
    );
    return Number(changes) === 1;
  }

  async destroyOAuthRecord(model: string, id: string): Promise<void> {
    this.#db.run('DELETE FROM oauth_records WHERE model = ? AND id = ?', model, id);
  }

  async revokeOAuthGrant(grantId: string): Promise<void> {
    this.#db.run('DELETE FROM oauth_records WHERE grant_id = ?', grantId);
  }

  async pruneOAuthRecords(before: number, limit: number): Promise<number> {
    const { changes } = this.#db.run(
      'DELETE FROM oauth_records WHERE rowid IN (SELECT rowid FROM oauth_records WHERE expires_at < ? LIMIT ?)',
      before,
      limit,
    );
    return Number(changes);
  }

  async insertOAuthConnection(c: OAuthConnection): Promise<void> {
    this.#db.run(
      'INSERT INTO oauth_connections (key_id, account_id, client_id, client_name, redirect_host, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      c.keyId,
      c.accountId,
      c.clientId,
      c.clientName,
      c.redirectHost,
      c.createdAt,
    );
  }

  async listOAuthConnections(accountId: string): Promise<OAuthConnection[]> {
    return this.#db
      .all('SELECT * FROM oauth_connections WHERE account_id = ? ORDER BY created_at DESC', accountId)
      .map(oauthConnectionFrom);
  }
}
