/**
 * PostgresStore: the shared store for several service nodes, on node-postgres (`pg`). Money is bigint
 * in SQL and BigInt in JS. A debit is one conditional statement (`UPDATE … WHERE balance_micros >= cost
 * RETURNING …` with its ledger entry and usage event in the same statement), behind a CHECK constraint.
 * Debits that arrive together share one transaction (a group commit, in wallet order so batches from
 * several nodes can never deadlock; a wallet's debits in it are one conditional UPDATE of their total
 * when its balance covers them all); no promise resolves before its COMMIT, and a failed batch fails
 * every debit in it. Lost connections surface as `service_unavailable` (503): nothing is served
 * unmetered, and the client reconnects on the next query, so the service recovers without a restart.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { csvColumnsKey, csvRecord } from '../../catalog/csv.ts';
import type { Row } from '../../catalog/types.ts';
import { AppError, serviceUnavailable } from '../../errors.ts';
import { analysisColumns, analysisFrom, analysisRunFrom, runFilter } from '../analysis-rows.ts';
import {
  MICROS_PER_TOKEN,
  type NewTokenPurchase,
  purchaseFrom,
  type Reclaimed,
  type TokenPurchase,
  type TokenRequest,
  type TokenRequestStatus,
  tokenRequestFrom,
} from '../billing-port.ts';
import {
  COLLECTION_RUN_INSERT,
  COLLECTOR_STATE_COLUMNS,
  type CollectionRun,
  type CollectorState,
  collectionRunFrom,
  collectorStateFrom,
} from '../collection-port.ts';
import type { Claim, StoredResponse } from '../idempotency-port.ts';
import {
  type DatasetSpan,
  distinctByKey,
  type ImportRun,
  type KeyedRow,
  type NewImportRun,
} from '../import-port.ts';
import { importRunFrom, NEW_RUN_COLUMNS, newRunValues } from '../import-rows.ts';
import type { NewOAuthRecord, OAuthConnection, OAuthRecord } from '../oauth-port.ts';
import type { PasswordReset } from '../password-reset-port.ts';
import type {
  AnalysisRecord,
  AnalysisRunOutcome,
  AnalysisRunRecord,
  KeyKind,
  NewAnalysisRun,
} from '../port.ts';
import {
  type AccountRecord,
  BalanceLimitReached,
  type CreditInput,
  type CreditResult,
  type DebitInput,
  type DebitResult,
  type EntryKind,
  type KeyContext,
  type KeyRecord,
  type LedgerAudit,
  type LedgerEntry,
  type NewAccount,
  type PageQuery,
  type RowQuery,
  type RowSource,
  type RowsPage,
  type SessionRecord,
  type SpendCap,
  type Store,
  type StoredPage,
  type StoredRow,
  type UsageEvent,
  type UsageInput,
  type UsageSum,
  type WalletRecord,
} from '../port.ts';
import {
  entityKey,
  entityKeyColumns,
  layoutText,
  planScan,
  SCAN_CAP,
  ScanGate,
  type ScanPlan,
} from '../row-scan.ts';
import {
  accountColumns,
  accountFrom,
  big,
  type DbRow,
  entryFrom,
  keyColumns,
  keyFrom,
  num,
  oauthConnectionFrom,
  oauthRecordFrom,
  optNum,
  optStr,
  pageOfRows,
  passwordResetFrom,
  rowLimit,
  str,
  usageFrom,
  usageSumFrom,
  walletColumns,
  walletFrom,
} from '../rows.ts';
import { postgresMigrations } from './migrations.ts';

/** Lock ids for pg_advisory_xact_lock: migrations, and one sample load per dataset. */
const MIGRATION_LOCK = 0x746d_6401;

/** Client codes and SQLSTATEs of a database that cannot be reached at all (any 08 class too). */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNABORTED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
]);

/** pg reports a lost or failed connection with these messages and no code. */
const unreachableMessages =
  /Connection terminated|connection timeout|Query read timeout|Client has encountered a connection error/i;

/** SQLSTATEs of a database that answers but cannot serve the statement now. */
const refusingCodes = new Set([
  '57014', // query_canceled: the statement timeout fired
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: a standby after a failover
]);

/** The pool's own refusals: no free connection in time, or the pool is closing. */
const refusingMessages =
  /timeout exceeded when trying to connect|Cannot use a pool after calling end|not queryable/i;

/**
 * A Unix socket path with no server behind it (a stopped server removes its socket): ENOENT from the
 * connect itself, not from a file the URL names (an sslrootcert that does not exist is a fault to fix).
 */
const missingSocket = (error: unknown): boolean => {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return code === 'ENOENT' && syscall === 'connect';
};

/**
 * Whether the database cannot be reached at all (the connection failed, or the server is stopping), as
 * opposed to a database that answers but refuses this statement now (isUnavailable's other cases): both
 * are 503s, but only the first is an outage to raise.
 */
export function isUnreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (missingSocket(error)) return true;
  if (typeof code === 'string' && (unreachableCodes.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && unreachableMessages.test(message);
}

/**
 * Whether a statement failed because the database cannot serve it now (a 503), not because it is
 * wrong: unreachable, or answering but refusing (a statement timeout on a lock, a pool with no free
 * connection, too many connections, a read-only standby).
 */
export function isUnavailable(error: unknown): boolean {
  if (isUnreachable(error)) return true;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && refusingCodes.has(code)) return true;
  return typeof message === 'string' && refusingMessages.test(message);
}

/** Whether the database at `url` is a hot standby (in recovery: it serves reads, refuses writes). */
export async function isStandby(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    return rows[0]?.standby === true;
  } finally {
    await client.end();
  }
}

/** Told when the database stops answering and when it answers again (the operator's log and metrics). */
export interface StoreHealth {
  /** A statement was refused with a 503 (each time: a counter). */
  refused(error: Error): void;
  /** The database could not be reached, the first time since it last answered. */
  unreachable(error: Error): void;
  /** The first statement that succeeded after the database could not be reached. */
  reachable(): void;
}

const MAX_PAGE_SHAPES = 256;

/** A key's burns since an instant (spending caps): index-only on usage_events_key_spend; exact as text. */
const KEY_BURNED_SINCE =
  'SELECT COALESCE(sum(burned_micros), 0)::text AS spent FROM usage_events WHERE key_id = $1 AND at >= $2';

interface Statement {
  /**
   * A named (prepared) statement: each pooled connection parses and plans it once, then only binds and
   * executes it. Planning the three-part debit statement costs PostgreSQL more than running it.
   */
  name: string;
  text: string;
  values: unknown[];
}

interface Pending {
  walletId: string;
  /** What a lone item runs: the debit statement, or the usage insert. */
  statement: Statement;
  /** 0 for a zero-burn usage record. */
  amountMicros: bigint;
  month: string;
  usage: UsageInput;
  resolve: (rows: DbRow[]) => void;
  reject: (error: unknown) => void;
}

export interface PostgresStoreOptions {
  /** Connections in this process's pool. */
  max?: number;
  /** Debits (and zero-burn usage records) per group-commit transaction, at most. */
  maxBatch?: number;
  /**
   * Group-commit transactions in flight at once; further debits queue and join the next batch. A wallet
   * is in one of them at most: its next debits wait for the next batch rather than queue on its row lock.
   */
  maxConcurrentBatches?: number;
  /** A statement that takes longer fails (and the read with it) rather than holding a request. */
  statementTimeoutMs?: number;
  /**
   * A page query that takes longer is stopped and answered as a 503, nothing charged (default 2000 ms).
   * Page queries run on a pool of their own, so the ledger's statements keep their own timeout.
   */
  readTimeoutMs?: number;
  /** Where page queries go (a read replica, say); the store's own database by default. */
  readUrl?: string;
  /**
   * Reads that check rows one by one running at once on this node (default 1); the others wait their
   * turn, so that a burst of them leaves the database's CPU to everyone else's reads and debits.
   */
  maxConcurrentScans?: number;
  connectTimeoutMs?: number;
  /**
   * How long the client waits for any answer before it gives the connection up (503, the connection
   * discarded): a connection whose packets are silently dropped (a failover, a firewall losing its
   * state) would otherwise hold its request, and the wallet's later debits behind it, until TCP gives
   * up. Default: the statement timeout plus 5 s, so a live server's own timeout always comes first.
   */
  queryTimeoutMs?: number;
  health?: StoreHealth;
}

/** The most one load's COPY may take before the client gives its connection up. */
const COPY_TIMEOUT_MS = 6 * 3_600_000;

/** The channel a load NOTIFYs with its dataset's key as it commits (onLoaded). */
const LOADED_CHANNEL = 'tmd_dataset_loaded';

/** Rows per INSERT of a load: one statement's arrays stay a few MB. */
const LOAD_BATCH_ROWS = 5000;

/** A cell in COPY's text format: \N for null; backslash, tab and line ends escaped. */
function copyCell(value: string | number | null): string {
  if (value === null) return '\\N';
  return String(value).replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

/** Binds a value: its placeholder ($n) in `values`. */
function bindOf(values: unknown[], value: unknown): string {
  values.push(value);
  return `$${values.length}`;
}

/**
 * `cols` of the rows the plan's index yields in the query's order, `limit` of them from `offset` ($1 is
 * the dataset). One key walks its index and stops; several keys are one walk each under a MergeAppend,
 * which reads each only as far as the merge takes it.
 */
function walkSql(
  q: RowQuery,
  plan: ScanPlan,
  cols: string,
  limit: number,
  values: unknown[],
  offset = 0,
): string {
  const bounds: string[] = [];
  if (q.from !== undefined) bounds.push(`t >= ${bindOf(values, q.from)}`);
  if (q.toExclusive !== undefined) bounds.push(`t < ${bindOf(values, q.toExclusive)}`);
  if (q.after)
    bounds.push(
      `(t, id) ${q.descending ? '<' : '>'} (${bindOf(values, q.after.t)}, ${bindOf(values, q.after.id)}::int)`,
    );
  const direction = q.descending ? 'DESC' : 'ASC';
  const order = `ORDER BY t ${direction}, id ${direction}`;
  const window = `LIMIT ${rowLimit(limit)}${offset > 0 ? ` OFFSET ${rowLimit(offset)}` : ''}`;
  const arm = (key: string | null, armLimit: string) => {
    const where = ['dataset = $1', ...bounds];
    if (plan.index && key !== null) where.splice(1, 0, `${plan.index.column} = ${bindOf(values, key)}`);
    return `SELECT ${cols} FROM dataset_rows WHERE ${where.join(' AND ')} ${order} ${armLimit}`;
  };
  const index = plan.index;
  if (index === null || index.keys.length === 1) return arm(index?.keys[0] ?? null, window);
  const arms = index.keys.map((key) => `(${arm(key, `LIMIT ${rowLimit(limit + offset)}`)})`);
  return `SELECT * FROM (${arms.join(' UNION ALL ')}) m ${order} ${window}`;
}

/** The key column expressions of a layout over a json value (`json`), as rowKeys computes them. */
function keyExprs(json: string, entityFields: readonly string[], values: unknown[]): string[] {
  return entityKeyColumns.map((_, slot) => {
    const field = entityFields[slot];
    if (field === undefined) return 'NULL::text';
    const name = bindOf(values, field);
    // Text as itself, numbers and booleans as their JSON text (the json type keeps it as written).
    return `CASE json_typeof(${json} -> ${name}) WHEN 'string' THEN ${json} ->> ${name}
      WHEN 'number' THEN (${json} -> ${name})::text WHEN 'boolean' THEN (${json} -> ${name})::text END`;
  });
}

/** Sets a dataset's key columns for `entityFields` from its stored rows. */
async function rekey(tx: pg.PoolClient, dataset: string, entityFields: readonly string[]): Promise<void> {
  const values: unknown[] = [dataset];
  const sets = keyExprs('data', entityFields, values).map(
    (expr, slot) => `${entityKeyColumns[slot]} = ${expr}`,
  );
  await tx.query(`UPDATE dataset_rows SET ${sets.join(', ')} WHERE dataset = $1`, values);
  await tx.query('UPDATE dataset_sources SET entity_fields = $2 WHERE dataset = $1', [
    dataset,
    layoutText(entityFields),
  ]);
}

export class PostgresStore implements Store {
  readonly #pool: pg.Pool;
  /** Page queries: their own connections, with readTimeoutMs as the statement timeout. */
  readonly #readPool: pg.Pool;
  readonly #readTimeoutMs: number;
  readonly #scans: ScanGate;
  readonly #url: string;
  readonly #loadListeners = new Set<(dataset: string) => void>();
  #listening = false;
  /** Resolves once the first LISTEN is in place. */
  #listeningReady: Promise<void> = Promise.resolve();
  #listener: pg.Client | null = null;
  #closed = false;
  /** Each dataset's entity fields, the order of its key columns (syncLayouts). */
  #layouts: ReadonlyMap<string, readonly string[]> = new Map();
  /** Page query shapes seen, SQL text -> prepared statement name. */
  readonly #pageShapes = new Map<string, string>();
  readonly #maxBatch: number;
  readonly #maxConcurrentBatches: number;
  #queue: Pending[] = [];
  /** Wallets debited by a batch in flight. */
  readonly #busyWallets = new Set<string>();
  #batchesInFlight = 0;
  #flushScheduled = false;
  readonly #health: StoreHealth | undefined;
  /** Whether the database could not be reached, with no statement answered since. */
  #down = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.#url = url;
    this.#health = options.health;
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxConcurrentBatches = options.maxConcurrentBatches ?? 4;
    const statementTimeoutMs = options.statementTimeoutMs ?? 15_000;
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 60_000,
      statement_timeout: statementTimeoutMs,
      query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 5000,
      // Idle pooled connections that died without a FIN are found by TCP keepalive, not by a read.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'token-metered-data',
    });
    // An idle connection that dies (server restart) is dropped by the pool; the next query reconnects.
    this.#pool.on('error', () => {});
    this.#readTimeoutMs = options.readTimeoutMs ?? 2000;
    this.#scans = new ScanGate(options.maxConcurrentScans ?? 1);
    this.#readPool = new pg.Pool({
      connectionString: options.readUrl ?? url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 60_000,
      statement_timeout: this.#readTimeoutMs,
      query_timeout: this.#readTimeoutMs + 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'token-metered-data-reads',
    });
    this.#readPool.on('error', () => {});
  }

  /** Connection-level failures become 503 service_unavailable (and are reported); anything else is a fault (500). */
  #translate(error: unknown): unknown {
    if (error instanceof AppError || !isUnavailable(error)) return error;
    this.#health?.refused(error as Error);
    if (!this.#down && isUnreachable(error)) {
      this.#down = true;
      this.#health?.unreachable(error as Error);
    }
    return serviceUnavailable('The ledger database cannot be reached; nothing was served.');
  }

  /** A statement succeeded: if the database had been unreachable, it is back. */
  #answered(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#health?.reachable();
  }

  /** Runs one statement, turning connection failures into 503s. */
  async #q(text: string | pg.QueryConfig, values: unknown[] = []): Promise<pg.QueryResult<DbRow>> {
    let result: pg.QueryResult<DbRow>;
    try {
      result =
        typeof text === 'string'
          ? await this.#pool.query<DbRow>(text, values)
          : await this.#pool.query<DbRow>(text);
    } catch (error) {
      throw this.#translate(error);
    }
    this.#answered();
    return result;
  }

  async #rows(text: string, values: unknown[] = []): Promise<DbRow[]> {
    return (await this.#q(text, values)).rows;
  }

  /**
   * The name of a page query's shape (its SQL text varies only with which filters and bounds a read
   * has: a few dozen shapes in practice). Named, each pooled connection parses and plans a shape once
   * instead of on every read, which was about a quarter of PostgreSQL's CPU per page. Past
   * MAX_PAGE_SHAPES, further shapes run unnamed (parsed per call) rather than grow without bound.
   */
  #pageStatement(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.#pageShapes.get(text);
    if (name === undefined && this.#pageShapes.size < MAX_PAGE_SHAPES) {
      name = `tmd_page_${this.#pageShapes.size}`;
      this.#pageShapes.set(text, name);
    }
    return name === undefined ? { text, values } : { name, text, values };
  }

  async #one(text: string, values: unknown[] = []): Promise<DbRow | undefined> {
    return (await this.#q(text, values)).rows[0];
  }

  /** A transaction on one pooled connection; a connection that failed is discarded, not reused. */
  async #tx<T>(
    work: (client: pg.PoolClient) => Promise<T>,
    begin = 'BEGIN',
    on: {
      pool: pg.Pool;
      translate: (error: unknown) => unknown;
      /** Runs on the transaction's connection before BEGIN, committed on its own. */
      before?: (client: pg.PoolClient) => Promise<void>;
    } = {
      pool: this.#pool,
      translate: (error) => this.#translate(error),
    },
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await on.pool.connect();
    } catch (error) {
      throw on.translate(error);
    }
    let broken: Error | undefined;
    try {
      await on.before?.(client);
      await client.query(begin);
      const result = await work(client);
      await client.query('COMMIT');
      this.#answered();
      return result;
    } catch (error) {
      if (isUnavailable(error)) broken = error as Error;
      else await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw on.translate(error);
    } finally {
      client.release(broken);
    }
  }

  async migrate(): Promise<void> {
    // The advisory lock makes concurrent starts take turns: the first applies, the others find it done.
    await this.#tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
      );
      const applied = new Set(
        (await tx.query('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)),
      );
      for (const migration of postgresMigrations) {
        if (applied.has(migration.version)) continue;
        await tx.query(migration.sql);
        await tx.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          Date.now(),
        ]);
      }
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = null;
    await listener?.end().catch(() => {});
    await Promise.all([this.#pool.end(), this.#readPool.end()]);
  }

  /** This process's pool: its connections, the idle ones, and the queries waiting for one. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.#pool.totalCount, idle: this.#pool.idleCount, waiting: this.#pool.waitingCount };
  }

  async ping(): Promise<void> {
    await this.#q('SELECT 1');
  }

  async createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord> {
    await this.#q('INSERT INTO wallets (id, account_id, burn_month) VALUES ($1, $2, $3)', [
      id,
      accountId,
      month,
    ]);
    return { id, accountId, balanceMicros: 0n, burnMonth: month, burnMonthMicros: 0n };
  }

  async getWallet(id: string): Promise<WalletRecord | null> {
    const row = await this.#one('SELECT * FROM wallets WHERE id = $1', [id]);
    return row ? walletFrom(row) : null;
  }

  async createAccount(input: NewAccount, month: string): Promise<AccountRecord> {
    await this.#tx(async (tx) => {
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
    const row = await this.#one('SELECT * FROM accounts WHERE id = $1', [id]);
    return row ? accountFrom(row) : null;
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    const row = await this.#one('SELECT * FROM accounts WHERE email = $1', [email]);
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
    await this.#q(`UPDATE accounts SET ${sets.join(', ')} WHERE id = $${values.length}`, values);
  }

  async listAccountsWithPackage(): Promise<AccountRecord[]> {
    const rows = await this.#rows(
      'SELECT * FROM accounts WHERE package_id IS NOT NULL ORDER BY created_at, id',
    );
    return rows.map((r) => accountFrom(r));
  }

  async setKeyCaps(
    id: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<boolean> {
    const result = await this.#q(
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
    await this.#q(PostgresStore.#insertKeySql, this.#keyValues(key));
  }

  async findKeyByDigest(digest: string): Promise<KeyContext | null> {
    const row = await this.#one(
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
    const row = await this.#one('SELECT * FROM api_keys WHERE id = $1', [id]);
    return row ? keyFrom(row) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    const rows = await this.#rows('SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id', [
      accountId,
    ]);
    return rows.map((r) => keyFrom(r));
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const result = await this.#q('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [
      at,
      id,
    ]);
    return result.rowCount === 1;
  }

  async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
    await this.#tx(async (tx) => {
      await tx.query(
        'UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND kind = $3 AND revoked_at IS NULL',
        [at, accountId, kind],
      );
      await tx.query(PostgresStore.#insertKeySql, this.#keyValues(key));
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    await this.#q(
      'INSERT INTO sessions (id, account_id, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5)',
      [session.id, session.accountId, session.createdAt, session.expiresAt, session.revokedAt],
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = await this.#one('SELECT * FROM sessions WHERE id = $1', [id]);
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
    await this.#q('UPDATE sessions SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
  }

  async insertPasswordReset(reset: PasswordReset): Promise<void> {
    await this.#q(
      'INSERT INTO password_resets (digest, account_id, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5)',
      [reset.digest, reset.accountId, reset.createdAt, reset.expiresAt, reset.usedAt],
    );
  }

  async findPasswordReset(digest: string): Promise<PasswordReset | null> {
    const row = await this.#one('SELECT * FROM password_resets WHERE digest = $1', [digest]);
    return row ? passwordResetFrom(row) : null;
  }

  async completePasswordReset(
    digest: string,
    passwordHash: string,
    at: number,
  ): Promise<{ accountId: string; sessionsEnded: number } | null> {
    return this.#tx(async (tx) => {
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

  /**
   * Moves a wallet's balance by `amountMicros` (a negative amount takes) and writes its ledger entry,
   * in the caller's transaction; the balance's CHECK refuses to go below zero.
   */
  async #post(
    tx: pg.PoolClient,
    entry: {
      walletId: string;
      kind: EntryKind;
      amountMicros: bigint;
      at: number;
      requestId?: string | null;
      idempotencyKey?: string | null;
      memo?: string | null;
    },
  ): Promise<DbRow> {
    const written = await tx.query(
      `WITH w AS (UPDATE wallets SET balance_micros = balance_micros + $2 WHERE id = $1 RETURNING balance_micros)
       INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id,
                                   idempotency_key, memo)
       SELECT $1, $3, $2, w.balance_micros, $4, $5, $6, $7 FROM w
       RETURNING *`,
      [
        entry.walletId,
        entry.amountMicros,
        entry.kind,
        entry.at,
        entry.requestId ?? null,
        entry.idempotencyKey ?? null,
        entry.memo ?? null,
      ],
    );
    return written.rows[0] as DbRow;
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a credit must be positive');
    return this.#tx(async (tx) => {
      // Lock the wallet first: a concurrent credit with the same idempotency key then waits here, and
      // the next statement (a fresh snapshot under READ COMMITTED) sees the entry the other committed.
      const wallet = await tx.query('SELECT balance_micros FROM wallets WHERE id = $1 FOR UPDATE', [
        input.walletId,
      ]);
      if (wallet.rowCount === 0) throw new Error(`wallet ${input.walletId} does not exist`);
      if (input.idempotencyKey) {
        const existing = await tx.query(
          'SELECT * FROM ledger_entries WHERE wallet_id = $1 AND idempotency_key = $2',
          [input.walletId, input.idempotencyKey],
        );
        if (existing.rows[0]) return { entry: entryFrom(existing.rows[0]), duplicate: true };
      }
      if (
        input.maxBalanceMicros !== undefined &&
        BigInt(wallet.rows[0]?.balance_micros as string) + input.amountMicros > input.maxBalanceMicros
      ) {
        throw new BalanceLimitReached(`wallet ${input.walletId} would pass its maximum balance`);
      }
      const entry = await this.#post(tx, input);
      if (input.reverses) {
        await tx.query(
          `UPDATE wallets SET burn_month_micros = GREATEST(0, burn_month_micros - $2)
            WHERE id = $1 AND burn_month = $3`,
          [input.walletId, input.amountMicros, input.reverses.month],
        );
        await tx.query(this.#usageStatement(input.reverses.usage));
      }
      return { entry: entryFrom(entry), duplicate: false };
    });
  }

  #usageStatement(u: UsageInput): Statement {
    return {
      name: 'tmd_usage',
      text: `INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                       cost_micros, burned_micros, outcome, rows, at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      values: [
        u.requestId,
        u.keyId,
        u.accountId,
        u.walletId,
        u.dataset,
        u.channel,
        u.listCostMicros,
        u.costMicros,
        u.burnedMicros,
        u.outcome,
        u.rows,
        u.at,
      ],
    };
  }

  /**
   * The debit: one conditional statement that moves the balance and writes its entry and usage event.
   * The month never moves backwards (see migration 6).
   */
  #debitStatement(input: DebitInput): Statement {
    const u = input.usage;
    return {
      name: 'tmd_debit',
      text: `WITH w AS (
               UPDATE wallets
                  SET balance_micros = balance_micros - $1,
                      burn_month_micros = CASE WHEN burn_month = $2 THEN burn_month_micros + $1
                                               WHEN burn_month > $2 THEN burn_month_micros ELSE $1 END,
                      burn_month = GREATEST(burn_month, $2)
                WHERE id = $3 AND balance_micros >= $1
               RETURNING balance_micros, CASE WHEN burn_month = $2 THEN burn_month_micros END AS burn_month_micros
             ), e AS (
               INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
               SELECT $3, 'burn', -$1::bigint, w.balance_micros, $4, $5 FROM w
               RETURNING id
             ), u AS (
               INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                         cost_micros, burned_micros, outcome, rows, at)
               SELECT $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $4 FROM w
             )
             SELECT w.balance_micros, w.burn_month_micros, e.id AS entry_id FROM w, e`,
      values: [
        input.amountMicros,
        input.month,
        input.walletId,
        u.at,
        u.requestId,
        u.keyId,
        u.accountId,
        u.walletId,
        u.dataset,
        u.channel,
        u.listCostMicros,
        u.costMicros,
        u.burnedMicros,
        u.outcome,
        u.rows,
      ],
    };
  }

  /**
   * Group commit. A lone debit runs as one autocommit statement (one round trip). Debits that arrive
   * while batches are in flight wait and go together: one call of tmd_debit_batch (migration 5), in
   * one transaction, in wallet order so that concurrent batches (from this node or others) take row
   * locks in the same order. A wallet's debits are applied by one conditional UPDATE of their total
   * when the balance covers it, else one by one in order, so the figures and refusals are those of a
   * one-by-one application either way. One round trip and one commit for the lot; nothing resolves
   * before that commit, and a failure fails every item.
   *
   * A wallet's debits are never in two batches in flight from this node: the second would only wait on
   * the row lock the first holds until its commit, and then commit on its own. Held back, they join the
   * next batch and share one commit (the commit, not the debit, is most of PostgreSQL's work per batch):
   * on one hot wallet that halved batches and cut PostgreSQL's CPU per read by a quarter. The price is
   * latency for that wallet alone: its next debits wait for the batch in flight to come back, one round
   * trip, instead of for its commit.
   */
  #enqueue(item: Omit<Pending, 'resolve' | 'reject'>): Promise<DbRow[]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...item, resolve, reject });
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
      while (this.#batchesInFlight < this.#maxConcurrentBatches) {
        const batch = this.#take();
        if (batch.length === 0) break;
        void this.#flush(batch);
      }
    });
  }

  /**
   * The next batch: queued items in arrival order, except debits of wallets a batch in flight debits.
   * Zero-burn usage records take no wallet row lock, so they never wait for one.
   */
  #take(): Pending[] {
    const batch: Pending[] = [];
    const waiting: Pending[] = [];
    for (const item of this.#queue) {
      const held = item.amountMicros > 0n && this.#busyWallets.has(item.walletId);
      if (batch.length < this.#maxBatch && !held) batch.push(item);
      else waiting.push(item);
    }
    this.#queue = waiting;
    for (const item of batch) if (item.amountMicros > 0n) this.#busyWallets.add(item.walletId);
    return batch;
  }

  async #runBatch(batch: Pending[]): Promise<DbRow[][]> {
    if (batch.length === 1) {
      const only = batch[0] as Pending;
      return [(await this.#pool.query<DbRow>(only.statement)).rows];
    }
    const ordered = [...batch].sort((a, b) =>
      a.walletId < b.walletId ? -1 : a.walletId > b.walletId ? 1 : 0,
    );
    const column = <T>(pick: (item: Pending) => T) => ordered.map(pick);
    const { rows } = await this.#pool.query<DbRow>({
      name: 'tmd_debit_batch',
      text: 'SELECT * FROM tmd_debit_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)',
      values: [
        column((i) => i.walletId),
        column((i) => i.amountMicros),
        column((i) => i.month),
        column((i) => i.usage.at),
        column((i) => i.usage.requestId),
        column((i) => i.usage.keyId),
        column((i) => i.usage.accountId),
        column((i) => i.usage.dataset),
        column((i) => i.usage.channel),
        column((i) => i.usage.listCostMicros),
        column((i) => i.usage.costMicros),
        column((i) => i.usage.burnedMicros),
        column((i) => i.usage.outcome),
        column((i) => i.usage.rows),
      ],
    });
    const byItem = new Map<Pending, DbRow[]>(ordered.map((item) => [item, []]));
    for (const row of rows) {
      const item = ordered[Number(row.o_index) - 1] as Pending;
      byItem.set(item, [
        { balance_micros: row.o_balance, burn_month_micros: row.o_month_micros, entry_id: row.o_entry },
      ]);
    }
    return batch.map((item) => byItem.get(item) as DbRow[]);
  }

  async #flush(batch: Pending[]): Promise<void> {
    this.#batchesInFlight++;
    try {
      let results: DbRow[][];
      try {
        results = await this.#runBatch(batch);
        this.#answered();
      } catch (error) {
        const translated = this.#translate(error);
        for (const item of batch) item.reject(translated);
        return;
      }
      batch.forEach((item, index) => {
        item.resolve(results[index] as DbRow[]);
      });
    } finally {
      for (const item of batch) if (item.amountMicros > 0n) this.#busyWallets.delete(item.walletId);
      this.#batchesInFlight--;
      this.#schedule();
    }
  }

  async debit(input: DebitInput): Promise<DebitResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a debit must be positive');
    const keyId = input.usage.keyId;
    const caps = keyId === null ? [] : (input.spendCaps ?? []);
    if (caps.length > 0) {
      const refusal = await this.#cappedDebit(input, keyId as string, caps);
      if (refusal.cap) {
        const wallet = await this.getWallet(input.walletId);
        return { ok: false, balanceMicros: wallet?.balanceMicros ?? 0n, cap: refusal.cap };
      }
      return this.#debitResult(input, refusal.row);
    }
    const [row] = await this.#enqueue({
      walletId: input.walletId,
      statement: this.#debitStatement(input),
      amountMicros: input.amountMicros,
      month: input.month,
      usage: input.usage,
    });
    return this.#debitResult(input, row);
  }

  async #debitResult(input: DebitInput, row: DbRow | undefined): Promise<DebitResult> {
    if (row) {
      return {
        ok: true,
        balanceMicros: big(row.balance_micros),
        // Null (the statement) or 0 (the batch function, migration 6): the wallet is in a later month.
        burnMonthMicros:
          row.burn_month_micros === null || big(row.burn_month_micros) === 0n
            ? null
            : big(row.burn_month_micros),
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
  async #cappedDebit(
    input: DebitInput,
    keyId: string,
    caps: readonly SpendCap[],
  ): Promise<{ row?: DbRow; cap?: SpendCap & { spentMicros: bigint } }> {
    return this.#tx(async (tx) => {
      await tx.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [input.walletId]);
      for (const cap of caps) {
        const spent = await tx.query(KEY_BURNED_SINCE, [keyId, cap.sinceMs]);
        const spentMicros = big(spent.rows[0]?.spent ?? 0);
        if (spentMicros + input.amountMicros > cap.capMicros) return { cap: { ...cap, spentMicros } };
      }
      const statement = this.#debitStatement(input);
      return { row: (await tx.query<DbRow>(statement.text, statement.values)).rows[0] };
    });
  }

  async recordUsage(usage: UsageInput): Promise<void> {
    await this.#enqueue({
      walletId: usage.walletId,
      statement: this.#usageStatement(usage),
      amountMicros: 0n,
      month: '',
      usage,
    });
  }

  async keyBurnedSince(keyId: string, sinceMs: number): Promise<bigint> {
    const row = await this.#one(KEY_BURNED_SINCE, [keyId, sinceMs]);
    return big(row?.spent ?? 0);
  }

  async listEntries(walletId: string): Promise<LedgerEntry[]> {
    return (
      await this.#rows('SELECT * FROM ledger_entries WHERE wallet_id = $1 ORDER BY id', [walletId])
    ).map(entryFrom);
  }

  async listEntriesPage(
    walletId: string,
    page: { beforeId: string | null; limit: number },
  ): Promise<LedgerEntry[]> {
    const before = page.beforeId === null ? '9223372036854775807' : BigInt(page.beforeId).toString();
    const rows = await this.#rows(
      'SELECT * FROM ledger_entries WHERE wallet_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3',
      [walletId, before, page.limit],
    );
    return rows.map(entryFrom);
  }

  async auditLedger(): Promise<LedgerAudit> {
    // One snapshot for all figures, so a debit committing meanwhile cannot show as a mismatch.
    return this.#tx(async (tx) => {
      const counts = await tx.query(
        'SELECT (SELECT count(*) FROM wallets) AS wallets, (SELECT count(*) FROM ledger_entries) AS entries',
      );
      const mismatches = await tx.query(
        `SELECT w.id, w.balance_micros, COALESCE(e.total, 0)::text AS total
           FROM wallets w
           LEFT JOIN (SELECT wallet_id, sum(amount_micros) AS total FROM ledger_entries GROUP BY wallet_id) e
             ON e.wallet_id = w.id
          WHERE w.balance_micros <> COALESCE(e.total, 0) OR w.balance_micros < 0`,
      );
      return {
        wallets: num(counts.rows[0]?.wallets),
        entries: num(counts.rows[0]?.entries),
        mismatches: mismatches.rows.map((r) => ({
          walletId: str(r.id),
          balanceMicros: big(r.balance_micros),
          entriesMicros: big(r.total),
        })),
      };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async sumEntries(walletId: string): Promise<bigint> {
    const row = await this.#one(
      'SELECT COALESCE(sum(amount_micros), 0)::text AS total FROM ledger_entries WHERE wallet_id = $1',
      [walletId],
    );
    return big(row?.total ?? 0);
  }

  async listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]> {
    const column = 'accountId' in scope ? 'account_id' : 'key_id';
    const value = 'accountId' in scope ? scope.accountId : scope.keyId;
    const before = beforeId === null ? '9223372036854775807' : BigInt(beforeId).toString();
    const rows = await this.#rows(
      `SELECT * FROM usage_events WHERE ${column} = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
      [value, before, limit],
    );
    return rows.map(usageFrom);
  }

  async sumUsage(
    scope: { accountId: string } | { keyId: string },
    query: { sinceMs: number; bucketMs: number; limit: number },
  ): Promise<{ sums: UsageSum[]; more: boolean }> {
    const column = 'accountId' in scope ? 'account_id' : 'key_id';
    const value = 'accountId' in scope ? scope.accountId : scope.keyId;
    const rows = await this.#rows(
      `SELECT (at / $1::bigint) * $1::bigint AS bucket, dataset, channel,
              count(*) FILTER (WHERE outcome <> 'refunded')::int AS served,
              count(*) FILTER (WHERE outcome = 'refunded')::int AS refunded,
              sum(burned_micros)::text AS burned, max(id) AS newest
         FROM (SELECT id, at, dataset, channel, outcome, burned_micros FROM usage_events
                WHERE ${column} = $2 AND at >= $3 ORDER BY id DESC LIMIT $4) recent
        GROUP BY bucket, dataset, channel
        ORDER BY newest DESC`,
      [query.bucketMs, value, query.sinceMs, query.limit],
    );
    const beyond = await this.#rows(
      `SELECT 1 FROM usage_events WHERE ${column} = $1 AND at >= $2 ORDER BY id DESC LIMIT 1 OFFSET $3`,
      [value, query.sinceMs, query.limit],
    );
    return { sums: rows.map(usageSumFrom), more: beyond.length > 0 };
  }

  async loadRows(
    dataset: string,
    timeField: string,
    rows: readonly Row[],
    source: RowSource,
    csvColumns?: readonly string[],
    options: { ifLoadedAt?: number; run?: NewImportRun } = {},
  ): Promise<boolean> {
    async function* slices(): AsyncGenerator<readonly Row[]> {
      for (let start = 0; start < rows.length; start += LOAD_BATCH_ROWS)
        yield rows.slice(start, start + LOAD_BATCH_ROWS);
    }
    return this.loadRowsStream(dataset, timeField, slices(), source, csvColumns, options);
  }

  /**
   * One transaction: the old rows deleted, the new ones copied in, the dataset's record and a NOTIFY.
   * Readers see the old rows until COMMIT and the new ones from then on (MVCC), and wait for none of
   * it; ROLLBACK if a batch or the iterable fails. With `run`, the run is recorded first (`loading`,
   * with this connection's pid), then `swapped` in the transaction or `failed` after it.
   */
  async loadRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly Row[]>,
    source: RowSource,
    csvColumns?: readonly string[],
    options: { ifLoadedAt?: number; run?: NewImportRun } = {},
  ): Promise<boolean> {
    const started = options.run && source === 'import' ? this.#startRun(dataset, options.run) : null;
    const loaded = await this.#recorded(started, async (tx, runId) => {
      // One loader per dataset at a time across every node; the others then see it loaded.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
      const present = await tx.query('SELECT loaded_at FROM dataset_sources WHERE dataset = $1', [dataset]);
      if (present.rowCount && source === 'sample') return false;
      const previous = present.rows[0] ? num(present.rows[0].loaded_at) : null;
      if (options.ifLoadedAt !== undefined && previous !== options.ifLoadedAt) {
        throw new AppError(
          'conflict',
          'Another load of this dataset happened meanwhile; nothing was loaded. Run the import again.',
        );
      }
      await tx.query('DELETE FROM dataset_rows WHERE dataset = $1', [dataset]);
      const layout = this.#layoutOf(dataset).slice(0, entityKeyColumns.length);
      // COPY (pg-copy-streams) rather than INSERTs: the rows go out as text lines, the keys computed
      // here (rowKeys) rather than in SQL, where the json type parsed each row twice per entity field.
      const columns = ['dataset', 'id', 't', 'data', 'csv', ...entityKeyColumns.slice(0, layout.length)];
      let count = 0;
      async function* lines(): AsyncGenerator<string> {
        for await (const batch of batches) {
          let text = '';
          for (const row of batch) {
            const cells: (string | number | null)[] = [
              dataset,
              ++count,
              String(row[timeField] ?? ''),
              JSON.stringify(row),
              csvColumns ? csvRecord(row, csvColumns) : null,
            ];
            for (const field of layout) cells.push(entityKey(row[field]));
            text += `${cells.map(copyCell).join('\t')}\n`;
          }
          yield text;
        }
      }
      // One COPY statement lasts as long as the file: the pool's statement timeout and pg's client-side
      // query_timeout are for requests (the latter read from the query's own config first).
      await tx.query('SET LOCAL statement_timeout = 0');
      const copy = Object.assign(copyFrom(`COPY dataset_rows (${columns.join(', ')}) FROM STDIN`), {
        query_timeout: COPY_TIMEOUT_MS,
      });
      // One batch buffered ahead of the copy stream, which sets the pace: memory stays one batch.
      await pipeline(Readable.from(lines(), { highWaterMark: 1 }), tx.query(copy));
      await tx.query(
        `INSERT INTO dataset_sources (dataset, source, row_count, loaded_at, csv_columns, entity_fields)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (dataset) DO UPDATE
           SET source = excluded.source, row_count = excluded.row_count, loaded_at = excluded.loaded_at,
               csv_columns = excluded.csv_columns, entity_fields = excluded.entity_fields`,
        [
          dataset,
          source,
          count,
          // Strictly later than the load it replaces, so `ifLoadedAt` tells any two loads apart.
          Math.max(Date.now(), (previous ?? 0) + 1),
          csvColumns ? csvColumnsKey(csvColumns) : null,
          layoutText(layout),
        ],
      );
      if (runId !== null) {
        let firstT: string | null = null;
        let lastT: string | null = null;
        const span = await tx.query(
          `SELECT (SELECT min(t) FROM dataset_rows WHERE dataset = $1) AS first_t,
                  (SELECT max(t) FROM dataset_rows WHERE dataset = $1) AS last_t`,
          [dataset],
        );
        firstT = optStr(span.rows[0]?.first_t);
        lastT = optStr(span.rows[0]?.last_t);
        await tx.query(
          `UPDATE import_runs SET rows_read = greatest(rows_read, $2), rows_inserted = $2, first_t = $3, last_t = $4,
             outcome = 'swapped', swapped_at = $5 WHERE id = $1`,
          [runId, count, firstT, lastT, Date.now()],
        );
      }
      await tx.query('SELECT pg_notify($1, $2)', [LOADED_CHANNEL, dataset]);
      return true;
    });
    // Without statistics on the new rows the planner reads a page by sorting every row of the dataset
    // (bitmap scan + top-N sort: 0.5 ms for 900 rows, growing with the dataset) instead of walking
    // dataset_rows_time backwards (0.04 ms) until autovacuum gets round to it, up to a minute later.
    if (loaded) await this.#q('ANALYZE dataset_rows').catch(() => {});
    return loaded;
  }

  /** The statement that records a run as it starts, on the loading connection (see #recorded). */
  #startRun(dataset: string, run: NewImportRun): { text: string; values: unknown[] } {
    const values = newRunValues(dataset, run);
    return {
      text: `INSERT INTO import_runs (${NEW_RUN_COLUMNS}, rows_inserted, rows_replaced, loader_pid)
             VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')}, 0, 0, pg_backend_pid()) RETURNING id`,
      values,
    };
  }

  /**
   * A load's transaction, its run (if any) recorded before it on the same connection and marked
   * `failed`, with why, when the transaction fails. Runs left `loading` by a killed loader are marked
   * `interrupted` first.
   */
  async #recorded<T>(
    start: { text: string; values: unknown[] } | null,
    work: (tx: pg.PoolClient, runId: number | null) => Promise<T>,
  ): Promise<T> {
    await this.#reapRuns();
    let runId: number | null = null;
    try {
      return await this.#tx((tx) => work(tx, runId), 'BEGIN', {
        pool: this.#pool,
        translate: (error) => this.#translate(error),
        before: async (client) => {
          if (start) runId = num((await client.query(start.text, start.values)).rows[0]?.id);
        },
      });
    } catch (error) {
      if (runId !== null)
        await this.#q(
          "UPDATE import_runs SET outcome = 'failed', error = $2 WHERE id = $1 AND outcome = 'loading'",
          [runId, String((error as Error).message).slice(0, 500)],
        ).catch(() => {});
      throw error;
    }
  }

  /** Runs whose loading backend ended without a swap or a failure (the process was killed). */
  async #reapRuns(): Promise<void> {
    await this.#q(
      `UPDATE import_runs SET outcome = 'interrupted',
         error = 'The importing process ended before its rows were swapped in; the dataset kept its rows.'
        WHERE outcome = 'loading'
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = import_runs.loader_pid)`,
    );
  }

  /** LISTENs on its own connection, reconnecting after a second when it drops. */
  onLoaded(listener: (dataset: string) => void): Promise<void> {
    this.#loadListeners.add(listener);
    if (this.#listening) return this.#listeningReady;
    this.#listening = true;
    let ready = () => {};
    this.#listeningReady = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const connect = () => {
      if (this.#closed) return ready();
      const client = new pg.Client({
        connectionString: this.#url,
        application_name: 'token-metered-data-listen',
      });
      this.#listener = client;
      const retry = () => {
        if (this.#listener !== client) return;
        this.#listener = null;
        client.end().catch(() => {});
        setTimeout(connect, 1000).unref();
      };
      client.on('error', retry);
      client.on('end', retry);
      client.on('notification', (message) => {
        if (message.channel === LOADED_CHANNEL && message.payload)
          for (const notify of this.#loadListeners) notify(message.payload);
      });
      client
        .connect()
        .then(() => client.query(`LISTEN ${LOADED_CHANNEL}`))
        .then(() => ready())
        .catch(retry);
    };
    connect();
    return this.#listeningReady;
  }

  async datasetSource(
    dataset: string,
  ): Promise<{ source: RowSource; rows: number; loadedAt: number } | null> {
    const row = await this.#one('SELECT * FROM dataset_sources WHERE dataset = $1', [dataset]);
    return row
      ? { source: str(row.source) as RowSource, rows: num(row.row_count), loadedAt: num(row.loaded_at) }
      : null;
  }

  #layoutOf(dataset: string): readonly string[] {
    return this.#layouts.get(dataset) ?? [];
  }

  async syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }> {
    this.#layouts = new Map(layouts);
    await this.#reapRuns();
    const rekeyed: string[] = [];
    for (const row of await this.#rows('SELECT dataset, entity_fields FROM dataset_sources')) {
      const dataset = str(row.dataset);
      const layout = this.#layoutOf(dataset);
      if (optStr(row.entity_fields) === layoutText(layout)) continue;
      await this.#tx(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
        await rekey(tx, dataset, layout);
      });
      rekeyed.push(dataset);
    }
    if (rekeyed.length > 0) await this.#q('ANALYZE dataset_rows').catch(() => {});
    return { rekeyed };
  }

  /** A page query that ran past readTimeoutMs is a 503 of its own: nothing was charged. */
  #translateRead(error: unknown): unknown {
    if ((error as { code?: unknown }).code === '57014')
      return serviceUnavailable(
        `The read took longer than ${this.#readTimeoutMs} ms and was stopped; nothing was charged. Narrow it (an entity filter, a date range) or retry.`,
      );
    return this.#translate(error);
  }

  /** One page as text, built from its rows. */
  queryPage(q: PageQuery): Promise<StoredPage> {
    return pageOfRows(q, (query) => this.queryRows(query));
  }

  async queryRows(q: RowQuery): Promise<RowsPage> {
    rowLimit(q.limit);
    const plan = planScan(q, this.#layoutOf(q.dataset));
    const withCsv = q.csvColumns !== undefined;
    let found: { rows: DbRow[]; next: RowsPage['next']; examined: number };
    if (plan.capped) {
      found = await this.#scans.run(() => this.#scan(q, plan));
    } else {
      const values: unknown[] = [q.dataset];
      const source = walkSql(q, plan, 'id, t, data, import_id, csv', q.limit + 1, values);
      // The stored lines count only if they were rendered over the columns asked for; one statement, so
      // the check and the rows come from the same snapshot.
      const csv = withCsv
        ? `CASE WHEN (SELECT csv_columns FROM dataset_sources WHERE dataset = $1) = ${bindOf(values, q.csvColumns)} THEN w.csv END`
        : 'NULL';
      const text = `SELECT w.id, w.t, w.data::text AS json, w.import_id, ${csv} AS csv FROM (${source}) w`;
      let rows: DbRow[];
      try {
        rows = (await this.#readPool.query<DbRow>(this.#pageStatement(text, values))).rows;
      } catch (error) {
        throw this.#translateRead(error);
      }
      this.#answered();
      const examined = rows.length;
      let next: RowsPage['next'] = null;
      if (rows.length > q.limit) {
        rows.length = q.limit;
        const last = rows.at(-1);
        if (last) next = { t: str(last.t), id: num(last.id) };
      }
      found = { rows, next, examined };
    }
    const rows = found.rows.map((r) => {
      const row: StoredRow = { id: num(r.id), t: str(r.t), json: str(r.json), importId: optNum(r.import_id) };
      if (withCsv) row.csv = r.csv === null || r.csv === undefined ? null : str(r.csv);
      return row;
    });
    return { rows, next: found.next, examined: found.examined };
  }

  /**
   * A read that checks rows one by one, in one read-only snapshot: the first limit + 1 matches among the
   * first SCAN_CAP rows the index yields, then how far the walk went (see sqlite/row-sql.ts's runScan).
   */
  async #scan(
    q: RowQuery,
    plan: ScanPlan,
  ): Promise<{ rows: DbRow[]; next: RowsPage['next']; examined: number }> {
    return this.#tx(
      async (client) => {
        const values: unknown[] = [q.dataset];
        const cols = ['id, t, data, import_id, csv', ...plan.keyed.map((f) => f.column)].join(', ');
        const source = walkSql(q, plan, cols, SCAN_CAP, values);
        const check: string[] = [];
        for (const { column, keys } of plan.keyed)
          check.push(`s.${column} = ANY(${bindOf(values, keys)}::text[])`);
        for (const { field, values: accepted } of plan.json) {
          // The field name is a bound parameter of -> and ->>, never spliced into SQL. Text values (and
          // booleans, as true/false) compare with the stored JSON text.
          const name = bindOf(values, field);
          // A number matches by its JSON text: the stores write rows with JSON.stringify, whose text of a
          // double is unique to it, so equal text is equal value, and the row's JSON is parsed once, not
          // three times (the type is looked at only when the text matched; CASE keeps that order).
          check.push(
            typeof accepted[0] === 'number'
              ? `CASE WHEN s.data ->> ${name} = ANY(${bindOf(
                  values,
                  (accepted as number[]).map((n) => JSON.stringify(n)),
                )}::text[])
                     THEN json_typeof(s.data -> ${name}) = 'number' ELSE false END`
              : `s.data ->> ${name} = ANY(${bindOf(values, accepted)}::text[])`,
          );
        }
        const csv =
          q.csvColumns === undefined
            ? 'NULL'
            : `CASE WHEN (SELECT csv_columns FROM dataset_sources WHERE dataset = $1) = ${bindOf(values, q.csvColumns)} THEN s.csv END`;
        const hits = (
          await client.query<DbRow>(
            this.#pageStatement(
              `SELECT s.id, s.t, s.data::text AS json, s.import_id, ${csv} AS csv FROM (${source}) s
                  WHERE ${check.join(' AND ')} LIMIT ${rowLimit(q.limit) + 1}`,
              values,
            ),
          )
        ).rows;
        const keysetValues: unknown[] = [q.dataset];
        const keyset = walkSql(q, plan, 't, id', SCAN_CAP, keysetValues);
        let result: { rows: DbRow[]; next: RowsPage['next']; examined: number };
        if (q.limit > 0 && hits.length > q.limit) {
          const probe = hits[q.limit] as DbRow;
          const t = bindOf(keysetValues, str(probe.t));
          const id = bindOf(keysetValues, num(probe.id));
          const counted = await client.query<DbRow>(
            `SELECT count(*) AS n FROM (${keyset}) k WHERE (k.t, k.id) ${q.descending ? '>=' : '<='} (${t}, ${id}::int)`,
            keysetValues,
          );
          hits.length = q.limit;
          const last = hits.at(-1) as DbRow;
          result = {
            rows: hits,
            next: { t: str(last.t), id: num(last.id) },
            examined: num(counted.rows[0]?.n),
          };
        } else {
          const counted = await client.query<DbRow>(`SELECT count(*) AS n FROM (${keyset}) k`, keysetValues);
          const examined = num(counted.rows[0]?.n);
          let next: RowsPage['next'] = null;
          if (examined >= SCAN_CAP) {
            const lastValues: unknown[] = [q.dataset];
            const lastSql = walkSql(q, plan, 't, id', 1, lastValues, SCAN_CAP - 1);
            const last = (await client.query<DbRow>(lastSql, lastValues)).rows[0];
            if (last) next = { t: str(last.t), id: num(last.id) };
          }
          result = { rows: q.limit > 0 ? hits : [], next, examined: q.limit > 0 ? examined : 0 };
        }
        return result;
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
      { pool: this.#readPool, translate: (error) => this.#translateRead(error) },
    );
  }

  async upsertRows(
    dataset: string,
    timeField: string,
    rows: readonly KeyedRow[],
    run: NewImportRun,
    csvColumns?: readonly string[],
  ): Promise<ImportRun> {
    const distinct = distinctByKey(rows);
    async function* whole(): AsyncGenerator<readonly KeyedRow[]> {
      yield distinct;
    }
    return this.upsertRowsStream(dataset, timeField, whole(), run, csvColumns);
  }

  async upsertRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly KeyedRow[]>,
    run: NewImportRun,
    csvColumns?: readonly string[],
    options: { naturalKey?: readonly string[] } = {},
  ): Promise<ImportRun> {
    const recorded = await this.#recorded(this.#startRun(dataset, run), async (tx, started) => {
      const runId = started as number;
      // One loader per dataset at a time across every node, as loadRows.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
      const present = await tx.query(
        'SELECT source, loaded_at, entity_fields FROM dataset_sources WHERE dataset = $1',
        [dataset],
      );
      const before = present.rows[0] as DbRow | undefined;
      const layout = this.#layoutOf(dataset);
      if (before && str(before.source) === 'sample')
        await tx.query('DELETE FROM dataset_rows WHERE dataset = $1', [dataset]);
      else if (before && optStr(before.entity_fields) !== layoutText(layout))
        await rekey(tx, dataset, layout);
      if (before && str(before.source) === 'import' && options.naturalKey) {
        // Rows a replacing load wrote have no natural key yet: given one here, once (a key two of them
        // share stays on the first), so that this import replaces them rather than adding them again.
        const values: unknown[] = [dataset];
        const parts = options.naturalKey.map((f) => `coalesce((data -> ${bindOf(values, f)})::text, 'null')`);
        await tx.query(
          `UPDATE dataset_rows r SET nk = x.nk
             FROM (SELECT DISTINCT ON (k.nk) k.t, k.id, k.nk
                     FROM (SELECT t, id, 'g:[' || concat_ws(',', ${parts.join(', ')}) || ']' AS nk
                             FROM dataset_rows WHERE dataset = $1 AND nk IS NULL) k
                    WHERE NOT EXISTS (SELECT 1 FROM dataset_rows e WHERE e.dataset = $1 AND e.nk = k.nk)
                    ORDER BY k.nk, k.id) x
            WHERE r.dataset = $1 AND r.t = x.t AND r.id = x.id`,
          values,
        );
      }
      const top = await tx.query('SELECT COALESCE(max(id), 0) AS id FROM dataset_rows WHERE dataset = $1', [
        dataset,
      ]);
      let base = num((top.rows[0] as DbRow).id);
      // $1..$7 are the statement's own; the key expressions bind the field names after them.
      const keyValues: unknown[] = [null, null, null, null, null, null, null];
      const keys = keyExprs('x.j', layout, keyValues);
      let written = 0;
      let replaced = 0;
      let seen = 0;
      let firstT: string | null = null;
      let lastT: string | null = null;
      const chunk = 5000;
      for await (const batch of batches) {
        seen += batch.length;
        // One statement may not write a key twice: within a batch the last row of a key wins.
        const distinct = distinctByKey(batch);
        for (let start = 0; start < distinct.length; start += chunk) {
          const slice = distinct.slice(start, start + chunk);
          for (const { row } of slice) {
            const t = String(row[timeField] ?? '');
            if (t !== '' && (firstT === null || t < firstT)) firstT = t;
            if (t !== '' && (lastT === null || t > lastT)) lastT = t;
          }
          // What the keys hold now: a key an earlier batch of this import wrote is written again, not
          // counted again; a row stored with the same values is left as it is (its provenance kept).
          const before = await tx.query(
            'SELECT nk, import_id, data::text AS d FROM dataset_rows WHERE dataset = $1 AND nk = ANY($2::text[])',
            [dataset, slice.map(({ key }) => key)],
          );
          const stored = new Map(before.rows.map((r) => [str(r.nk), r]));
          const changing = slice.filter(({ key, row }) => {
            const old = stored.get(key);
            if (!old) {
              written++;
              return true;
            }
            if (optNum(old.import_id) === runId) return true;
            if (str(old.d) === JSON.stringify(row)) return false;
            written++;
            replaced++;
            return true;
          });
          if (changing.length === 0) continue;
          // A replaced row keeps its id; new ones take ids after the dataset's last.
          await tx.query(
            `INSERT INTO dataset_rows (dataset, id, t, data, csv, nk, import_id, ${entityKeyColumns.join(', ')})
             SELECT $1, $2 + x.n, x.t, x.j, x.c, x.k, $3, ${keys.join(', ')}
               FROM (SELECT u.t, u.d::json AS j, u.c, u.k, u.n
                       FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS u(t, d, c, k, n)) x
             ON CONFLICT (dataset, nk) WHERE nk IS NOT NULL
             DO UPDATE SET t = excluded.t, data = excluded.data, csv = excluded.csv, import_id = excluded.import_id,
               ${entityKeyColumns.map((k) => `${k} = excluded.${k}`).join(', ')}`,
            [
              dataset,
              base,
              runId,
              changing.map(({ row }) => String(row[timeField] ?? '')),
              changing.map(({ row }) => JSON.stringify(row)),
              changing.map(({ row }) => (csvColumns ? csvRecord(row, csvColumns) : null)),
              changing.map(({ key }) => key),
              ...keyValues.slice(7),
            ],
          );
          base += changing.length;
        }
      }
      const total = await tx.query('SELECT count(*) AS n FROM dataset_rows WHERE dataset = $1', [dataset]);
      await tx.query(
        `INSERT INTO dataset_sources (dataset, source, row_count, loaded_at, csv_columns, entity_fields)
         VALUES ($1, 'import', $2, $3, $4, $5)
         ON CONFLICT (dataset) DO UPDATE
           SET source = excluded.source, row_count = excluded.row_count, loaded_at = excluded.loaded_at,
               csv_columns = excluded.csv_columns, entity_fields = excluded.entity_fields`,
        [
          dataset,
          num((total.rows[0] as DbRow).n),
          Math.max(Date.now(), (before ? num(before.loaded_at) : 0) + 1),
          csvColumns ? csvColumnsKey(csvColumns) : null,
          layoutText(layout),
        ],
      );
      const done = await tx.query(
        `UPDATE import_runs SET rows_read = greatest(rows_read, $6), rows_inserted = $2, rows_replaced = $3,
           first_t = $4, last_t = $5, outcome = 'swapped', swapped_at = $7
          WHERE id = $1 RETURNING *`,
        [runId, written - replaced, replaced, firstT, lastT, seen, Date.now()],
      );
      await tx.query('SELECT pg_notify($1, $2)', [LOADED_CHANNEL, dataset]);
      return importRunFrom(done.rows[0] as DbRow);
    });
    await this.#q('ANALYZE dataset_rows').catch(() => {});
    return recorded;
  }

  async claimIdempotencyKey(input: {
    scope: string;
    key: string;
    fingerprint: string;
    at: number;
    expiredBefore: number;
    abandonedBefore: number;
  }): Promise<Claim> {
    // Bounded upkeep: a few expired keys go with each claim.
    await this.#q(
      'DELETE FROM idempotent_requests WHERE ctid IN (SELECT ctid FROM idempotent_requests WHERE created_at < $1 LIMIT 20)',
      [input.expiredBefore],
    );
    const claimed = await this.#rows(
      `INSERT INTO idempotent_requests (scope, key, fingerprint, state, response, created_at) VALUES ($1, $2, $3, 'pending', NULL, $4)
       ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'pending', response = NULL,
         created_at = excluded.created_at
       WHERE idempotent_requests.created_at < $5 OR (idempotent_requests.state = 'pending' AND idempotent_requests.created_at < $6)
       RETURNING key`,
      [input.scope, input.key, input.fingerprint, input.at, input.expiredBefore, input.abandonedBefore],
    );
    if (claimed.length === 1) return { state: 'claimed' };
    const held = await this.#one(
      'SELECT fingerprint, state, response FROM idempotent_requests WHERE scope = $1 AND key = $2',
      [input.scope, input.key],
    );
    // Released between the two statements: the caller asks again.
    if (!held) return { state: 'pending' };
    if (str(held.fingerprint) !== input.fingerprint) return { state: 'mismatch' };
    return held.state === 'done'
      ? { state: 'done', response: JSON.parse(str(held.response)) as StoredResponse }
      : { state: 'pending' };
  }

  async upsertOAuthRecord(model: string, id: string, r: NewOAuthRecord): Promise<void> {
    await this.#q(
      `INSERT INTO oauth_records (model, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
       ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`,
      [model, id, r.payload, r.grantId, r.uid, r.userCode, r.expiresAt],
    );
  }

  async findOAuthRecord(model: string, id: string, now: number): Promise<OAuthRecord | null> {
    const { rows } = await this.#q(
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
    const { rows } = await this.#q(
      `SELECT * FROM oauth_records WHERE model = $1 AND ${by === 'uid' ? 'uid' : 'user_code'} = $2
         AND (expires_at IS NULL OR expires_at > $3) LIMIT 1`,
      [model, value, now],
    );
    return rows[0] ? oauthRecordFrom(rows[0]) : null;
  }

  async consumeOAuthRecord(model: string, id: string, at: number): Promise<boolean> {
    const { rowCount } = await this.#q(
      'UPDATE oauth_records SET consumed_at = $1 WHERE model = $2 AND id = $3 AND consumed_at IS NULL',
      [at, model, id],
    );
    return rowCount === 1;
  }

  async destroyOAuthRecord(model: string, id: string): Promise<void> {
    await this.#q('DELETE FROM oauth_records WHERE model = $1 AND id = $2', [model, id]);
  }

  async revokeOAuthGrant(grantId: string): Promise<void> {
    await this.#q('DELETE FROM oauth_records WHERE grant_id = $1', [grantId]);
  }

  async pruneOAuthRecords(before: number, limit: number): Promise<number> {
    const { rowCount } = await this.#q(
      `DELETE FROM oauth_records WHERE (model, id) IN
         (SELECT model, id FROM oauth_records WHERE expires_at < $1 LIMIT $2)`,
      [before, limit],
    );
    return rowCount ?? 0;
  }

  async insertOAuthConnection(c: OAuthConnection): Promise<void> {
    await this.#q(
      'INSERT INTO oauth_connections (key_id, account_id, client_id, client_name, redirect_host, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [c.keyId, c.accountId, c.clientId, c.clientName, c.redirectHost, c.createdAt],
    );
  }

  async listOAuthConnections(accountId: string): Promise<OAuthConnection[]> {
    const { rows } = await this.#q(
      'SELECT * FROM oauth_connections WHERE account_id = $1 ORDER BY created_at DESC',
      [accountId],
    );
    return rows.map(oauthConnectionFrom);
  }

  async completeIdempotencyKey(scope: string, key: string, response: StoredResponse): Promise<void> {
    await this.#q(
      "UPDATE idempotent_requests SET state = 'done', response = $3 WHERE scope = $1 AND key = $2",
      [scope, key, JSON.stringify(response)],
    );
  }

  async releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    await this.#q("DELETE FROM idempotent_requests WHERE scope = $1 AND key = $2 AND state = 'pending'", [
      scope,
      key,
    ]);
  }

  async recordPurchase(p: NewTokenPurchase): Promise<{ purchase: TokenPurchase; duplicate: boolean }> {
    return this.#tx(async (tx) => {
      // The wallet locked first: a second delivery of the same payment waits here, then finds it.
      const wallet = await tx.query('SELECT 1 FROM wallets WHERE id = $1 FOR UPDATE', [p.walletId]);
      if (wallet.rowCount === 0) throw new Error(`wallet ${p.walletId} does not exist`);
      const existing = await tx.query('SELECT * FROM token_purchases WHERE payment_intent = $1', [
        p.paymentIntent,
      ]);
      if (existing.rows[0]) return { purchase: purchaseFrom(existing.rows[0]), duplicate: true };
      const entry = await this.#post(tx, {
        walletId: p.walletId,
        kind: 'purchase',
        amountMicros: BigInt(p.tokens) * MICROS_PER_TOKEN,
        at: p.createdAt,
        idempotencyKey: `stripe:${p.paymentIntent}`,
        memo: `${p.packId}: Stripe Checkout ${p.sessionId}, payment ${p.paymentIntent}`,
      });
      const purchase = await tx.query(
        `INSERT INTO token_purchases (payment_intent, session_id, account_id, wallet_id, pack_id, tokens, amount_cents,
           currency, entry_id, receipt_url, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
          p.paymentIntent,
          p.sessionId,
          p.accountId,
          p.walletId,
          p.packId,
          p.tokens,
          p.amountCents,
          p.currency,
          String(entry.id),
          p.receiptUrl,
          p.createdAt,
        ],
      );
      return { purchase: purchaseFrom(purchase.rows[0] as DbRow), duplicate: false };
    });
  }

  async purchaseByPaymentIntent(paymentIntent: string): Promise<TokenPurchase | null> {
    const row = await this.#one('SELECT * FROM token_purchases WHERE payment_intent = $1', [paymentIntent]);
    return row ? purchaseFrom(row) : null;
  }

  async listPurchases(accountId: string): Promise<TokenPurchase[]> {
    return (
      await this.#rows(
        'SELECT * FROM token_purchases WHERE account_id = $1 ORDER BY created_at DESC, payment_intent LIMIT 200',
        [accountId],
      )
    ).map(purchaseFrom);
  }

  async reclaimPurchase(input: {
    paymentIntent: string;
    refundKey: string;
    tokens: number;
    at: number;
  }): Promise<Reclaimed> {
    return this.#tx(async (tx) => {
      const purchase = (
        await tx.query('SELECT * FROM token_purchases WHERE payment_intent = $1 FOR UPDATE', [
          input.paymentIntent,
        ])
      ).rows[0];
      if (!purchase) throw new Error(`no purchase with payment ${input.paymentIntent}`);
      const seen = await tx.query('SELECT 1 FROM token_refunds WHERE refund_key = $1', [input.refundKey]);
      if (seen.rowCount) return { takenMicros: 0n, shortfallMicros: 0n, entryId: null, duplicate: true };
      const walletId = str(purchase.wallet_id);
      const held = await tx.query('SELECT balance_micros FROM wallets WHERE id = $1 FOR UPDATE', [walletId]);
      const balance = BigInt(held.rows[0]?.balance_micros ?? 0);
      const wanted = BigInt(input.tokens) * MICROS_PER_TOKEN;
      const taken = wanted < balance ? wanted : balance;
      const entry =
        taken > 0n
          ? entryFrom(
              await this.#post(tx, {
                walletId,
                kind: 'purchase_refund',
                amountMicros: -taken,
                at: input.at,
                idempotencyKey: input.refundKey,
                memo: `refund of payment ${input.paymentIntent}: ${input.tokens} tokens`,
              }),
            )
          : null;
      const shortfall = wanted - taken;
      await tx.query(
        'INSERT INTO token_refunds (refund_key, payment_intent, tokens, taken_micros, shortfall_micros, at) VALUES ($1, $2, $3, $4, $5, $6)',
        [input.refundKey, input.paymentIntent, input.tokens, taken, shortfall, input.at],
      );
      await tx.query(
        'UPDATE token_purchases SET reclaimed_tokens = reclaimed_tokens + $2, shortfall_micros = shortfall_micros + $3 WHERE payment_intent = $1',
        [input.paymentIntent, input.tokens, shortfall],
      );
      return { takenMicros: taken, shortfallMicros: shortfall, entryId: entry?.id ?? null, duplicate: false };
    });
  }

  async createTokenRequest(
    r: Omit<TokenRequest, 'status' | 'reason' | 'settledAt' | 'entryId'>,
  ): Promise<TokenRequest> {
    const row = await this.#one(
      `INSERT INTO token_requests (id, account_id, wallet_id, pack_id, tokens, note, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7) RETURNING *`,
      [r.id, r.accountId, r.walletId, r.packId, r.tokens, r.note, r.createdAt],
    );
    return tokenRequestFrom(row as DbRow);
  }

  async getTokenRequest(id: string): Promise<TokenRequest | null> {
    const row = await this.#one('SELECT * FROM token_requests WHERE id = $1', [id]);
    return row ? tokenRequestFrom(row) : null;
  }

  async listTokenRequests(
    filter: { accountId?: string; status?: TokenRequestStatus },
    limit: number,
  ): Promise<TokenRequest[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.accountId !== undefined) {
      values.push(filter.accountId);
      where.push(`account_id = $${values.length}`);
    }
    if (filter.status !== undefined) {
      values.push(filter.status);
      where.push(`status = $${values.length}`);
    }
    values.push(limit);
    return (
      await this.#rows(
        `SELECT * FROM token_requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
          ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
        values,
      )
    ).map(tokenRequestFrom);
  }

  async settleTokenRequest(
    id: string,
    outcome:
      | { status: 'credited'; at: number; memo: string }
      | { status: 'declined'; at: number; reason: string },
  ): Promise<TokenRequest | null> {
    return this.#tx(async (tx) => {
      const request = (
        await tx.query("SELECT * FROM token_requests WHERE id = $1 AND status = 'open' FOR UPDATE", [id])
      ).rows[0];
      if (!request) return null;
      let entryId: string | null = null;
      if (outcome.status === 'credited') {
        const entry = await this.#post(tx, {
          walletId: str(request.wallet_id),
          kind: 'topup',
          amountMicros: BigInt(request.tokens) * MICROS_PER_TOKEN,
          at: outcome.at,
          idempotencyKey: `token-request:${id}`,
          memo: outcome.memo,
        });
        entryId = String(entry.id);
      }
      const row = await tx.query(
        'UPDATE token_requests SET status = $2, reason = $3, settled_at = $4, entry_id = $5 WHERE id = $1 RETURNING *',
        [id, outcome.status, outcome.status === 'declined' ? outcome.reason : null, outcome.at, entryId],
      );
      return tokenRequestFrom(row.rows[0] as DbRow);
    });
  }

  async collectorState(source: string): Promise<CollectorState | null> {
    const row = await this.#one(`SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state WHERE source = $1`, [
      source,
    ]);
    return row ? collectorStateFrom(row) : null;
  }

  async listCollectorStates(): Promise<CollectorState[]> {
    return (await this.#rows(`SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state ORDER BY source`)).map(
      collectorStateFrom,
    );
  }

  async saveCollectorState(state: CollectorState): Promise<void> {
    await this.#q(
      `INSERT INTO collector_state (${COLLECTOR_STATE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, last_run_at = excluded.last_run_at,
         last_success_at = excluded.last_success_at, last_error = excluded.last_error, failures = excluded.failures,
         paused_until = excluded.paused_until,
         claimed_slot = greatest(collector_state.claimed_slot, excluded.claimed_slot)`,
      [
        state.source,
        state.cursor,
        state.lastRunAt,
        state.lastSuccessAt,
        state.lastError,
        state.failures,
        state.pausedUntil,
        state.claimedSlot,
      ],
    );
  }

  async claimCollectorSlot(source: string, slot: number): Promise<boolean> {
    const rows = await this.#rows(
      `INSERT INTO collector_state (source, cursor, failures, claimed_slot) VALUES ($1, '{}', 0, $2)
       ON CONFLICT (source) DO UPDATE SET claimed_slot = excluded.claimed_slot
         WHERE collector_state.claimed_slot IS NULL OR collector_state.claimed_slot < excluded.claimed_slot
       RETURNING source`,
      [source, slot],
    );
    return rows.length === 1;
  }

  async recordCollectionRun(run: Omit<CollectionRun, 'id'>): Promise<CollectionRun> {
    const row = await this.#one(
      `${COLLECTION_RUN_INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
      [
        run.source,
        run.startedAt,
        run.finishedAt,
        run.outcome,
        JSON.stringify(run.datasets),
        run.rowsNew,
        run.rowsChanged,
        run.rowsRejected,
        run.requests,
        run.bytes,
        run.notModified,
        run.error,
      ],
    );
    return collectionRunFrom(row as DbRow);
  }

  async listCollectionRuns(limit: number): Promise<CollectionRun[]> {
    return (await this.#rows('SELECT * FROM collection_runs ORDER BY id DESC LIMIT $1', [limit])).map(
      collectionRunFrom,
    );
  }

  async listImportRuns(
    filter: { dataset?: string; ids?: readonly number[] },
    limit: number,
  ): Promise<ImportRun[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.dataset !== undefined) {
      values.push(filter.dataset);
      where.push(`dataset = $${values.length}`);
    }
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      values.push(filter.ids);
      where.push(`id = ANY($${values.length}::bigint[])`);
    }
    values.push(limit);
    const rows = await this.#rows(
      `SELECT * FROM import_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(importRunFrom);
  }

  async datasetSpan(dataset: string): Promise<DatasetSpan | null> {
    const row = await this.#one(
      `SELECT s.source, s.row_count, s.loaded_at,
              (SELECT min(t) FROM dataset_rows WHERE dataset = $1) AS first_t,
              (SELECT max(t) FROM dataset_rows WHERE dataset = $1) AS last_t
         FROM dataset_sources s WHERE s.dataset = $1`,
      [dataset],
    );
    if (!row) return null;
    return {
      source: str(row.source) as RowSource,
      rows: num(row.row_count),
      firstT: optStr(row.first_t),
      lastT: optStr(row.last_t),
      loadedAt: num(row.loaded_at),
    };
  }

  async createAnalysis(a: AnalysisRecord): Promise<void> {
    await this.#q(
      'INSERT INTO analyses (id, account_id, name, spec, transcript, planner, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [a.id, a.accountId, a.name, a.spec, a.transcript, a.planner, a.createdAt, a.updatedAt],
    );
  }

  async getAnalysis(accountId: string, id: string): Promise<AnalysisRecord | null> {
    const row = await this.#one('SELECT * FROM analyses WHERE id = $1 AND account_id = $2', [id, accountId]);
    return row ? analysisFrom(row) : null;
  }

  async listAnalyses(accountId: string): Promise<AnalysisRecord[]> {
    const rows = await this.#rows(
      'SELECT * FROM analyses WHERE account_id = $1 ORDER BY updated_at DESC, id DESC',
      [accountId],
    );
    return rows.map(analysisFrom);
  }

  async updateAnalysis(
    accountId: string,
    id: string,
    patch: Partial<Pick<AnalysisRecord, 'name' | 'spec' | 'transcript' | 'planner'>> & { updatedAt: number },
  ): Promise<boolean> {
    const entries = Object.entries(patch).filter(([field, v]) => field in analysisColumns && v !== undefined);
    const sets = entries.map(
      ([field], i) => `${analysisColumns[field as keyof typeof analysisColumns]} = $${i + 1}`,
    );
    const n = entries.length;
    const result = await this.#q(
      `UPDATE analyses SET ${sets.join(', ')} WHERE id = $${n + 1} AND account_id = $${n + 2}`,
      [...entries.map(([, v]) => v), id, accountId],
    );
    return result.rowCount === 1;
  }

  async deleteAnalysis(accountId: string, id: string): Promise<boolean> {
    const result = await this.#q('DELETE FROM analyses WHERE id = $1 AND account_id = $2', [id, accountId]);
    return result.rowCount === 1;
  }

  async beginAnalysisRun(
    run: NewAnalysisRun,
    limit: { sinceMs: number; maxRuns: number },
  ): Promise<{ ok: true } | { ok: false; runs: number }> {
    return this.#tx(async (tx) => {
      // One account's runs take turns here, on every node: the count and the insert cannot interleave.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`analysis-runs:${run.accountId}`]);
      const counted = await tx.query(
        'SELECT count(*)::integer AS n FROM analysis_runs WHERE account_id = $1 AND started_at >= $2',
        [run.accountId, limit.sinceMs],
      );
      const runs = num(counted.rows[0]?.n ?? 0);
      if (runs >= limit.maxRuns) return { ok: false as const, runs };
      await tx.query(
        `INSERT INTO analysis_runs (id, account_id, analysis_id, kind, inputs_hash, started_at, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'running')`,
        [run.id, run.accountId, run.analysisId, run.kind, run.inputsHash, run.startedAt],
      );
      return { ok: true as const };
    });
  }

  async finishAnalysisRun(id: string, outcome: AnalysisRunOutcome): Promise<void> {
    await this.#q(
      `UPDATE analysis_runs SET status = $1, reads = $2, burned_micros = $3, result = $4,
         analysis_id = COALESCE($5, analysis_id), inputs_hash = COALESCE($6, inputs_hash) WHERE id = $7`,
      [
        outcome.status,
        outcome.reads,
        outcome.burnedMicros.toString(),
        outcome.result,
        outcome.analysisId ?? null,
        outcome.inputsHash ?? null,
        id,
      ],
    );
  }

  async releaseAnalysisRun(accountId: string, id: string): Promise<boolean> {
    const result = await this.#q(
      "DELETE FROM analysis_runs WHERE id = $1 AND account_id = $2 AND status = 'running'",
      [id, accountId],
    );
    return result.rowCount === 1;
  }

  async countAnalysisRuns(accountId: string, sinceMs: number): Promise<number> {
    const row = await this.#one(
      'SELECT count(*)::integer AS n FROM analysis_runs WHERE account_id = $1 AND started_at >= $2',
      [accountId, sinceMs],
    );
    return num(row?.n ?? 0);
  }

  async findAnalysisRun(
    accountId: string,
    query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  ): Promise<AnalysisRunRecord | null> {
    const filter = runFilter(query, (i) => `$${i}`, 2);
    const row = await this.#one(
      `SELECT id, account_id, analysis_id, kind, inputs_hash, started_at, status, reads,
              burned_micros::text AS burned_micros, result
         FROM analysis_runs WHERE account_id = $1 AND status = 'done'${filter.sql}
        ORDER BY started_at DESC, id DESC LIMIT 1`,
      [accountId, ...filter.values],
    );
    return row ? analysisRunFrom(row) : null;
  }
}
