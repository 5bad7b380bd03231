/**
 * SqliteStore: the embedded default, on node:sqlite in WAL mode. Statements run synchronously, so a
 * transaction with no await inside cannot interleave with another request of this process; BEGIN
 * IMMEDIATE and busy_timeout keep it correct when several processes share the file.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
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
  importIdsOf,
  type KeyedRow,
  type NewImportRun,
} from '../import-port.ts';
import { importRunFrom } from '../import-rows.ts';
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
  type Store,
  type StoredPage,
  type StoredRow,
  type UsageEvent,
  type UsageInput,
  type UsageSum,
  type WalletRecord,
} from '../port.ts';
import { entityKeyColumns, layoutText, planScan, rowKeys } from '../row-scan.ts';
import {
  accountColumns,
  accountFrom,
  big,
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
import { Checkpointer, SAFETY_CHECKPOINT_PAGES } from './checkpointer.ts';
import { sqliteMigrations } from './migrations.ts';
import { failLoad, liveKey, newRowsKey, reapLoads, retire, sliced, startLoad, swapRun } from './row-loads.ts';
import { LIVE_KEY, ROW_COLUMNS, runScan, type ScanJob, type ScanResult, scanJob, walk } from './row-sql.ts';
import { ScanWorkers } from './scan-workers.ts';

/** Prepared statements kept (see #stmt); the store's own fixed statements are a few dozen. */
const MAX_STATEMENTS = 256;

/**
 * A LIMIT, written into the SQL as a checked integer: SQLite re-prepares a statement on every run whose
 * LIMIT is a bound parameter (the planner reads its value), which cost a page read about 10 µs.
 */
function limitLiteral(limit: number): string {
  return String(rowLimit(limit));
}
/** Above every row id: the keyset bound of a first page. */
const MAX_ID = 9223372036854775807n;

type Cell = SQLInputValue | undefined;
type DbRow = Record<string, Cell>;

/**
 * SQLITE_BUSY / SQLITE_LOCKED past busy_timeout: another process (a `tmd import`) holds the write lock.
 * Writes wait for it here (reads do not, in WAL mode): a 503 to retry, as an unreachable PostgreSQL is.
 */
function busyAsUnavailable(error: unknown): unknown {
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  return code === 'ERR_SQLITE_ERROR' && (errcode === 5 || errcode === 6)
    ? serviceUnavailable('The database is busy with another writer; nothing was served.')
    : error;
}

function openDatabase(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  // NORMAL in WAL mode: a committed transaction survives a process crash (kill -9); only an OS
  // crash or power loss can lose the last commits. Documented in the README.
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  return db;
}

const KEY_LIST = entityKeyColumns.join(', ');
const KEY_MARKS = entityKeyColumns.map(() => '?').join(', ');
const INSERT_DATASET_ROW = `INSERT INTO dataset_rows (dataset, id, t, data, csv, ${KEY_LIST}) VALUES (?, ?, ?, ?, ?, ${KEY_MARKS})`;

/**
 * Sets a dataset's key columns from its stored JSON, as rowKeys does from a row, and records the layout
 * they follow; in the caller's transaction.
 */
function rekey(db: DatabaseSync, dataset: string, entityFields: readonly string[]): void {
  const { sql, params } = rekeySql(entityFields);
  db.prepare(sql).run(...params, liveKey(db, dataset));
  db.prepare('UPDATE dataset_sources SET entity_fields = ? WHERE dataset = ?').run(
    layoutText(entityFields),
    dataset,
  );
}

/** A statement that sets a dataset's key columns from its stored JSON, as rowKeys does from a row. */
function rekeySql(entityFields: readonly string[]): { sql: string; params: SQLInputValue[] } {
  const params: SQLInputValue[] = [];
  const sets = entityKeyColumns.map((column, slot) => {
    const field = entityFields[slot];
    if (field === undefined) return `${column} = NULL`;
    const path = `$."${field}"`;
    params.push(path, path, path, path);
    // Text as itself, numbers and booleans as their JSON text (JSON.stringify wrote the row).
    return `${column} = CASE WHEN json_type(data, ?) = 'text' THEN data ->> ?
      WHEN json_type(data, ?) IN ('integer', 'real', 'true', 'false') THEN data -> ? END`;
  });
  return { sql: `UPDATE dataset_rows SET ${sets.join(', ')} WHERE dataset = ?`, params };
}

/**
 * The natural key `generatedKey` (import-port.ts) gives a stored row, from its JSON: the key fields'
 * values as JSON.stringify wrote them. Field names are checked by the caller to be catalog names.
 */
function generatedKeySql(fields: readonly string[]): string {
  const values = fields.map((f) => `json(data -> '$."${f.replaceAll("'", "''")}"')`);
  return `'g:' || json_array(${values.join(', ')})`;
}

/** The end of a load, in its transaction: the dataset's source record. */
function finishLoad(
  db: DatabaseSync,
  dataset: string,
  source: RowSource,
  rowCount: number,
  previous: number | null,
  csvColumns: readonly string[] | undefined,
  entityFields: readonly string[],
  rowsKey: string | null,
): void {
  db.prepare(
    `INSERT INTO dataset_sources (dataset, source, row_count, loaded_at, csv_columns, entity_fields, rows_key)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (dataset) DO UPDATE SET source = excluded.source, row_count = excluded.row_count,
       loaded_at = excluded.loaded_at, csv_columns = excluded.csv_columns, entity_fields = excluded.entity_fields,
       rows_key = excluded.rows_key`,
  ).run(
    dataset,
    source,
    rowCount,
    // Strictly later than the load it replaces, so `ifLoadedAt` tells any two loads apart.
    Math.max(Date.now(), (previous ?? 0) + 1),
    csvColumns ? csvColumnsKey(csvColumns) : null,
    layoutText(entityFields),
    rowsKey,
  );
}

/** How often a process looks for loads another process swapped in (onLoaded). */
const WATCH_MS = 250;

/** Rows an upsert takes in one transaction, in place; more are written beside the live rows. */
const IN_PLACE_ROWS = 2_000;
/** Rows copied per statement when an upsert starts beside the live rows. */
const COPY_CHUNK = 500;

/**
 * One upsert's statements: in place on the live key (one transaction), or on a new key that the live
 * rows are first copied under (`copy`, in slices) and that `swap` makes live.
 */
class Upsert {
  key: string;
  readonly #db: DatabaseSync;
  readonly #dataset: string;
  readonly #timeField: string;
  readonly #layout: readonly string[];
  readonly #csvColumns: readonly string[] | undefined;
  readonly #naturalKey: readonly string[] | undefined;
  #live = '';
  #present: DbRow | undefined;
  #runId: number | null = null;
  #nextId = 0;
  #base = 0;
  #copied = 0;
  #copyDone = true;
  #written = 0;
  #replaced = 0;
  #seen = 0;
  #firstT: string | null = null;
  #lastT: string | null = null;
  #statements: { existing: StatementSync; replace: StatementSync; insert: StatementSync } | null = null;

  constructor(
    db: DatabaseSync,
    dataset: string,
    timeField: string,
    layout: readonly string[],
    csvColumns: readonly string[] | undefined,
    options: { naturalKey?: readonly string[] },
  ) {
    this.#db = db;
    this.#dataset = dataset;
    this.#timeField = timeField;
    this.#layout = layout;
    this.#csvColumns = csvColumns;
    this.#naturalKey = options.naturalKey;
    this.key = liveKey(db, dataset);
  }

  /** In a transaction: reads what is live; returns its loaded_at, which the swap checks again. */
  begin(runId: number | null, inPlace: boolean): number | null {
    const db = this.#db;
    this.#runId = runId;
    this.#live = liveKey(db, this.#dataset);
    this.#present = db
      .prepare('SELECT source, loaded_at, row_count, entity_fields FROM dataset_sources WHERE dataset = ?')
      .get(this.#dataset) as DbRow | undefined;
    const source = this.#present ? str(this.#present.source) : null;
    const layoutChanged = this.#present && optStr(this.#present.entity_fields) !== layoutText(this.#layout);
    if (inPlace) {
      if (source === 'sample') db.prepare('DELETE FROM dataset_rows WHERE dataset = ?').run(this.#live);
      else if (layoutChanged) rekey(db, this.#dataset, this.#layout);
      if (source === 'import' && this.#naturalKey) {
        // Rows a replacing load wrote have no natural key yet: given one here, once, so that this import
        // replaces them rather than adding them again (a key two of them share stays on the first).
        db.prepare(
          `UPDATE OR IGNORE dataset_rows SET nk = ${generatedKeySql(this.#naturalKey)} WHERE dataset = ? AND nk IS NULL`,
        ).run(this.#live);
      }
      this.#base = source === 'import' ? num(this.#present?.row_count) : 0;
      this.#nextId = num(
        (
          db
            .prepare('SELECT COALESCE(max(id), 0) AS id FROM dataset_rows WHERE dataset = ?')
            .get(this.#live) as DbRow
        ).id,
      );
    } else {
      this.#copyDone = source !== 'import';
    }
    return this.#present ? num(this.#present.loaded_at) : null;
  }

  /** Copies the next chunk of live rows under the new key; true when all are. */
  copy(): boolean {
    if (this.#copyDone) return true;
    const db = this.#db;
    const from = this.#nextId;
    const copied = Number(
      db
        .prepare(
          `INSERT INTO dataset_rows (dataset, id, t, data, csv, nk, import_id, ${KEY_LIST})
           SELECT ?, id, t, data, csv, nk, import_id, ${KEY_LIST} FROM dataset_rows
           WHERE dataset = ? AND id > ? ORDER BY id LIMIT ${COPY_CHUNK}`,
        )
        .run(this.key, this.#live, from).changes,
    );
    this.#copied += copied;
    this.#nextId = num(
      (
        db
          .prepare('SELECT COALESCE(max(id), 0) AS id FROM dataset_rows WHERE dataset = ?')
          .get(this.key) as DbRow
      ).id,
    );
    if (optStr(this.#present?.entity_fields) !== layoutText(this.#layout)) {
      const { sql, params } = rekeySql(this.#layout);
      db.prepare(`${sql} AND id > ?`).run(...params, this.key, from);
    }
    if (this.#naturalKey)
      db.prepare(
        `UPDATE OR IGNORE dataset_rows SET nk = ${generatedKeySql(this.#naturalKey)} WHERE dataset = ? AND id > ? AND nk IS NULL`,
      ).run(this.key, from);
    if (copied < COPY_CHUNK) this.#copyDone = true;
    return this.#copyDone;
  }

  put({ key: nk, row }: KeyedRow): void {
    this.#statements ??= {
      existing: this.#db.prepare('SELECT import_id, data FROM dataset_rows WHERE dataset = ? AND nk = ?'),
      replace: this.#db.prepare(
        `UPDATE dataset_rows SET t = ?, data = ?, csv = ?, import_id = ?, ${entityKeyColumns.map((k) => `${k} = ?`).join(', ')}
         WHERE dataset = ? AND nk = ?`,
      ),
      insert: this.#db.prepare(
        `INSERT INTO dataset_rows (dataset, id, t, data, csv, nk, import_id, ${KEY_LIST})
         VALUES (?, ?, ?, ?, ?, ?, ?, ${KEY_MARKS})`,
      ),
    };
    const { existing, replace, insert } = this.#statements;
    this.#seen++;
    const t = String(row[this.#timeField] ?? '');
    if (t !== '' && (this.#firstT === null || t < this.#firstT)) this.#firstT = t;
    if (t !== '' && (this.#lastT === null || t > this.#lastT)) this.#lastT = t;
    const csv = this.#csvColumns ? csvRecord(row, this.#csvColumns) : null;
    const keys = rowKeys(row, this.#layout);
    const stored = existing.get(this.key, nk) as DbRow | undefined;
    if (stored) {
      const json = JSON.stringify(row);
      const again = optNum(stored.import_id) === this.#runId;
      // A row stored with the same values is left as it is, its provenance kept; a key this import
      // already wrote (the file repeats it) was counted then.
      if (!again && str(stored.data) === json) return;
      replace.run(t, json, csv, this.#runId, ...keys, this.key, nk);
      if (!again) {
        this.#replaced++;
        this.#written++;
      }
    } else {
      insert.run(this.key, ++this.#nextId, t, JSON.stringify(row), csv, nk, this.#runId, ...keys);
      this.#written++;
    }
  }

  /**
   * In the transaction that ends the upsert: for rows written beside the live ones, the live rows must
   * still be the ones copied (`loadedAt` as begin read it), else `conflict` and nothing changes.
   */
  swap(loadedAt: number | null | undefined): ImportRun {
    const db = this.#db;
    const staged = loadedAt !== undefined && this.key !== this.#live;
    const present = db
      .prepare('SELECT loaded_at, rows_key FROM dataset_sources WHERE dataset = ?')
      .get(this.#dataset) as DbRow | undefined;
    const previous = present ? num(present.loaded_at) : null;
    if (staged) {
      if (previous !== loadedAt)
        throw new AppError(
          'conflict',
          'Another load of this dataset happened meanwhile; nothing was loaded. Run the import again.',
        );
      retire(db, this.#dataset, this.#live);
    }
    const total = (staged ? this.#copied : this.#base) + this.#written - this.#replaced;
    const rowsKey = staged ? this.key : present ? optStr(present.rows_key) : null;
    finishLoad(db, this.#dataset, 'import', total, previous, this.#csvColumns, this.#layout, rowsKey);
    db.prepare('DELETE FROM dataset_loads WHERE rows_key = ?').run(this.key);
    swapRun(
      db,
      this.#runId,
      {
        read: this.#seen,
        inserted: this.#written - this.#replaced,
        replaced: this.#replaced,
        firstT: this.#firstT,
        lastT: this.#lastT,
      },
      Date.now(),
    );
    return importRunFrom(db.prepare('SELECT * FROM import_runs WHERE id = ?').get(this.#runId) as DbRow);
  }
}

export class SqliteStore implements Store {
  readonly #db: DatabaseSync;
  readonly #path: string;
  readonly #statements = new Map<string, StatementSync>();
  #batch: { work: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  /** The deletion of replaced and dead loads' rows under way in this process (reapLoads). */
  #reaping: Promise<void> | null = null;
  readonly #loadListeners = new Set<(dataset: string) => void>();
  /** What the watch last saw: PRAGMA data_version, and each dataset's loaded_at. */
  #watch: { timer: NodeJS.Timeout; version: number; loadedAt: Map<string, number> } | null = null;
  /** A file database's WAL checkpoints, off the serving thread (checkpointer.ts). */
  readonly #checkpointer: Checkpointer | null = null;
  /** A file database's read workers, for reads that check rows one by one (scan-workers.ts). */
  readonly #scans: ScanWorkers | null = null;
  /** Each dataset's entity fields, the order of its key columns (syncLayouts). */
  #layouts: ReadonlyMap<string, readonly string[]> = new Map();

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.#path = path;
    this.#db = openDatabase(path);
    if (path !== ':memory:') {
      const db = this.#db;
      db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_CHECKPOINT_PAGES}`);
      this.#checkpointer = new Checkpointer(path, {
        finish: () => db.isOpen && this.#checkpoint(),
        fallback: (pages) => {
          if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
        },
      });
      this.#scans = new ScanWorkers(path);
    }
  }

  /** A PASSIVE checkpoint on this connection: true when it copied every frame of the WAL. */
  #checkpoint(): boolean {
    const result = this.#get('PRAGMA wal_checkpoint(PASSIVE)');
    return Number(result?.busy) === 0 && result?.log === result?.checkpointed;
  }

  /**
   * A cached prepared statement. Money columns read as BigInt; `asArrays` (dataset pages, on the path
   * every read takes) returns each row as an array of plain values instead: no object per row, and row
   * ids are small. The cache keeps the MAX_STATEMENTS most recently used: a read's SQL depends on how
   * many values each filter has, so clients could otherwise grow it without end.
   */
  #stmt(sql: string, asArrays = false): StatementSync {
    const key = asArrays ? `arrays:${sql}` : sql;
    let statement = this.#statements.get(key);
    if (statement) {
      // Most recently used last: the first entry is the one to evict.
      this.#statements.delete(key);
    } else {
      statement = this.#db.prepare(sql);
      if (asArrays) statement.setReturnArrays(true);
      else statement.setReadBigInts(true);
      if (this.#statements.size >= MAX_STATEMENTS) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
    }
    this.#statements.set(key, statement);
    return statement;
  }

  /** Read workers started (for tests). */
  get readWorkers(): number {
    return this.#scans?.started ?? 0;
  }

  /** Statements cached now (for tests). */
  get cachedStatements(): number {
    return this.#statements.size;
  }

  #get(sql: string, ...params: SQLInputValue[]): DbRow | undefined {
    return this.#stmt(sql).get(...params) as DbRow | undefined;
  }

  #all(sql: string, ...params: SQLInputValue[]): DbRow[] {
    return this.#stmt(sql).all(...params) as DbRow[];
  }

  #run(
    sql: string,
    ...params: SQLInputValue[]
  ): { changes: number | bigint; lastInsertRowid: number | bigint } {
    let result: { changes: number | bigint; lastInsertRowid: number | bigint };
    try {
      result = this.#stmt(sql).run(...params);
    } catch (error) {
      throw busyAsUnavailable(error);
    }
    if (!this.#db.isTransaction) this.#checkpointer?.committed();
    return result;
  }

  /**
   * A transaction around `work`: IMMEDIATE takes the write lock up front; DEFERRED, for statements that
   * only read, makes them one read transaction (one WAL read lock instead of one per statement). Its
   * statements are prepared once: exec would parse them on every call.
   */
  #tx<T>(work: () => T, mode: 'IMMEDIATE' | 'DEFERRED' = 'IMMEDIATE'): T {
    // A read inside a transaction already open (an in-memory database's streamed load) is part of it.
    if (mode === 'DEFERRED' && this.#db.isTransaction) return work();
    try {
      this.#stmt(`BEGIN ${mode}`).run();
    } catch (error) {
      throw busyAsUnavailable(error);
    }
    let result: T;
    try {
      result = work();
      this.#stmt('COMMIT').run();
    } catch (error) {
      // SQLite rolls back on its own after some errors (a full disk, I/O); the first error is the one told.
      if (this.#db.isTransaction) this.#stmt('ROLLBACK').run();
      throw busyAsUnavailable(error);
    }
    if (mode === 'IMMEDIATE') this.#checkpointer?.committed();
    return result;
  }

  async migrate(): Promise<void> {
    this.#tx(() => {
      this.#db.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
      );
      const applied = new Set(
        (this.#db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) =>
          Number(r.version),
        ),
      );
      for (const migration of sqliteMigrations) {
        if (applied.has(migration.version)) continue;
        this.#db.exec(migration.sql);
        this.#db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, Date.now());
      }
    });
  }

  async close(): Promise<void> {
    if (this.#watch) clearInterval(this.#watch.timer);
    this.#watch = null;
    // The worker's connection first. What this process wrote leaves the WAL now: the last connection to
    // close checkpoints on its own, but a server may still hold the file open.
    await this.#scans?.close();
    await this.#checkpointer?.close();
    if (!this.#db.isOpen) return;
    try {
      if (this.#checkpointer) this.#checkpoint();
    } catch {
      // Best effort: the frames stay in the WAL, which the next checkpoint on the file copies.
    }
    this.#db.close();
  }

  /** The checkpointer's state, null for an in-memory database (for tests). */
  get checkpoints(): Checkpointer['stats'] | null {
    return this.#checkpointer?.stats ?? null;
  }

  async ping(): Promise<void> {
    this.#get('SELECT 1 AS ok');
  }

  async createWallet(id: string, accountId: string | null, month: string): Promise<WalletRecord> {
    this.#run('INSERT INTO wallets (id, account_id, burn_month) VALUES (?, ?, ?)', id, accountId, month);
    return { id, accountId, balanceMicros: 0n, burnMonth: month, burnMonthMicros: 0n };
  }

  async getWallet(id: string): Promise<WalletRecord | null> {
    const row = this.#get('SELECT * FROM wallets WHERE id = ?', id);
    return row ? walletFrom(row) : null;
  }

  async createAccount(input: NewAccount, month: string): Promise<AccountRecord> {
    this.#tx(() => {
      this.#run(
        'INSERT INTO wallets (id, account_id, burn_month) VALUES (?, ?, ?)',
        input.walletId,
        input.id,
        month,
      );
      this.#run(
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
    const row = this.#get('SELECT * FROM accounts WHERE id = ?', id);
    return row ? accountFrom(row) : null;
  }

  async findAccountByEmail(email: string): Promise<AccountRecord | null> {
    const row = this.#get('SELECT * FROM accounts WHERE email = ?', email);
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
    this.#db
      .prepare(`UPDATE accounts SET ${sets} WHERE id = ?`)
      .run(...entries.map(([, v]) => v as SQLInputValue), id);
  }

  async listAccountsWithPackage(): Promise<AccountRecord[]> {
    return this.#all('SELECT * FROM accounts WHERE package_id IS NOT NULL ORDER BY created_at, id').map((r) =>
      accountFrom(r),
    );
  }

  async setKeyCaps(
    id: string,
    caps: { dailyCapMicros?: bigint | null; monthlyCapMicros?: bigint | null },
  ): Promise<boolean> {
    const result = this.#run(
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
    this.#run(
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
    const row = this.#get(
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
    const row = this.#get('SELECT * FROM api_keys WHERE id = ?', id);
    return row ? keyFrom(row) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    return this.#all('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id', accountId).map(
      (r) => keyFrom(r),
    );
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return (
      Number(
        this.#run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id).changes,
      ) === 1
    );
  }

  async replaceKeys(accountId: string, kind: KeyKind, key: KeyRecord, at: number): Promise<void> {
    this.#tx(() => {
      this.#run(
        'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND kind = ? AND revoked_at IS NULL',
        at,
        accountId,
        kind,
      );
      this.#insertKey(key);
    });
  }

  async createSession(session: SessionRecord): Promise<void> {
    this.#run(
      'INSERT INTO sessions (id, account_id, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?)',
      session.id,
      session.accountId,
      session.createdAt,
      session.expiresAt,
      session.revokedAt,
    );
  }

  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.#get('SELECT * FROM sessions WHERE id = ?', id);
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
    this.#run('UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
  }

  async insertPasswordReset(reset: PasswordReset): Promise<void> {
    this.#run(
      'INSERT INTO password_resets (digest, account_id, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?)',
      reset.digest,
      reset.accountId,
      reset.createdAt,
      reset.expiresAt,
      reset.usedAt,
    );
  }

  async findPasswordReset(digest: string): Promise<PasswordReset | null> {
    const row = this.#get('SELECT * FROM password_resets WHERE digest = ?', digest);
    return row ? passwordResetFrom(row) : null;
  }

  async completePasswordReset(
    digest: string,
    passwordHash: string,
    at: number,
  ): Promise<{ accountId: string; sessionsEnded: number } | null> {
    return this.#tx(() => {
      const row = this.#get(
        `UPDATE password_resets SET used_at = ? WHERE digest = ? AND used_at IS NULL AND expires_at > ?
         RETURNING account_id`,
        at,
        digest,
        at,
      );
      if (!row) return null;
      const accountId = str(row.account_id);
      this.#run(
        'UPDATE password_resets SET used_at = ? WHERE account_id = ? AND used_at IS NULL',
        at,
        accountId,
      );
      this.#run('UPDATE accounts SET password_hash = ? WHERE id = ?', passwordHash, accountId);
      const ended = this.#run(
        'UPDATE sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL',
        at,
        accountId,
      );
      return { accountId, sessionsEnded: Number(ended.changes) };
    });
  }

  /**
   * Moves a wallet's balance by `amountMicros` (a negative amount takes) and writes its ledger entry,
   * in the caller's transaction; the balance's CHECK refuses to go below zero.
   */
  #post(entry: {
    walletId: string;
    kind: EntryKind;
    amountMicros: bigint;
    at: number;
    requestId?: string | null;
    idempotencyKey?: string | null;
    memo?: string | null;
  }): DbRow {
    const wallet = this.#get(
      'UPDATE wallets SET balance_micros = balance_micros + ? WHERE id = ? RETURNING balance_micros',
      entry.amountMicros,
      entry.walletId,
    );
    if (!wallet) throw new Error(`wallet ${entry.walletId} does not exist`);
    return this.#get(
      'INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id, idempotency_key, memo) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *',
      entry.walletId,
      entry.kind,
      entry.amountMicros,
      wallet.balance_micros as bigint,
      entry.at,
      entry.requestId ?? null,
      entry.idempotencyKey ?? null,
      entry.memo ?? null,
    ) as DbRow;
  }

  async credit(input: CreditInput): Promise<CreditResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a credit must be positive');
    return this.#tx(() => {
      if (input.idempotencyKey) {
        const existing = this.#get(
          'SELECT * FROM ledger_entries WHERE wallet_id = ? AND idempotency_key = ?',
          input.walletId,
          input.idempotencyKey,
        );
        if (existing) return { entry: entryFrom(existing), duplicate: true };
      }
      if (input.maxBalanceMicros !== undefined) {
        const held = this.#get('SELECT balance_micros FROM wallets WHERE id = ?', input.walletId);
        if (held && (held.balance_micros as bigint) + input.amountMicros > input.maxBalanceMicros)
          throw new BalanceLimitReached(`wallet ${input.walletId} would pass its maximum balance`);
      }
      const entry = this.#post(input);
      if (input.reverses) {
        this.#run(
          'UPDATE wallets SET burn_month_micros = MAX(0, burn_month_micros - ?) WHERE id = ? AND burn_month = ?',
          input.amountMicros,
          input.walletId,
          input.reverses.month,
        );
        this.#insertUsage(input.reverses.usage);
      }
      return { entry: entryFrom(entry), duplicate: false };
    });
  }

  #insertUsage(u: UsageInput): void {
    this.#run(
      'INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros, cost_micros, burned_micros, outcome, rows, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
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
    );
  }

  #burnedSince(keyId: string, sinceMs: number): bigint {
    return big(
      this.#get(
        'SELECT COALESCE(SUM(burned_micros), 0) AS spent FROM usage_events WHERE key_id = ? AND at >= ?',
        keyId,
        sinceMs,
      )?.spent ?? 0n,
    );
  }

  #debitOne(input: DebitInput): DebitResult {
    const keyId = input.usage.keyId;
    if (keyId !== null) {
      for (const cap of input.spendCaps ?? []) {
        const spent = this.#burnedSince(keyId, cap.sinceMs);
        if (spent + input.amountMicros > cap.capMicros) {
          const current = this.#get('SELECT balance_micros FROM wallets WHERE id = ?', input.walletId);
          return {
            ok: false,
            balanceMicros: current ? big(current.balance_micros) : 0n,
            cap: { ...cap, spentMicros: spent },
          };
        }
      }
    }
    const updated = this.#get(
      // The month never moves backwards: a read begun before a UTC month change that commits after
      // reads of the new month counts in its own month, and the new month's burn stays.
      `UPDATE wallets SET balance_micros = balance_micros - ?1,
          burn_month_micros = CASE WHEN burn_month = ?2 THEN burn_month_micros + ?1
                                   WHEN burn_month > ?2 THEN burn_month_micros ELSE ?1 END,
          burn_month = MAX(burn_month, ?2)
        WHERE id = ?3 AND balance_micros >= ?1
        RETURNING balance_micros, CASE WHEN burn_month = ?2 THEN burn_month_micros END AS burn_month_micros`,
      input.amountMicros,
      input.month,
      input.walletId,
    );
    if (!updated) {
      const current = this.#get('SELECT balance_micros FROM wallets WHERE id = ?', input.walletId);
      return { ok: false, balanceMicros: current ? big(current.balance_micros) : 0n };
    }
    const balanceMicros = big(updated.balance_micros);
    const entry = this.#run(
      "INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id) VALUES (?, 'burn', ?, ?, ?, ?)",
      input.walletId,
      -input.amountMicros,
      balanceMicros,
      input.usage.at,
      input.usage.requestId,
    );
    this.#insertUsage(input.usage);
    return {
      ok: true,
      balanceMicros,
      burnMonthMicros: updated.burn_month_micros === null ? null : big(updated.burn_month_micros),
      entryId: String(entry.lastInsertRowid),
    };
  }

  /**
   * Group commit: debits and usage records that arrive in the same turn of the event loop share one
   * transaction. Each debit is still its own conditional UPDATE, applied in arrival order, and no
   * promise resolves before the COMMIT: an acknowledged debit is always a committed one.
   */
  #enqueue<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#batch.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#batch.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    let results: unknown[];
    try {
      results = this.#tx(() => batch.map((item) => item.work()));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      item.resolve(results[index]);
    });
  }

  async debit(input: DebitInput): Promise<DebitResult> {
    if (input.amountMicros <= 0n) throw new RangeError('a debit must be positive');
    return this.#enqueue(() => this.#debitOne(input));
  }

  async recordUsage(usage: UsageInput): Promise<void> {
    return this.#enqueue(() => this.#insertUsage(usage));
  }

  async keyBurnedSince(keyId: string, sinceMs: number): Promise<bigint> {
    return this.#burnedSince(keyId, sinceMs);
  }

  async listEntries(walletId: string): Promise<LedgerEntry[]> {
    return this.#all('SELECT * FROM ledger_entries WHERE wallet_id = ? ORDER BY id', walletId).map(entryFrom);
  }

  async listEntriesPage(
    walletId: string,
    page: { beforeId: string | null; limit: number },
  ): Promise<LedgerEntry[]> {
    const before = page.beforeId === null ? MAX_ID : BigInt(page.beforeId);
    return this.#all(
      `SELECT * FROM ledger_entries WHERE wallet_id = ? AND id < ? ORDER BY id DESC LIMIT ${limitLiteral(page.limit)}`,
      walletId,
      before,
    ).map(entryFrom);
  }

  async auditLedger(): Promise<LedgerAudit> {
    const wallets = Number(this.#get('SELECT COUNT(*) AS n FROM wallets')?.n ?? 0);
    const entries = Number(this.#get('SELECT COUNT(*) AS n FROM ledger_entries')?.n ?? 0);
    const mismatches = this.#all(
      `SELECT w.id, w.balance_micros, COALESCE(SUM(e.amount_micros), 0) AS total
         FROM wallets w LEFT JOIN ledger_entries e ON e.wallet_id = w.id
        GROUP BY w.id, w.balance_micros
       HAVING w.balance_micros <> COALESCE(SUM(e.amount_micros), 0) OR w.balance_micros < 0`,
    ).map((r) => ({
      walletId: str(r.id),
      balanceMicros: big(r.balance_micros),
      entriesMicros: big(r.total),
    }));
    return { wallets, entries, mismatches };
  }

  async sumEntries(walletId: string): Promise<bigint> {
    const row = this.#get(
      'SELECT COALESCE(SUM(amount_micros), 0) AS total FROM ledger_entries WHERE wallet_id = ?',
      walletId,
    );
    return big(row?.total ?? 0n);
  }

  async listUsage(
    scope: { accountId: string } | { keyId: string },
    beforeId: string | null,
    limit: number,
  ): Promise<UsageEvent[]> {
    const [column, value] = 'accountId' in scope ? ['account_id', scope.accountId] : ['key_id', scope.keyId];
    const before = beforeId === null ? Number.MAX_SAFE_INTEGER : Number(beforeId);
    return this.#all(
      `SELECT * FROM usage_events WHERE ${column} = ? AND id < ? ORDER BY id DESC LIMIT ${limitLiteral(limit)}`,
      value,
      before,
    ).map(usageFrom);
  }

  async sumUsage(
    scope: { accountId: string } | { keyId: string },
    query: { sinceMs: number; bucketMs: number; limit: number },
  ): Promise<{ sums: UsageSum[]; more: boolean }> {
    const [column, value] = 'accountId' in scope ? ['account_id', scope.accountId] : ['key_id', scope.keyId];
    // A bigint binds as an INTEGER, so the division rounds down; a number would bind as a REAL.
    const bucketMs = BigInt(query.bucketMs);
    const sums = this.#all(
      `SELECT (at / ?) * ? AS bucket, dataset, channel,
              SUM(outcome <> 'refunded') AS served, SUM(outcome = 'refunded') AS refunded,
              SUM(burned_micros) AS burned, MAX(id) AS newest
         FROM (SELECT id, at, dataset, channel, outcome, burned_micros FROM usage_events
                WHERE ${column} = ? AND at >= ? ORDER BY id DESC LIMIT ${limitLiteral(query.limit)})
        GROUP BY bucket, dataset, channel
        ORDER BY newest DESC`,
      bucketMs,
      bucketMs,
      value,
      query.sinceMs,
    ).map(usageSumFrom);
    const beyond = this.#get(
      `SELECT 1 AS found FROM usage_events WHERE ${column} = ? AND at >= ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
      value,
      query.sinceMs,
      query.limit,
    );
    return { sums, more: beyond !== undefined };
  }

  async loadRows(
    dataset: string,
    timeField: string,
    rows: readonly Row[],
    source: RowSource,
    csvColumns?: readonly string[],
    options: { ifLoadedAt?: number; run?: NewImportRun } = {},
  ): Promise<boolean> {
    if (source === 'import') {
      async function* whole(): AsyncGenerator<readonly Row[]> {
        yield rows;
      }
      return this.#replace(dataset, timeField, whole(), csvColumns, options);
    }
    // Sample rows: a few hundred, into an empty dataset only, in one transaction.
    return this.#tx(() => {
      if (this.#db.prepare('SELECT 1 FROM dataset_sources WHERE dataset = ?').get(dataset)) return false;
      const insert = this.#stmt(INSERT_DATASET_ROW);
      const layout = this.#layoutOf(dataset);
      rows.forEach((row, index) => {
        const csv = csvColumns ? csvRecord(row, csvColumns) : null;
        insert.run(
          dataset,
          index + 1,
          String(row[timeField] ?? ''),
          JSON.stringify(row),
          csv,
          ...rowKeys(row, layout),
        );
      });
      finishLoad(this.#db, dataset, source, rows.length, null, csvColumns, layout, null);
      return true;
    });
  }

  async loadRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly Row[]>,
    source: RowSource,
    csvColumns?: readonly string[],
    options: { ifLoadedAt?: number; run?: NewImportRun } = {},
  ): Promise<boolean> {
    if (source === 'import') return this.#replace(dataset, timeField, batches, csvColumns, options);
    const rows: Row[] = [];
    for await (const batch of batches) rows.push(...batch);
    return this.loadRows(dataset, timeField, rows, source, csvColumns, options);
  }

  /** Every slice of a load, and its swap, on this connection: synchronous, so nothing interleaves. */
  readonly #write = <T>(work: () => T): T => this.#tx(work);

  /**
   * A replacing load (row-loads.ts): the rows are written under a key of their own in short
   * transactions, then swapped in at once; an error leaves the dataset as it was, its run `failed`.
   */
  async #replace(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly Row[]>,
    csvColumns: readonly string[] | undefined,
    options: { ifLoadedAt?: number; run?: NewImportRun },
  ): Promise<boolean> {
    await this.#reap();
    const db = this.#db;
    const key = newRowsKey(dataset);
    const layout = this.#layoutOf(dataset);
    const runId = this.#write(() => startLoad(db, dataset, key, options.run ?? null));
    const insert = db.prepare(INSERT_DATASET_ROW);
    let count = 0;
    let firstT: string | null = null;
    let lastT: string | null = null;
    try {
      for await (const batch of batches) {
        let i = 0;
        await sliced(this.#write, () => {
          const row = batch[i++];
          if (row === undefined) return true;
          const t = String(row[timeField] ?? '');
          if (t !== '' && (firstT === null || t < firstT)) firstT = t;
          if (t !== '' && (lastT === null || t > lastT)) lastT = t;
          const csv = csvColumns ? csvRecord(row, csvColumns) : null;
          insert.run(key, ++count, t, JSON.stringify(row), csv, ...rowKeys(row, layout));
          return i >= batch.length;
        });
      }
      this.#write(() => {
        const present = db.prepare('SELECT loaded_at FROM dataset_sources WHERE dataset = ?').get(dataset) as
          | DbRow
          | undefined;
        const previous = present ? num(present.loaded_at) : null;
        if (options.ifLoadedAt !== undefined && previous !== options.ifLoadedAt)
          throw new AppError(
            'conflict',
            'Another load of this dataset happened meanwhile; nothing was loaded. Run the import again.',
          );
        retire(db, dataset, liveKey(db, dataset));
        finishLoad(db, dataset, 'import', count, previous, csvColumns, layout, key);
        db.prepare('DELETE FROM dataset_loads WHERE rows_key = ?').run(key);
        swapRun(db, runId, { read: count, inserted: count, replaced: 0, firstT, lastT }, Date.now());
      });
    } catch (error) {
      this.#write(() => failLoad(db, dataset, key, runId, (error as Error).message));
      await this.#reap();
      throw error;
    }
    this.#loaded(dataset);
    await this.#reap();
    return true;
  }

  /**
   * Calls `listener` with a dataset's key whenever a load of it is swapped in, by this process at once
   * and by another within WATCH_MS: another process's commit moves PRAGMA data_version, and only then
   * are the datasets' loaded_at compared.
   */
  async onLoaded(listener: (dataset: string) => void): Promise<void> {
    this.#loadListeners.add(listener);
    if (this.#watch || this.#path === ':memory:') return;
    const version = () => num(this.#get('PRAGMA data_version')?.data_version);
    const loadedAt = () =>
      new Map(
        this.#all('SELECT dataset, loaded_at FROM dataset_sources').map((r) => [
          str(r.dataset),
          num(r.loaded_at),
        ]),
      );
    const timer = setInterval(() => {
      const watch = this.#watch;
      if (!watch || !this.#db.isOpen) return;
      try {
        const now = version();
        if (now === watch.version) return;
        watch.version = now;
        const seen = loadedAt();
        for (const [dataset, at] of seen)
          if (watch.loadedAt.get(dataset) !== at) this.#loaded(dataset, false);
        watch.loadedAt = seen;
      } catch {
        // Busy or closing: the next tick looks again.
      }
    }, WATCH_MS);
    timer.unref();
    this.#watch = { timer, version: version(), loadedAt: loadedAt() };
  }

  #loaded(dataset: string, own = true): void {
    if (own && this.#watch)
      this.#watch.loadedAt.set(
        dataset,
        num(this.#get('SELECT loaded_at FROM dataset_sources WHERE dataset = ?', dataset)?.loaded_at),
      );
    for (const listener of this.#loadListeners) listener(dataset);
  }

  /** Deletes the rows of replaced and dead loads (row-loads.ts), one at a time per process. */
  #reap(): Promise<void> {
    this.#reaping ??= reapLoads(this.#db, this.#write).finally(() => {
      this.#reaping = null;
    });
    return this.#reaping;
  }

  async datasetSource(
    dataset: string,
  ): Promise<{ source: RowSource; rows: number; loadedAt: number } | null> {
    const row = this.#get('SELECT * FROM dataset_sources WHERE dataset = ?', dataset);
    return row
      ? { source: str(row.source) as RowSource, rows: num(row.row_count), loadedAt: num(row.loaded_at) }
      : null;
  }

  #layoutOf(dataset: string): readonly string[] {
    return this.#layouts.get(dataset) ?? [];
  }

  async syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }> {
    this.#layouts = new Map(layouts);
    // Rows a killed load left: deleted in slices meanwhile, not before the start.
    this.#reap().catch(() => {});
    const rekeyed: string[] = [];
    for (const row of this.#all('SELECT dataset, entity_fields FROM dataset_sources')) {
      const dataset = str(row.dataset);
      const layout = this.#layoutOf(dataset);
      if (optStr(row.entity_fields) === layoutText(layout)) continue;
      this.#tx(() => rekey(this.#db, dataset, layout));
      rekeyed.push(dataset);
    }
    return { rekeyed };
  }

  /** Whether the stored CSV lines of a dataset were rendered over these columns. */
  #csvCounts(dataset: string, columns: string | undefined): boolean {
    if (columns === undefined) return false;
    return (
      optStr(this.#get('SELECT csv_columns FROM dataset_sources WHERE dataset = ?', dataset)?.csv_columns) ===
      columns
    );
  }

  async queryRows(q: RowQuery): Promise<RowsPage> {
    rowLimit(q.limit);
    const plan = planScan(q, this.#layoutOf(q.dataset));
    const withCsv = q.csvColumns !== undefined;
    let found: ScanResult;
    if (plan.capped) {
      found = await this.#scan(scanJob(q, plan));
    } else {
      const page = (): ScanResult => {
        const csv = this.#csvCounts(q.dataset, q.csvColumns);
        const { sql, params } = walk(q, plan, ROW_COLUMNS, q.limit + 1);
        const rows = this.#stmt(sql, true).all(...params) as unknown as unknown[][];
        if (!csv) for (const row of rows) row[4] = null;
        const examined = rows.length;
        let next: RowsPage['next'] = null;
        if (rows.length > q.limit) {
          rows.length = q.limit;
          const last = rows.at(-1) as unknown[];
          next = q.limit > 0 ? { t: str(last[1]), id: num(last[0]) } : null;
        }
        return { rows, next, examined };
      };
      // The columns the lines were rendered over and the rows, from one snapshot; one statement alone
      // needs no transaction of its own.
      found = withCsv ? this.#tx(page, 'DEFERRED') : page();
    }
    const rows = found.rows.map(([id, t, data, importId, line]) => {
      const row: StoredRow = { id: num(id), t: str(t), json: str(data), importId: optNum(importId) };
      if (withCsv) row.csv = line === null || line === undefined ? null : str(line);
      return row;
    });
    return { rows, next: found.next, examined: found.examined };
  }

  /** A read that checks rows one by one: on a read worker for a file database, else here. */
  #scan(job: ScanJob): Promise<ScanResult> | ScanResult {
    if (this.#scans) return this.#scans.run(job);
    return this.#tx(() => runScan((sql) => this.#stmt(sql, true), job), 'DEFERRED');
  }

  /**
   * A page an index serves is one statement that aggregates it: SQLite hands back two strings instead of
   * a JSON text and a CSV line per row, and escapes the lines for JSON itself (`json_quote`) when the
   * page text goes out in a JSON answer. The aggregate takes the rows in the order the ordered walk
   * yields them (an ORDER BY inside group_concat would sort them again and double the statement's cost);
   * the store contract holds the page to queryRows's order. With csvColumns the statement also reads,
   * once, the columns the dataset's lines were rendered over; when they differ the joined lines are
   * dropped, as they are when a row lacks its line all the same (a database edited by hand). A full page
   * then looks past its end by position: the keyset of its last row and whether one follows, in the same
   * read transaction. A page that checks rows one by one is built from its rows (`pageOfRows`).
   */
  async queryPage(q: PageQuery): Promise<StoredPage> {
    const plan = planScan(q, this.#layoutOf(q.dataset));
    if (plan.capped) return pageOfRows(q, (query) => this.queryRows(query));
    const withCsv = q.csvColumns !== undefined;
    const joined =
      q.csvJoin === 'json' ? 'json_quote(group_concat(csv, char(10)))' : 'group_concat(csv, char(13, 10))';
    const source = walk(q, plan, `data, import_id${withCsv ? ', csv' : ''}, t, id`, q.limit);
    // One read transaction: the tail sees the rows the page saw, whatever another process writes.
    const [count, json, csv, lines, renderedOver, importIds, next] = this.#tx(() => {
      const [count, json, csv, lines, renderedOver, importIds] = this.#stmt(
        `SELECT count(*), group_concat(data, ','),
            ${withCsv ? `${joined}, count(csv), (SELECT csv_columns FROM dataset_sources WHERE dataset = ?)` : 'NULL, 0, NULL'},
            group_concat(DISTINCT import_id)
          FROM (${source.sql})`,
        true,
      ).get(...(withCsv ? [q.dataset] : []), ...source.params) as unknown as [
        number,
        string | null,
        string | null,
        number,
        string | null,
        string | null,
      ];
      let next: StoredPage['next'] = null;
      if (count === q.limit && count > 0) {
        const tail = walk(q, plan, 't, id', 2, q.limit - 1);
        const [last, following] = this.#stmt(tail.sql, true).all(...tail.params) as unknown as [
          string,
          number,
        ][];
        if (last && following) next = { t: str(last[0]), id: num(last[1]) };
      }
      return [count, json, csv, lines, renderedOver, importIds, next] as const;
    }, 'DEFERRED');
    const imports = importIdsOf(importIds === null ? [] : importIds.split(',').map(Number));
    const page: StoredPage = { count, json: json ?? '', next, imports, examined: count + (next ? 1 : 0) };
    if (withCsv) {
      // An empty page has every line there is, whatever they were rendered over.
      const complete = count === 0 || (renderedOver === q.csvColumns && lines === count);
      const text = count === 0 ? '' : (csv ?? '');
      page.csv = !complete ? null : q.csvJoin === 'json' ? text.slice(1, -1) : text;
    }
    return page;
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

  /**
   * Up to IN_PLACE_ROWS rows are upserted in one short transaction. More are written beside the live
   * rows: the live rows copied under a new key, the new rows upserted there, in slices, then swapped in
   * (row-loads.ts). A key a later record repeats replaces the row an earlier one wrote.
   */
  async upsertRowsStream(
    dataset: string,
    timeField: string,
    batches: AsyncIterable<readonly KeyedRow[]>,
    run: NewImportRun,
    csvColumns?: readonly string[],
    options: { naturalKey?: readonly string[] } = {},
  ): Promise<ImportRun> {
    const iterator = batches[Symbol.asyncIterator]();
    const head: KeyedRow[] = [];
    let ended = false;
    while (head.length <= IN_PLACE_ROWS) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      head.push(...next.value);
    }
    const upsert = new Upsert(this.#db, dataset, timeField, this.#layoutOf(dataset), csvColumns, options);
    if (ended) {
      const result = this.#write(() => {
        const runId = startLoad(this.#db, dataset, upsert.key, run);
        upsert.begin(runId, true);
        for (const row of head) upsert.put(row);
        return upsert.swap(null);
      });
      this.#loaded(dataset);
      return result;
    }
    await this.#reap();
    const db = this.#db;
    const key = newRowsKey(dataset);
    upsert.key = key;
    const runId = this.#write(() => startLoad(db, dataset, key, run));
    let done: ImportRun;
    try {
      const from = this.#write(() => upsert.begin(runId, false));
      await sliced(this.#write, () => upsert.copy());
      let i = 0;
      const rest = async function* (): AsyncGenerator<readonly KeyedRow[]> {
        yield head;
        for (;;) {
          const next = await iterator.next();
          if (next.done) return;
          yield next.value;
        }
      };
      for await (const batch of rest()) {
        i = 0;
        await sliced(this.#write, () => {
          const row = batch[i++];
          if (row !== undefined) upsert.put(row);
          return i >= batch.length;
        });
      }
      done = this.#write(() => upsert.swap(from));
    } catch (error) {
      this.#write(() => failLoad(db, dataset, key, runId, (error as Error).message));
      await this.#reap();
      throw error;
    }
    this.#loaded(dataset);
    await this.#reap();
    return done;
  }

  async claimIdempotencyKey(input: {
    scope: string;
    key: string;
    fingerprint: string;
    at: number;
    expiredBefore: number;
    abandonedBefore: number;
  }): Promise<Claim> {
    return this.#tx(() => {
      // Bounded upkeep: a few expired keys go with each claim.
      this.#run(
        'DELETE FROM idempotent_requests WHERE rowid IN (SELECT rowid FROM idempotent_requests WHERE created_at < ? LIMIT 20)',
        input.expiredBefore,
      );
      const claimed = this.#get(
        `INSERT INTO idempotent_requests (scope, key, fingerprint, state, response, created_at) VALUES (?, ?, ?, 'pending', NULL, ?)
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'pending', response = NULL,
           created_at = excluded.created_at
         WHERE idempotent_requests.created_at < ? OR (idempotent_requests.state = 'pending' AND idempotent_requests.created_at < ?)
         RETURNING key`,
        input.scope,
        input.key,
        input.fingerprint,
        input.at,
        input.expiredBefore,
        input.abandonedBefore,
      );
      if (claimed) return { state: 'claimed' } as const;
      const held = this.#get(
        'SELECT fingerprint, state, response FROM idempotent_requests WHERE scope = ? AND key = ?',
        input.scope,
        input.key,
      ) as DbRow;
      if (str(held.fingerprint) !== input.fingerprint) return { state: 'mismatch' } as const;
      return held.state === 'done'
        ? ({ state: 'done', response: JSON.parse(str(held.response)) as StoredResponse } as const)
        : ({ state: 'pending' } as const);
    });
  }

  async upsertOAuthRecord(model: string, id: string, r: NewOAuthRecord): Promise<void> {
    this.#run(
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
    const row = this.#get(
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
    const row = this.#get(
      `SELECT * FROM oauth_records WHERE model = ? AND ${by === 'uid' ? 'uid' : 'user_code'} = ?
         AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`,
      model,
      value,
      now,
    );
    return row ? oauthRecordFrom(row) : null;
  }

  async consumeOAuthRecord(model: string, id: string, at: number): Promise<boolean> {
    const { changes } = this.#run(
      'UPDATE oauth_records SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL',
      at,
      model,
      id,
    );
    return Number(changes) === 1;
  }

  async destroyOAuthRecord(model: string, id: string): Promise<void> {
    this.#run('DELETE FROM oauth_records WHERE model = ? AND id = ?', model, id);
  }

  async revokeOAuthGrant(grantId: string): Promise<void> {
    this.#run('DELETE FROM oauth_records WHERE grant_id = ?', grantId);
  }

  async pruneOAuthRecords(before: number, limit: number): Promise<number> {
    const { changes } = this.#run(
      'DELETE FROM oauth_records WHERE rowid IN (SELECT rowid FROM oauth_records WHERE expires_at < ? LIMIT ?)',
      before,
      limit,
    );
    return Number(changes);
  }

  async insertOAuthConnection(c: OAuthConnection): Promise<void> {
    this.#run(
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
    return this.#all(
      'SELECT * FROM oauth_connections WHERE account_id = ? ORDER BY created_at DESC',
      accountId,
    ).map(oauthConnectionFrom);
  }

  async completeIdempotencyKey(scope: string, key: string, response: StoredResponse): Promise<void> {
    this.#run(
      "UPDATE idempotent_requests SET state = 'done', response = ? WHERE scope = ? AND key = ?",
      JSON.stringify(response),
      scope,
      key,
    );
  }

  async releaseIdempotencyKey(scope: string, key: string): Promise<void> {
    this.#run(
      "DELETE FROM idempotent_requests WHERE scope = ? AND key = ? AND state = 'pending'",
      scope,
      key,
    );
  }

  async recordPurchase(p: NewTokenPurchase): Promise<{ purchase: TokenPurchase; duplicate: boolean }> {
    return this.#tx(() => {
      const existing = this.#get('SELECT * FROM token_purchases WHERE payment_intent = ?', p.paymentIntent);
      if (existing) return { purchase: purchaseFrom(existing), duplicate: true };
      const entry = this.#post({
        walletId: p.walletId,
        kind: 'purchase',
        amountMicros: BigInt(p.tokens) * MICROS_PER_TOKEN,
        at: p.createdAt,
        idempotencyKey: `stripe:${p.paymentIntent}`,
        memo: `${p.packId}: Stripe Checkout ${p.sessionId}, payment ${p.paymentIntent}`,
      });
      const purchase = this.#get(
        `INSERT INTO token_purchases (payment_intent, session_id, account_id, wallet_id, pack_id, tokens, amount_cents,
           currency, entry_id, receipt_url, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
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
      ) as DbRow;
      return { purchase: purchaseFrom(purchase), duplicate: false };
    });
  }

  async purchaseByPaymentIntent(paymentIntent: string): Promise<TokenPurchase | null> {
    const row = this.#get('SELECT * FROM token_purchases WHERE payment_intent = ?', paymentIntent);
    return row ? purchaseFrom(row) : null;
  }

  async listPurchases(accountId: string): Promise<TokenPurchase[]> {
    return this.#all(
      'SELECT * FROM token_purchases WHERE account_id = ? ORDER BY created_at DESC, payment_intent LIMIT 200',
      accountId,
    ).map(purchaseFrom);
  }

  async reclaimPurchase(input: {
    paymentIntent: string;
    refundKey: string;
    tokens: number;
    at: number;
  }): Promise<Reclaimed> {
    return this.#tx(() => {
      const seen = this.#get('SELECT * FROM token_refunds WHERE refund_key = ?', input.refundKey);
      if (seen) return { takenMicros: 0n, shortfallMicros: 0n, entryId: null, duplicate: true };
      const purchase = this.#get(
        'SELECT * FROM token_purchases WHERE payment_intent = ?',
        input.paymentIntent,
      );
      if (!purchase) throw new Error(`no purchase with payment ${input.paymentIntent}`);
      const wanted = BigInt(input.tokens) * MICROS_PER_TOKEN;
      const held = this.#get('SELECT balance_micros FROM wallets WHERE id = ?', str(purchase.wallet_id));
      const balance = (held?.balance_micros as bigint | undefined) ?? 0n;
      const taken = wanted < balance ? wanted : balance;
      const entry =
        taken > 0n
          ? entryFrom(
              this.#post({
                walletId: str(purchase.wallet_id),
                kind: 'purchase_refund',
                amountMicros: -taken,
                at: input.at,
                idempotencyKey: input.refundKey,
                memo: `refund of payment ${input.paymentIntent}: ${input.tokens} tokens`,
              }),
            )
          : null;
      const shortfall = wanted - taken;
      this.#run(
        'INSERT INTO token_refunds (refund_key, payment_intent, tokens, taken_micros, shortfall_micros, at) VALUES (?, ?, ?, ?, ?, ?)',
        input.refundKey,
        input.paymentIntent,
        input.tokens,
        taken,
        shortfall,
        input.at,
      );
      this.#run(
        'UPDATE token_purchases SET reclaimed_tokens = reclaimed_tokens + ?, shortfall_micros = shortfall_micros + ? WHERE payment_intent = ?',
        input.tokens,
        shortfall,
        input.paymentIntent,
      );
      return { takenMicros: taken, shortfallMicros: shortfall, entryId: entry?.id ?? null, duplicate: false };
    });
  }

  async createTokenRequest(
    r: Omit<TokenRequest, 'status' | 'reason' | 'settledAt' | 'entryId'>,
  ): Promise<TokenRequest> {
    return tokenRequestFrom(
      this.#get(
        `INSERT INTO token_requests (id, account_id, wallet_id, pack_id, tokens, note, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'open', ?) RETURNING *`,
        r.id,
        r.accountId,
        r.walletId,
        r.packId,
        r.tokens,
        r.note,
        r.createdAt,
      ) as DbRow,
    );
  }

  async getTokenRequest(id: string): Promise<TokenRequest | null> {
    const row = this.#get('SELECT * FROM token_requests WHERE id = ?', id);
    return row ? tokenRequestFrom(row) : null;
  }

  async listTokenRequests(
    filter: { accountId?: string; status?: TokenRequestStatus },
    limit: number,
  ): Promise<TokenRequest[]> {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (filter.accountId !== undefined) {
      where.push('account_id = ?');
      params.push(filter.accountId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    return this.#all(
      `SELECT * FROM token_requests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limitLiteral(limit)}`,
      ...params,
    ).map(tokenRequestFrom);
  }

  async settleTokenRequest(
    id: string,
    outcome:
      | { status: 'credited'; at: number; memo: string }
      | { status: 'declined'; at: number; reason: string },
  ): Promise<TokenRequest | null> {
    return this.#tx(() => {
      const request = this.#get("SELECT * FROM token_requests WHERE id = ? AND status = 'open'", id);
      if (!request) return null;
      let entryId: string | null = null;
      if (outcome.status === 'credited') {
        entryId = String(
          this.#post({
            walletId: str(request.wallet_id),
            kind: 'topup',
            amountMicros: BigInt(num(request.tokens)) * MICROS_PER_TOKEN,
            at: outcome.at,
            idempotencyKey: `token-request:${id}`,
            memo: outcome.memo,
          }).id,
        );
      }
      return tokenRequestFrom(
        this.#get(
          'UPDATE token_requests SET status = ?, reason = ?, settled_at = ?, entry_id = ? WHERE id = ? RETURNING *',
          outcome.status,
          outcome.status === 'declined' ? outcome.reason : null,
          outcome.at,
          entryId,
          id,
        ) as DbRow,
      );
    });
  }

  async collectorState(source: string): Promise<CollectorState | null> {
    const row = this.#get(`SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state WHERE source = ?`, source);
    return row ? collectorStateFrom(row) : null;
  }

  async listCollectorStates(): Promise<CollectorState[]> {
    return this.#all(`SELECT ${COLLECTOR_STATE_COLUMNS} FROM collector_state ORDER BY source`).map(
      collectorStateFrom,
    );
  }

  async saveCollectorState(state: CollectorState): Promise<void> {
    this.#run(
      `INSERT INTO collector_state (${COLLECTOR_STATE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor, last_run_at = excluded.last_run_at,
         last_success_at = excluded.last_success_at, last_error = excluded.last_error, failures = excluded.failures,
         paused_until = excluded.paused_until, claimed_slot = max(coalesce(collector_state.claimed_slot, 0), coalesce(excluded.claimed_slot, 0))`,
      state.source,
      state.cursor,
      state.lastRunAt,
      state.lastSuccessAt,
      state.lastError,
      state.failures,
      state.pausedUntil,
      state.claimedSlot,
    );
  }

  async claimCollectorSlot(source: string, slot: number): Promise<boolean> {
    return this.#tx(
      () =>
        this.#get(
          `INSERT INTO collector_state (source, cursor, failures, claimed_slot) VALUES (?, '{}', 0, ?)
           ON CONFLICT (source) DO UPDATE SET claimed_slot = excluded.claimed_slot
             WHERE collector_state.claimed_slot IS NULL OR collector_state.claimed_slot < excluded.claimed_slot
           RETURNING source`,
          source,
          slot,
        ) !== undefined,
    );
  }

  async recordCollectionRun(run: Omit<CollectionRun, 'id'>): Promise<CollectionRun> {
    const row = this.#get(
      `${COLLECTION_RUN_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
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
    ) as DbRow;
    return collectionRunFrom(row);
  }

  async listCollectionRuns(limit: number): Promise<CollectionRun[]> {
    return this.#all(`SELECT * FROM collection_runs ORDER BY id DESC LIMIT ${limitLiteral(limit)}`).map(
      collectionRunFrom,
    );
  }

  async listImportRuns(
    filter: { dataset?: string; ids?: readonly number[] },
    limit: number,
  ): Promise<ImportRun[]> {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (filter.dataset !== undefined) {
      where.push('dataset = ?');
      params.push(filter.dataset);
    }
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return [];
      where.push(`id IN (${filter.ids.map(() => '?').join(', ')})`);
      params.push(...filter.ids);
    }
    return this.#all(
      `SELECT * FROM import_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limitLiteral(limit)}`,
      ...params,
    ).map(importRunFrom);
  }

  async datasetSpan(dataset: string): Promise<DatasetSpan | null> {
    const source = this.#get(
      'SELECT source, row_count, loaded_at FROM dataset_sources WHERE dataset = ?',
      dataset,
    );
    if (!source) return null;
    const span = this.#get(
      // Two subqueries: SQLite reads min() or max() alone as one end of the index, but the two in one
      // SELECT as a walk over every row of the dataset (1.2 s on 10 M rows, on the serving thread).
      `SELECT (SELECT min(t) FROM dataset_rows WHERE dataset = ${LIVE_KEY}) AS first_t,
              (SELECT max(t) FROM dataset_rows WHERE dataset = ${LIVE_KEY}) AS last_t`,
      dataset,
      dataset,
    );
    return {
      source: str(source.source) as RowSource,
      rows: num(source.row_count),
      firstT: optStr(span?.first_t),
      lastT: optStr(span?.last_t),
      loadedAt: num(source.loaded_at),
    };
  }

  async createAnalysis(a: AnalysisRecord): Promise<void> {
    this.#run(
      'INSERT INTO analyses (id, account_id, name, spec, transcript, planner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      a.id,
      a.accountId,
      a.name,
      a.spec,
      a.transcript,
      a.planner,
      a.createdAt,
      a.updatedAt,
    );
  }

  async getAnalysis(accountId: string, id: string): Promise<AnalysisRecord | null> {
    const row = this.#get('SELECT * FROM analyses WHERE id = ? AND account_id = ?', id, accountId);
    return row ? analysisFrom(row) : null;
  }

  async listAnalyses(accountId: string): Promise<AnalysisRecord[]> {
    return this.#all(
      'SELECT * FROM analyses WHERE account_id = ? ORDER BY updated_at DESC, id DESC',
      accountId,
    ).map(analysisFrom);
  }

  async updateAnalysis(
    accountId: string,
    id: string,
    patch: Partial<Pick<AnalysisRecord, 'name' | 'spec' | 'transcript' | 'planner'>> & { updatedAt: number },
  ): Promise<boolean> {
    const entries = Object.entries(patch).filter(([field, v]) => field in analysisColumns && v !== undefined);
    const sets = entries.map(([field]) => `${analysisColumns[field as keyof typeof analysisColumns]} = ?`);
    const result = this.#run(
      `UPDATE analyses SET ${sets.join(', ')} WHERE id = ? AND account_id = ?`,
      ...entries.map(([, v]) => v as SQLInputValue),
      id,
      accountId,
    );
    return Number(result.changes) === 1;
  }

  async deleteAnalysis(accountId: string, id: string): Promise<boolean> {
    return (
      Number(this.#run('DELETE FROM analyses WHERE id = ? AND account_id = ?', id, accountId).changes) === 1
    );
  }

  async beginAnalysisRun(
    run: NewAnalysisRun,
    limit: { sinceMs: number; maxRuns: number },
  ): Promise<{ ok: true } | { ok: false; runs: number }> {
    return this.#tx(() => {
      const runs = Number(
        this.#get(
          'SELECT count(*) AS n FROM analysis_runs WHERE account_id = ? AND started_at >= ?',
          run.accountId,
          limit.sinceMs,
        )?.n ?? 0,
      );
      if (runs >= limit.maxRuns) return { ok: false as const, runs };
      this.#run(
        `INSERT INTO analysis_runs (id, account_id, analysis_id, kind, inputs_hash, started_at, status)
         VALUES (?, ?, ?, ?, ?, ?, 'running')`,
        run.id,
        run.accountId,
        run.analysisId,
        run.kind,
        run.inputsHash,
        run.startedAt,
      );
      return { ok: true as const };
    });
  }

  async finishAnalysisRun(id: string, outcome: AnalysisRunOutcome): Promise<void> {
    this.#run(
      `UPDATE analysis_runs SET status = ?, reads = ?, burned_micros = ?, result = ?,
         analysis_id = COALESCE(?, analysis_id), inputs_hash = COALESCE(?, inputs_hash) WHERE id = ?`,
      outcome.status,
      outcome.reads,
      outcome.burnedMicros,
      outcome.result,
      outcome.analysisId ?? null,
      outcome.inputsHash ?? null,
      id,
    );
  }

  async releaseAnalysisRun(accountId: string, id: string): Promise<boolean> {
    return (
      Number(
        this.#run(
          "DELETE FROM analysis_runs WHERE id = ? AND account_id = ? AND status = 'running'",
          id,
          accountId,
        ).changes,
      ) === 1
    );
  }

  async countAnalysisRuns(accountId: string, sinceMs: number): Promise<number> {
    const row = this.#get(
      'SELECT count(*) AS n FROM analysis_runs WHERE account_id = ? AND started_at >= ?',
      accountId,
      sinceMs,
    );
    return Number(row?.n ?? 0);
  }

  async findAnalysisRun(
    accountId: string,
    query: { inputsHash?: string; analysisId?: string; sinceMs?: number },
  ): Promise<AnalysisRunRecord | null> {
    const filter = runFilter(query, () => '?', 0);
    const row = this.#get(
      `SELECT * FROM analysis_runs WHERE account_id = ? AND status = 'done'${filter.sql} ORDER BY started_at DESC, id DESC LIMIT 1`,
      accountId,
      ...filter.values,
    );
    return row ? analysisRunFrom(row) : null;
  }
}
