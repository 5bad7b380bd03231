/** Wallets, accounts, keys, sessions and password resets on PostgreSQL. */
import type { PasswordReset } from '../password-reset-port.ts';
import type {
  AccountRecord,
  KeyContext,
  KeyKind,
  KeyRecord,
  NewAccount,
  SessionRecord,
  WalletRecord,
} from '../port.ts';
import type { DbRow } from '../rows.ts';
import {
  accountColumns,
  accountFrom,
  keyColumns,
  keyFrom,
  num,
  optNum,
  passwordResetFrom,
  str,
  walletColumns,
  walletFrom,
} from '../rows.ts';
import type { PgDb } from './db.ts';

export class PgAccounts {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord> {
    await this.#db.q('INSERT INTO wallets (id, account_id, burn_month) VALUES ($1, $2, $3)', [
      id,
      accountId,
      month,
    ]);
    return { id, accountId, balanceMicros: 0n, burnMonth: month, burnMonthMicros: 0n };
  }

  async getWallet(id: string): Promise<WalletRecord | null> {
    const row = await this.#db.one('SELECT * FROM wallets WHERE id = $1', [id]);
    return row ? walletFrom(row) : null;
  }

  async createAccount(input: NewAccount, month: string): Promise<AccountRecord> {
    await this.#db.tx(async (tx) => {
      await tx.query('INSERT INTO wallets (id, account_id, burn_month) VALUES ($1, $2, $3)', [
        input.walletId,
        input.id,
        month,
      ]);
      await tx.query(
        'INSERT INTO accounts (id, email, password_hash, wallet_id, created_at, public_test_started_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [
          input.id,
          input.email,
          input.passwordHash,
          input.walletId,
          input.createdAt,
          input.publicTestStartedAt,
        ],
      );
    });
    return { ...input, plan: 'standard', packageId: null, lowBalanceMicros: null };
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const row = await this.#db.one('SELECT * FROM accounts WHERE id = $1', [id]);
    return row ? accountFrom(row) : null;
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    const row = await this.#db.one('SELECT * FROM accounts WHERE email = $1', [email]);
    return row ? accountFrom(row) : null;
  }

  async updateAccount(
    id: string,
    patch: Partial<
      Pick<AccountRecord, 'plan' | 'packageId' | 'passwordHash' | 'publicTestStartedAt' | 'lowBalanceMicros'>
    >,
  ): Promise<void> {
    const columns: Record<string, string> = {
      plan: 'plan',
      packageId: 'package_id',
      passwordHash: 'password_hash',
      publicTestStartedAt: 'public_test_started_at',
      lowBalanceMicros: 'low_balance_micros',
    };
    // Column names come from the fixed map above, never from the caller.
    const sets: string[] = [];
    const values: unknown[] = [];
    for (const [field, value] of Object.entries(patch)) {
      const column = columns[field];
      if (!column || value === undefined) continue;
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    }
    if (sets.length === 0) return;
    values.push(id);
    await this.#db.q(`UPDATE accounts SET ${sets.join(', ')} WHERE id = $${values.length}`, values);
  }

  async listAccountsWithPackage(): Promise<AccountRecord[]> {
    const rows = await this.#db.rows(
      'SELECT * FROM accounts WHERE package_id IS NOT NULL ORDER BY created_at, id',
    );
    return rows.map((r) => accountFrom(r));
  }

  async setKeyCaps(
    id: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<boolean> {
    const result = await this.#db.q(
      `UPDATE api_keys SET daily_cap_micros = CASE WHEN $1 THEN $2::bigint ELSE daily_cap_micros END,
         monthly_cap_micros = CASE WHEN $3 THEN $4::bigint ELSE monthly_cap_micros END WHERE id = $5`,
      [
        caps.dailyCapMicros !== undefined,
        caps.dailyCapMicros ?? null,
        caps.monthlyCapMicros !== undefined,
        caps.monthlyCapMicros ?? null,
        id,
      ],
    );
    return result.rowCount === 1;
  }

  static readonly #insertKeySql =
    'INSERT INTO api_keys (id, kind, digest, display_prefix, name, account_id, wallet_id, created_at, expires_at, revoked_at, daily_cap_micros, monthly_cap_micros) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)';

  #keyValues(key: KeyRecord): unknown[] {
    return [
      key.id,
      key.kind,
      key.digest,
      key.displayPrefix,
      key.name,
      key.accountId,
      key.walletId,
      key.createdAt,
      key.expiresAt,
      key.revokedAt,
      key.dailyCapMicros,
      key.monthlyCapMicros,
    ];
  }

  async insertKey(key: KeyRecord): Promise<void> {
    await this.#db.q(PgAccounts.#insertKeySql, this.#keyValues(key));
  }

  async findKeyByDigest(digest: string): Promise<KeyContext | null> {
    const row = await this.#db.one(
      `SELECT ${keyColumns}, ${walletColumns}, ${accountColumns} FROM api_keys k
         JOIN wallets w ON w.id = k.wallet_id
         LEFT JOIN accounts a ON a.id = k.account_id
       WHERE k.digest = $1`,
      [digest],
    );
    if (!row) return null;
    return {
      key: keyFrom(row, 'k_'),
      wallet: walletFrom(row, 'w_'),
      account: row.a_id === null ? null : accountFrom(row, 'a_'),
    };
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = await this.#db.one('SELECT * FROM api_keys WHERE id = $1', [id]);
    return row ? keyFrom(row) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    const rows = await this.#db.rows('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [
      accountId,
    ]);
    return rows.map((r) => keyFrom(r));
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const result = await this.#db.q(
      'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
      [at, id],
    );
    return result.rowCount === 1;
  }

  async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
    await this.#db.tx(async (tx) => {
      await tx.query(
        'UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND kind = $3 AND revoked_at IS NULL',
        [at, accountId, kind],
      );
      await tx.query(PgAccounts.#insertKeySql, this.#keyValues(key));
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    await this.#db.q(
      'INSERT INTO sessions (id, account_id, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5)',
      [session.id, session.accountId, session.createdAt, session.expiresAt, session.revokedAt],
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = await this.#db.one('SELECT * FROM sessions WHERE id = $1', [id]);
    if (!row) return null;
    return {
      id: str(row.id),
      accountId: str(row.account_id),
      createdAt: num(row.created_at),
      expiresAt: num(row.expires_at),
      revokedAt: optNum(row.revoked_at),
    };
  }

  async revokeSession(id: string, at: number): Promise<void> {
    await this.#db.q('UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
  }

  async insertPasswordReset(reset: PasswordReset): Promise<void> {
    await this.#db.q(
      'INSERT INTO password_resets (digest, account_id, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5)',
      [reset.digest, reset.accountId, reset.createdAt, reset.expiresAt, reset.usedAt],
    );
  }

  async findPasswordReset(digest: string): Promise<PasswordReset | null> {
    const row = await this.#db.one('SELECT * FROM password_resets WHERE digest = $1', [digest]);
    return row ? passwordResetFrom(row) : null;
  }

  async completePasswordReset(
    digest: string,
    passwordHash: string,
    at: number,
  ): Promise<{ accountId: string; sessionsEnded: number } | null> {
    return this.#db.tx(async (tx) => {
      const used = await tx.query<DbRow>(
        `UPDATE password_resets SET used_at = $1 WHERE digest = $2 AND used_at IS NULL AND expires_at > $1
         RETURNING account_id`,
        [at, digest],
      );
      const row = used.rows[0];
      if (!row) return null;
      const accountId = str(row.account_id);
      await tx.query('UPDATE password_resets SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [
        at,
        accountId,
      ]);
      await tx.query('UPDATE accounts SET password_hash = $1 WHERE id = $2', [passwordHash, accountId]);
      const ended = await tx.query(
        'UPDATE sessions SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL',
        [at, accountId],
      );
      return { accountId, sessionsEnded: ended.rowCount ?? 0 };
    });
  }
}
