/**
 * PostgresStore: the shared store for several service nodes, on the `postgres` client. Money is bigint
 * in SQL and BigInt in JS. A debit is one conditional statement (`UPDATE … WHERE balance_micros >= cost
 * RETURNING …` with its ledger entry and usage event in the same statement), behind a CHECK constraint.
 * Debits that arrive together share one transaction (a group commit, in wallet order so batches from
 * several nodes can never deadlock); no promise resolves before its COMMIT, and a failed batch fails
 * every debit in it. Lost connections surface as `service_unavailable` (503): nothing is served
 * unmetered, and the client reconnects on the next query, so the service recovers without a restart.
 */
import postgres from 'postgres';
import type { Row } from '../../catalog/types.ts';
import type { KeyKind } from '../../domain/keys.ts';
import { AppError } from '../../errors.ts';
import type {
  AccountRecord,
  CreditInput,
  CreditResult,
  DebitInput,
  DebitResult,
  EntryKind,
  KeyContext,
  KeyRecord,
  LedgerAudit,
  LedgerEntry,
  NewAccount,
  Plan,
  RowQuery,
  RowSource,
  SessionRecord,
  SpendCap,
  Store,
  StoredRow,
  UsageEvent,
  UsageInput,
  UsageOutcome,
  WalletRecord,
} from '../port.ts';
import { postgresMigrations } from './migrations.ts';

type DbRow = Record<string, unknown>;
type Sql = postgres.Sql<{ bigint: bigint }>;
type Tx = postgres.TransactionSql<{ bigint: bigint }>;

const num = (v: unknown): number => Number(v);
const big = (v: unknown): bigint => BigInt(v as bigint | number | string);
const str = (v: unknown): string => String(v);
const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const optBig = (v: unknown): bigint | null => (v === null || v === undefined ? null : big(v));
const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Lock ids for pg_advisory_xact_lock: migrations, and one sample load per dataset. */
const MIGRATION_LOCK = 0x746d_6401;

function walletFrom(r: DbRow, p = ''): WalletRecord {
  return {
    id: str(r[`${p}id`]),
    accountId: optStr(r[`${p}account_id`]),
    balanceMicros: big(r[`${p}balance_micros`]),
    burnMonth: str(r[`${p}burn_month`]),
    burnMonthMicros: big(r[`${p}burn_month_micros`]),
  };
}

function accountFrom(r: DbRow, p = ''): AccountRecord {
  return {
    id: str(r[`${p}id`]),
    email: optStr(r[`${p}email`]),
    passwordHash: optStr(r[`${p}password_hash`]),
    plan: str(r[`${p}plan`]) as Plan,
    packageId: optStr(r[`${p}package_id`]),
    walletId: str(r[`${p}wallet_id`]),
    createdAt: num(r[`${p}created_at`]),
    publicTestStartedAt: optNum(r[`${p}public_test_started_at`]),
  };
}

function keyFrom(r: DbRow, p = ''): KeyRecord {
  return {
    id: str(r[`${p}id`]),
    kind: str(r[`${p}kind`]) as KeyKind,
    digest: str(r[`${p}digest`]),
    displayPrefix: str(r[`${p}display_prefix`]),
    name: optStr(r[`${p}name`]),
    accountId: optStr(r[`${p}account_id`]),
    walletId: str(r[`${p}wallet_id`]),
    createdAt: num(r[`${p}created_at`]),
    expiresAt: optNum(r[`${p}expires_at`]),
    revokedAt: optNum(r[`${p}revoked_at`]),
    dailyCapMicros: optBig(r[`${p}daily_cap_micros`]),
    monthlyCapMicros: optBig(r[`${p}monthly_cap_micros`]),
  };
}

function entryFrom(r: DbRow): LedgerEntry {
  return {
    id: str(r.id),
    walletId: str(r.wallet_id),
    kind: str(r.kind) as EntryKind,
    amountMicros: big(r.amount_micros),
    balanceAfterMicros: big(r.balance_after_micros),
    createdAt: num(r.created_at),
    requestId: optStr(r.request_id),
    idempotencyKey: optStr(r.idempotency_key),
    memo: optStr(r.memo),
  };
}

function usageFrom(r: DbRow): UsageEvent {
  return {
    id: str(r.id),
    requestId: str(r.request_id),
    keyId: optStr(r.key_id),
    accountId: optStr(r.account_id),
    walletId: str(r.wallet_id),
    dataset: str(r.dataset),
    channel: str(r.channel) as UsageEvent['channel'],
    listCostMicros: big(r.list_cost_micros),
    costMicros: big(r.cost_micros),
    burnedMicros: big(r.burned_micros),
    outcome: str(r.outcome) as UsageOutcome,
    rows: num(r.rows),
    at: num(r.at),
  };
}

const keyColumns =
  'k.id AS k_id, k.kind AS k_kind, k.digest AS k_digest, k.display_prefix AS k_display_prefix, k.name AS k_name, ' +
  'k.account_id AS k_account_id, k.wallet_id AS k_wallet_id, k.created_at AS k_created_at, k.expires_at AS k_expires_at, ' +
  'k.revoked_at AS k_revoked_at, k.daily_cap_micros AS k_daily_cap_micros, k.monthly_cap_micros AS k_monthly_cap_micros';
const walletColumns =
  'w.id AS w_id, w.account_id AS w_account_id, w.balance_micros AS w_balance_micros, w.burn_month AS w_burn_month, ' +
  'w.burn_month_micros AS w_burn_month_micros';
const accountColumns =
  'a.id AS a_id, a.email AS a_email, a.password_hash AS a_password_hash, a.plan AS a_plan, a.package_id AS a_package_id, ' +
  'a.wallet_id AS a_wallet_id, a.created_at AS a_created_at, a.public_test_started_at AS a_public_test_started_at';

/** SQLSTATE classes and client codes that mean "the database cannot be reached", not "the query is wrong". */
const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57014', // query_canceled: the statement timeout fired
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: a standby after a failover
]);

export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return unavailableCodes.has(code) || code.startsWith('08');
}

/** Connection-level failures become 503 service_unavailable; anything else is a fault (500). */
function translate(error: unknown): unknown {
  if (error instanceof AppError || !isUnavailable(error)) return error;
  return new AppError('service_unavailable', 'The ledger database cannot be reached; nothing was served.', {
    retry_after: 1,
  });
}

interface Pending {
  walletId: string;
  run: (tx: Tx | Sql) => postgres.PendingQuery<postgres.Row[]>;
  resolve: (rows: postgres.Row[]) => void;
  reject: (error: unknown) => void;
}

export interface PostgresStoreOptions {
  /** Connections in this process's pool. */
  max?: number;
  /** Debits (and zero-burn usage records) per group-commit transaction, at most. */
  maxBatch?: number;
  /** Group-commit transactions in flight at once; further debits queue and join the next batch. */
  maxConcurrentBatches?: number;
  /** A statement that takes longer fails (and the read with it) rather than holding a request. */
  statementTimeoutMs?: number;
  connectTimeoutS?: number;
}

export class PostgresStore implements Store {
  readonly #sql: Sql;
  readonly #maxBatch: number;
  readonly #maxConcurrentBatches: number;
  #queue: Pending[] = [];
  #batchesInFlight = 0;
  #flushScheduled = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxConcurrentBatches = options.maxConcurrentBatches ?? 4;
    this.#sql = postgres(url, {
      max: options.max ?? 10,
      types: { bigint: postgres.BigInt },
      onnotice: () => {},
      connect_timeout: options.connectTimeoutS ?? 5,
      idle_timeout: 60,
      connection: {
        application_name: 'token-metered-data',
        statement_timeout: options.statementTimeoutMs ?? 15_000,
      },
    });
  }

  /** Runs a query, turning connection failures into 503s. */
  async #q<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    try {
      return await work(this.#sql);
    } catch (error) {
      throw translate(error);
    }
  }

  async #tx<T>(work: (tx: Tx) => Promise<T>, options = ''): Promise<T> {
    try {
      return (await this.#sql.begin(options, (tx) => work(tx))) as T;
    } catch (error) {
      throw translate(error);
    }
  }

  async migrate(): Promise<void> {
    // The advisory lock makes concurrent starts take turns: the first applies, the others find it done.
    await this.#tx(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx.unsafe(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
      );
      const applied = new Set((await tx`SELECT version FROM schema_migrations`).map((r) => Number(r.version)));
      for (const migration of postgresMigrations) {
        if (applied.has(migration.version)) continue;
        await tx.unsafe(migration.sql);
        await tx`INSERT INTO schema_migrations (version, name, applied_at)
                 VALUES (${migration.version}, ${migration.name}, ${Date.now()})`;
      }
    });
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }

  async ping(): Promise<void> {
    await this.#q((sql) => sql`SELECT 1`);
  }

  async createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord> {
    await this.#q((sql) => sql`INSERT INTO wallets (id, account_id, burn_month) VALUES (${id}, ${accountId}, ${month})`);
    return { id, accountId, balanceMicros: 0n, burnMonth: month, burnMonthMicros: 0n };
  }

  async getWallet(id: string): Promise<WalletRecord | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM wallets WHERE id = ${id}`);
    return row ? walletFrom(row) : null;
  }

  async createAccount(input: NewAccount, month: string): Promise<AccountRecord> {
    await this.#tx(async (tx) => {
      await tx`INSERT INTO wallets (id, account_id, burn_month) VALUES (${input.walletId}, ${input.id}, ${month})`;
      await tx`INSERT INTO accounts (id, email, password_hash, wallet_id, created_at, public_test_started_at)
               VALUES (${input.id}, ${input.email}, ${input.passwordHash}, ${input.walletId}, ${input.createdAt},
                       ${input.publicTestStartedAt})`;
    });
    return { ...input, plan: 'standard', packageId: null };
  }

  async getAccount(id: string): Promise<AccountRecord | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM accounts WHERE id = ${id}`);
    return row ? accountFrom(row) : null;
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM accounts WHERE email = ${email}`);
    return row ? accountFrom(row) : null;
  }

  async updateAccount(
    id: string,
    patch: Partial<Pick<AccountRecord, 'plan' | 'packageId' | 'passwordHash' | 'publicTestStartedAt'>>,
  ): Promise<void> {
    const columns: Record<string, string> = {
      plan: 'plan',
      packageId: 'package_id',
      passwordHash: 'password_hash',
      publicTestStartedAt: 'public_test_started_at',
    };
    const values: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(patch)) {
      const column = columns[field];
      if (column && value !== undefined) values[column] = value;
    }
    if (Object.keys(values).length === 0) return;
    await this.#q((sql) => sql`UPDATE accounts SET ${sql(values)} WHERE id = ${id}`);
  }

  async listAccountsWithPackage(): Promise<AccountRecord[]> {
    const rows = await this.#q(
      (sql) => sql`SELECT * FROM accounts WHERE package_id IS NOT NULL ORDER BY created_at, id`,
    );
    return rows.map((r) => accountFrom(r));
  }

  async setKeyCaps(
    id: string,
    caps: { dailyCapMicros: bigint | null; monthlyCapMicros: bigint | null },
  ): Promise<boolean> {
    const result = await this.#q(
      (sql) => sql`UPDATE api_keys SET daily_cap_micros = ${caps.dailyCapMicros},
                                       monthly_cap_micros = ${caps.monthlyCapMicros}
                    WHERE id = ${id}`,
    );
    return result.count === 1;
  }

  #insertKey(sql: Sql | Tx, key: KeyRecord) {
    return sql`INSERT INTO api_keys (id, kind, digest, display_prefix, name, account_id, wallet_id, created_at,
                                     expires_at, revoked_at, daily_cap_micros, monthly_cap_micros)
               VALUES (${key.id}, ${key.kind}, ${key.digest}, ${key.displayPrefix}, ${key.name}, ${key.accountId},
                       ${key.walletId}, ${key.createdAt}, ${key.expiresAt}, ${key.revokedAt}, ${key.dailyCapMicros},
                       ${key.monthlyCapMicros})`;
  }

  async insertKey(key: KeyRecord): Promise<void> {
    await this.#q((sql) => this.#insertKey(sql, key));
  }

  async findKeyByDigest(digest: string): Promise<KeyContext | null> {
    const [row] = await this.#q(
      (sql) => sql`SELECT ${sql.unsafe(keyColumns)}, ${sql.unsafe(walletColumns)}, ${sql.unsafe(accountColumns)}
                     FROM api_keys k
                     JOIN wallets w ON w.id = k.wallet_id
                     LEFT JOIN accounts a ON a.id = k.account_id
                    WHERE k.digest = ${digest}`,
    );
    if (!row) return null;
    return {
      key: keyFrom(row, 'k_'),
      wallet: walletFrom(row, 'w_'),
      account: row.a_id === null ? null : accountFrom(row, 'a_'),
    };
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM api_keys WHERE id = ${id}`);
    return row ? keyFrom(row) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    const rows = await this.#q(
      (sql) => sql`SELECT * FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at, id`,
    );
    return rows.map((r) => keyFrom(r));
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const result = await this.#q(
      (sql) => sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`,
    );
    return result.count === 1;
  }

  async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
    await this.#tx(async (tx) => {
      await tx`UPDATE api_keys SET revoked_at = ${at}
                WHERE account_id = ${accountId} AND kind = ${kind} AND revoked_at IS NULL`;
      await this.#insertKey(tx, key);
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    await this.#q(
      (sql) => sql`INSERT INTO sessions (id, account_id, created_at, expires_at, revoked_at)
                   VALUES (${session.id}, ${session.accountId}, ${session.createdAt}, ${session.expiresAt},
                           ${session.revokedAt})`,
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM sessions WHERE id = ${id}`);
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
    await this.#q(
      (sql) => sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`,
    );
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a credit must be positive');
    return this.#tx(async (tx) => {
      // Lock the wallet first: a concurrent credit with the same idempotency key then waits here, and
      // the next statement (a fresh snapshot under READ COMMITTED) sees the entry the other committed.
      const [wallet] = await tx`SELECT id FROM wallets WHERE id = ${input.walletId} FOR UPDATE`;
      if (!wallet) throw new Error(`wallet ${input.walletId} does not exist`);
      if (input.idempotencyKey) {
        const [existing] = await tx`SELECT * FROM ledger_entries
                                     WHERE wallet_id = ${input.walletId} AND idempotency_key = ${input.idempotencyKey}`;
        if (existing) return { entry: entryFrom(existing), duplicate: true };
      }
      const [entry] = await tx`
        WITH w AS (
          UPDATE wallets SET balance_micros = balance_micros + ${input.amountMicros}
           WHERE id = ${input.walletId} RETURNING balance_micros
        )
        INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id,
                                    idempotency_key, memo)
        SELECT ${input.walletId}, ${input.kind}, ${input.amountMicros}, w.balance_micros, ${input.at},
               ${input.requestId ?? null}, ${input.idempotencyKey ?? null}, ${input.memo ?? null}
          FROM w
        RETURNING *`;
      return { entry: entryFrom(entry as DbRow), duplicate: false };
    });
  }

  #usageQuery(sql: Tx | Sql, u: UsageInput) {
    return sql`INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                         cost_micros, burned_micros, outcome, rows, at)
               VALUES (${u.requestId}, ${u.keyId}, ${u.accountId}, ${u.walletId}, ${u.dataset}, ${u.channel},
                       ${u.listCostMicros}, ${u.costMicros}, ${u.burnedMicros}, ${u.outcome}, ${u.rows}, ${u.at})`;
  }

  /** The debit: one conditional statement that moves the balance and writes its entry and usage event. */
  #debitQuery(sql: Tx | Sql, input: DebitInput) {
    const u = input.usage;
    return sql`
      WITH w AS (
        UPDATE wallets
           SET balance_micros = balance_micros - ${input.amountMicros},
               burn_month_micros = CASE WHEN burn_month = ${input.month}
                                        THEN burn_month_micros + ${input.amountMicros}
                                        ELSE ${input.amountMicros} END,
               burn_month = ${input.month}
         WHERE id = ${input.walletId} AND balance_micros >= ${input.amountMicros}
        RETURNING balance_micros, burn_month_micros
      ), e AS (
        INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
        SELECT ${input.walletId}, 'burn', ${-input.amountMicros}, w.balance_micros, ${u.at}, ${u.requestId} FROM w
        RETURNING id
      ), u AS (
        INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                  cost_micros, burned_micros, outcome, rows, at)
        SELECT ${u.requestId}, ${u.keyId}, ${u.accountId}, ${u.walletId}, ${u.dataset}, ${u.channel},
               ${u.listCostMicros}, ${u.costMicros}, ${u.burnedMicros}, ${u.outcome}, ${u.rows}, ${u.at} FROM w
      )
      SELECT w.balance_micros, w.burn_month_micros, e.id AS entry_id FROM w, e`;
  }

  /**
   * Group commit. A lone debit runs as one autocommit statement (one round trip); when more arrive
   * while batches are in flight, they wait and go together in one transaction, pipelined, ordered by
   * wallet so that concurrent batches (from this node or others) take row locks in the same order.
   */
  #enqueue(walletId: string, run: Pending['run']): Promise<postgres.Row[]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ walletId, run, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#flushScheduled || this.#queue.length === 0) return;
    if (this.#batchesInFlight >= this.#maxConcurrentBatches) return;
    this.#flushScheduled = true;
    // The rest of this turn's debits join the batch.
    setImmediate(() => {
      this.#flushScheduled = false;
      while (this.#queue.length > 0 && this.#batchesInFlight < this.#maxConcurrentBatches) {
        void this.#flush(this.#queue.splice(0, this.#maxBatch));
      }
    });
  }

  async #flush(batch: Pending[]): Promise<void> {
    this.#batchesInFlight++;
    try {
      let results: postgres.Row[][];
      try {
        if (batch.length === 1) {
          const only = batch[0] as Pending;
          results = [await only.run(this.#sql)];
        } else {
          const ordered = [...batch].sort((a, b) => (a.walletId < b.walletId ? -1 : a.walletId > b.walletId ? 1 : 0));
          const rows = (await this.#sql.begin((tx) => ordered.map((item) => item.run(tx)))) as postgres.Row[][];
          const byItem = new Map(ordered.map((item, index) => [item, rows[index] as postgres.Row[]]));
          results = batch.map((item) => byItem.get(item) as postgres.Row[]);
        }
      } catch (error) {
        const translated = translate(error);
        for (const item of batch) item.reject(translated);
        return;
      }
      batch.forEach((item, index) => {
        item.resolve(results[index] as postgres.Row[]);
      });
    } finally {
      this.#batchesInFlight--;
      this.#schedule();
    }
  }

  async debit(input: DebitInput): Promise<DebitResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a debit must be positive');
    const keyId = input.usage.keyId;
    const caps = keyId === null ? [] : (input.spendCaps ?? []);
    const [row] =
      caps.length > 0
        ? await this.#cappedDebit(input, keyId as string, caps)
        : await this.#enqueue(input.walletId, (sql) => this.#debitQuery(sql, input));
    if (row && 'cap' in row) {
      const wallet = await this.getWallet(input.walletId);
      return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n, cap: row.cap as SpendCap & { spentMicros: bigint } };
    }
    if (row) {
      return {
        ok: true,
        balanceMicros: big(row.balance_micros),
        burnMonthMicros: big(row.burn_month_micros),
        entryId: str(row.entry_id),
      };
    }
    const wallet = await this.getWallet(input.walletId);
    return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n };
  }

  /**
   * A debit under per-key spending caps. The wallet row is locked first, so every other debit of this
   * key (they all debit this wallet) waits; the sums that follow are fresh statements that see every
   * burn committed before, and nothing can commit in between. Caps are rare (Partner keys): these run
   * in their own transaction rather than in the group commit.
   */
  async #cappedDebit(input: DebitInput, keyId: string, caps: readonly SpendCap[]): Promise<DbRow[]> {
    return this.#tx(async (tx) => {
      await tx`SELECT 1 FROM wallets WHERE id = ${input.walletId} FOR UPDATE`;
      for (const cap of caps) {
        const [spent] = await tx`SELECT COALESCE(sum(burned_micros), 0)::text AS spent FROM usage_events
                                  WHERE key_id = ${keyId} AND at >= ${cap.sinceMs}`;
        const spentMicros = big(spent?.spent ?? 0);
        if (spentMicros + input.amountMicros > cap.capMicros) return [{ cap: { ...cap, spentMicros } }];
      }
      return [...(await this.#debitQuery(tx, input))];
    });
  }

  async recordUsage(usage: UsageInput): Promise<void> {
    await this.#enqueue(usage.walletId, (sql) => this.#usageQuery(sql, usage));
  }

  async listEntries(walletId: string): Promise<LedgerEntry[]> {
    const rows = await this.#q((sql) => sql`SELECT * FROM ledger_entries WHERE wallet_id = ${walletId} ORDER BY id`);
    return rows.map(entryFrom);
  }

  async auditLedger(): Promise<LedgerAudit> {
    // One snapshot for all three figures, so a debit committing meanwhile cannot show as a mismatch.
    return this.#tx(async (tx) => {
      const [counts] = await tx`SELECT (SELECT count(*) FROM wallets) AS wallets,
                                       (SELECT count(*) FROM ledger_entries) AS entries`;
      const mismatches = await tx`
        SELECT w.id, w.balance_micros, COALESCE(e.total, 0) AS total
          FROM wallets w
          LEFT JOIN (SELECT wallet_id, sum(amount_micros) AS total FROM ledger_entries GROUP BY wallet_id) e
            ON e.wallet_id = w.id
         WHERE w.balance_micros <> COALESCE(e.total, 0) OR w.balance_micros < 0`;
      return {
        wallets: num(counts?.wallets),
        entries: num(counts?.entries),
        mismatches: mismatches.map((r) => ({
          walletId: str(r.id),
          balanceMicros: big(r.balance_micros),
          // sum(bigint) is numeric in PostgreSQL, returned as a decimal string: exact.
          entriesMicros: big(r.total),
        })),
      };
    }, 'isolation level repeatable read read only');
  }

  async sumEntries(walletId: string): Promise<bigint> {
    const [row] = await this.#q(
      (sql) => sql`SELECT COALESCE(sum(amount_micros), 0)::text AS total FROM ledger_entries WHERE wallet_id = ${walletId}`,
    );
    return big(row?.total ?? 0);
  }

  async listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]> {
    const before = beforeId === null ? 9_223_372_036_854_775_807n : BigInt(beforeId);
    const rows = await this.#q((sql) =>
      'accountId' in scope
        ? sql`SELECT * FROM usage_events WHERE account_id = ${scope.accountId} AND id < ${before}
               ORDER BY id DESC LIMIT ${limit}`
        : sql`SELECT * FROM usage_events WHERE key_id = ${scope.keyId} AND id < ${before}
               ORDER BY id DESC LIMIT ${limit}`,
    );
    return rows.map(usageFrom);
  }

  async loadRows(dataset: string, timeField: string, rows: readonly Row[], source: RowSource): Promise<boolean> {
    return this.#tx(async (tx) => {
      // One loader per dataset at a time across every node; the others then see it loaded.
      await tx`SELECT pg_advisory_xact_lock(hashtext(${`dataset:${dataset}`}))`;
      const [present] = await tx`SELECT 1 FROM dataset_sources WHERE dataset = ${dataset}`;
      if (present && source === 'sample') return false;
      await tx`DELETE FROM dataset_rows WHERE dataset = ${dataset}`;
      const chunk = 5000;
      for (let start = 0; start < rows.length; start += chunk) {
        const slice = rows.slice(start, start + chunk);
        const ids = slice.map((_, index) => start + index + 1);
        const times = slice.map((row) => String(row[timeField] ?? ''));
        const docs = slice.map((row) => JSON.stringify(row));
        await tx`INSERT INTO dataset_rows (dataset, id, t, data)
                 SELECT ${dataset}, x.id, x.t, x.d::json
                   FROM unnest(${ids}::int[], ${times}::text[], ${docs}::text[]) AS x(id, t, d)`;
      }
      await tx`INSERT INTO dataset_sources (dataset, source, row_count, loaded_at)
               VALUES (${dataset}, ${source}, ${rows.length}, ${Date.now()})
               ON CONFLICT (dataset) DO UPDATE
                 SET source = excluded.source, row_count = excluded.row_count, loaded_at = excluded.loaded_at`;
      return true;
    });
  }

  async datasetSource(dataset: string): Promise<{ source: RowSource; rows: number; loadedAt: number } | null> {
    const [row] = await this.#q((sql) => sql`SELECT * FROM dataset_sources WHERE dataset = ${dataset}`);
    return row
      ? { source: str(row.source) as RowSource, rows: num(row.row_count), loadedAt: num(row.loaded_at) }
      : null;
  }

  async queryRows(q: RowQuery): Promise<StoredRow[]> {
    const sql = this.#sql;
    const conditions: postgres.PendingQuery<postgres.Row[]>[] = [sql`dataset = ${q.dataset}`];
    if (q.from !== undefined) conditions.push(sql`t >= ${q.from}`);
    if (q.toExclusive !== undefined) conditions.push(sql`t < ${q.toExclusive}`);
    for (const [field, values] of Object.entries(q.filters)) {
      // The field name is a bound parameter of ->>, never spliced into SQL. Numbers and booleans
      // compare by their JSON text, as in SQLite (entity fields are strings in every shipped dataset).
      conditions.push(sql`data ->> ${field} = ANY(${values}::text[])`);
    }
    if (q.after) {
      conditions.push(
        q.descending ? sql`(t, id) < (${q.after.t}, ${q.after.id})` : sql`(t, id) > (${q.after.t}, ${q.after.id})`,
      );
    }
    const where = conditions.reduce((all, condition) => sql`${all} AND ${condition}`);
    const order = q.descending ? sql`ORDER BY t DESC, id DESC` : sql`ORDER BY t ASC, id ASC`;
    const rows = await this.#q(() => sql`SELECT id, t, data::text AS json FROM dataset_rows WHERE ${where} ${order} LIMIT ${q.limit}`);
    return rows.map((r) => ({ id: num(r.id), t: str(r.t), json: str(r.json) }));
  }
}
