/** Wallets, accounts, keys, sessions and password resets on SQLite. */
import type { SQLInputValue } from 'node:sqlite';
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
import type { SqliteDb } from './db.ts';

export class SqliteAccounts {
  readonly #db: SqliteDb;

  constructor(db: SqliteDb) {
    this.#db = db;
  }

  async createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord> {
    this.#db.run('INSERT INTO wallets (id, account_id, burn_month) VALUES (?, ?, ?)', id, accountId, month);
    return { id, accountId, balanceMicros: 0n, burnMonth: month, burnMonthMicros: 0n };
  }

  async getWallet(id: string): Promise<WalletRecord | null> {
    const row = this.#db.get('SELECT * FROM wallets WHERE id = ?', id);
    return row ? walletFrom(row) : null;
  }

  async createAccount(input: NewAccount, month: string): Promise<AccountRecord> {
    this.#db.tx(() => {
      this.#db.run(
        'INSERT INTO wallets (id, account_id, burn_month) VALUES (?, ?, ?)',
        input.walletId,
        input.id,
        month,
      );
      this.#db.run(
        'INSERT INTO accounts (id, email, password_hash, wallet_id, created_at, public_test_started_at) VALUES (?, ?, ?, ?, ?, ?)',
        input.id,
        input.email,
        input.passwordHash,
        input.walletId,
        input.createdAt,
        input.publicTestStartedAt,
      );
    });
    return { ...input, plan: 'standard', packageId: null, lowBalanceMicros: null };
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const row = this.#db.get('SELECT * FROM accounts WHERE id = ?', id);
    return row ? accountFrom(row) : null;
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    const row = this.#db.get('SELECT * FROM accounts WHERE email = ?', email);
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
    const entries = Object.entries(patch).filter(([field]) => field in columns);
    if (entries.length === 0) return;
    const sets = entries.map(([field]) => `${columns[field]} = ?`).join(', ');
    this.#db.raw
      .prepare(`UPDATE accounts SET ${sets} WHERE id = ?`)
      .run(...entries.map(([, v]) => v as SQLInputValue), id);
  }

  async listAccountsWithPackage(): Promise<AccountRecord[]> {
    return this.#db
      .all('SELECT * FROM accounts WHERE package_id IS NOT NULL ORDER BY created_at, id')
      .map((r) => accountFrom(r));
  }

  async setKeyCaps(
    id: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<boolean> {
    const result = this.#db.run(
      `UPDATE api_keys SET daily_cap_micros = CASE WHEN ? THEN ? ELSE daily_cap_micros END,
         monthly_cap_micros = CASE WHEN ? THEN ? ELSE monthly_cap_micros END WHERE id = ?`,
      caps.dailyCapMicros !== undefined ? 1 : 0,
      caps.dailyCapMicros ?? null,
      caps.monthlyCapMicros !== undefined ? 1 : 0,
      caps.monthlyCapMicros ?? null,
      id,
    );
    return Number(result.changes) === 1;
  }

  #insertKey(key: KeyRecord): void {
    this.#db.run(
      'INSERT INTO api_keys (id, kind, digest, display_prefix, name, account_id, wallet_id, created_at, expires_at, revoked_at, daily_cap_micros, monthly_cap_micros) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
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
    );
  }

  async insertKey(key: KeyRecord): Promise<void> {
    this.#insertKey(key);
  }

  async findKeyByDigest(digest: string): Promise<KeyContext | null> {
    const row = this.#db.get(
      `SELECT ${keyColumns}, ${walletColumns}, ${accountColumns} FROM api_keys k
         JOIN wallets w ON w.id = k.wallet_id
         LEFT JOIN accounts a ON a.id = k.account_id
       WHERE k.digest = ?`,
      digest,
    );
    if (!row) return null;
    return {
      key: keyFrom(row, 'k_'),
      wallet: walletFrom(row, 'w_'),
      account: row.a_id === null ? null : accountFrom(row, 'a_'),
    };
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = this.#db.get('SELECT * FROM api_keys WHERE id = ?', id);
    return row ? keyFrom(row) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    return this.#db
      .all('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id', accountId)
      .map((r) => keyFrom(r));
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return (
      Number(
        this.#db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id)
          .changes,
      ) === 1
    );
  }

  async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
    this.#db.tx(() => {
      this.#db.run(
        'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND kind = ? AND revoked_at IS NULL',
        at,
        accountId,
        kind,
      );
      this.#insertKey(key);
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    this.#db.run(
      'INSERT INTO sessions (id, account_id, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?)',
      session.id,
      session.accountId,
      session.createdAt,
      session.expiresAt,
      session.revokedAt,
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.#db.get('SELECT * FROM sessions WHERE id = ?', id);
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
    this.#db.run('UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
  }

  async insertPasswordReset(reset: PasswordReset): Promise<void> {
    this.#db.run(
      'INSERT INTO password_resets (digest, account_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)',
      reset.digest,
      reset.accountId,
      reset.createdAt,
      reset.expiresAt,
      reset.usedAt,
    );
  }

  async findPasswordReset(digest: string): Promise<PasswordReset | null> {
    const row = this.#db.get('SELECT * FROM password_resets WHERE digest = ?', digest);
    return row ? passwordResetFrom(row) : null;
  }

  async completePasswordReset(
    digest: string,
    passwordHash: string,
    at: number,
  ): Promise<{ accountId: string; sessionsEnded: number } | null> {
    return this.#db.tx(() => {
      const row = this.#db.get(
        `UPDATE password_resets SET used_at = ? WHERE digest = ? AND used_at IS NULL AND expires_at > ?
         RETURNING account_id`,
        at,
        digest,
        at,
      );
      if (!row) return null;
      const accountId = str(row.account_id);
      this.#db.run(
        'UPDATE password_resets SET used_at = ? WHERE account_id = ? AND used_at IS NULL',
        at,
        accountId,
      );
      this.#db.run('UPDATE accounts SET password_hash = ? WHERE id = ?', passwordHash, accountId);
      const ended = this.#db.run(
        'UPDATE sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL',
        at,
        accountId,
      );
      return { accountId, sessionsEnded: Number(ended.changes) };
    });
  }
}
