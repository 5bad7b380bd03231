/**
 * One SQLite connection in WAL mode and what every part of SqliteStore does with it: cached prepared
 * statements, transactions, and the group commit that debits and usage records share.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { serviceUnavailable } from '../../errors.ts';
import { rowLimit } from '../rows.ts';
import { Checkpointer, SAFETY_CHECKPOINT_PAGES } from './checkpointer.ts';
import { sqliteMigrations } from './migrations.ts';
import { ScanWorkers } from './scan-workers.ts';

/** Prepared statements kept (see stmt); the store's own fixed statements are a few dozen. */
const MAX_STATEMENTS = 256;

/**
 * A LIMIT, written into the SQL as a checked integer: SQLite re-prepares a statement on every run whose
 * LIMIT is a bound parameter (the planner reads its value), which cost a page read about 10 µs.
 */
export function limitLiteral(limit: number): string {
  return String(rowLimit(limit));
}
/** Above every row id: the keyset bound of a first page. */
export const MAX_ID = 9223372036854775807n;

type Cell = SQLInputValue | undefined;
export type DbRow = Record<string, Cell>;

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

type CachedStatement = { statement: StatementSync; used: number };

type Queued = { work: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void };

export class SqliteDb {
  readonly raw: DatabaseSync;
  readonly path: string;
  /** Prepared statements by SQL: those returning objects, and those returning arrays (see stmt). */
  readonly #statements = new Map<string, CachedStatement>();
  readonly #arrayStatements = new Map<string, CachedStatement>();
  #uses = 0;
  #batch: Queued[] = [];
  /** What a group commit writes after its items, before COMMIT (SqliteLedger's pending rows). */
  #batchRows: { reset(): void; write(): void } | null = null;
  /** A file database's WAL checkpoints, off the serving thread (checkpointer.ts). */
  readonly checkpointer: Checkpointer | null = null;
  /** A file database's read workers, for reads that check rows one by one (scan-workers.ts). */
  readonly scans: ScanWorkers | null = null;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.path = path;
    this.raw = openDatabase(path);
    if (path !== ':memory:') {
      const db = this.raw;
      db.exec(`PRAGMA wal_autocheckpoint = ${SAFETY_CHECKPOINT_PAGES}`);
      this.checkpointer = new Checkpointer(path, {
        finish: () => db.isOpen && this.checkpoint(),
        fallback: (pages) => {
          if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
        },
      });
      this.scans = new ScanWorkers(path);
    }
  }

  /** A PASSIVE checkpoint on this connection: true when it copied every frame of the WAL. */
  checkpoint(): boolean {
    const result = this.get('PRAGMA wal_checkpoint(PASSIVE)');
    return Number(result?.busy) === 0 && result?.log === result?.checkpointed;
  }

  /**
   * A cached prepared statement. Money columns read as BigInt; `asArrays` (dataset pages, on the path
   * every read takes) returns each row as an array of plain values instead: no object per row, and row
   * ids are small. The cache keeps the MAX_STATEMENTS most recently used: a read's SQL depends on how
   * many values each filter has, so clients could otherwise grow it without end.
   */
  stmt(sql: string, asArrays = false): StatementSync {
    const cache = asArrays ? this.#arrayStatements : this.#statements;
    let cached = cache.get(sql);
    if (!cached) {
      const statement = this.raw.prepare(sql);
      if (asArrays) statement.setReturnArrays(true);
      else statement.setReadBigInts(true);
      if (this.#statements.size + this.#arrayStatements.size >= MAX_STATEMENTS) this.#evict();
      cached = { statement, used: 0 };
      cache.set(sql, cached);
    }
    // A use is a stamp, not a move in the map: a hit costs one lookup, and eviction (rare) scans.
    cached.used = ++this.#uses;
    return cached.statement;
  }

  /** Drops the least recently used statement of either cache. */
  #evict(): void {
    let oldest: { cache: Map<string, CachedStatement>; sql: string; used: number } | null = null;
    for (const cache of [this.#statements, this.#arrayStatements]) {
      for (const [sql, { used }] of cache) {
        if (oldest === null || used < oldest.used) oldest = { cache, sql, used };
      }
    }
    oldest?.cache.delete(oldest.sql);
  }

  /** Statements cached now (for tests). */
  get cachedStatements(): number {
    return this.#statements.size + this.#arrayStatements.size;
  }

  get(sql: string, ...params: SQLInputValue[]): DbRow | undefined {
    return this.stmt(sql).get(...params) as DbRow | undefined;
  }

  all(sql: string, ...params: SQLInputValue[]): DbRow[] {
    return this.stmt(sql).all(...params) as DbRow[];
  }

  run(
    sql: string,
    ...params: SQLInputValue[]
  ): { changes: number | bigint; lastInsertRowid: number | bigint } {
    let result: { changes: number | bigint; lastInsertRowid: number | bigint };
    try {
      result = this.stmt(sql).run(...params);
    } catch (error) {
      throw busyAsUnavailable(error);
    }
    if (!this.raw.isTransaction) this.checkpointer?.committed();
    return result;
  }

  /**
   * A transaction around `work`: IMMEDIATE takes the write lock up front; DEFERRED, for statements that
   * only read, makes them one read transaction (one WAL read lock instead of one per statement). Its
   * statements are prepared once: exec would parse them on every call.
   */
  tx<T>(work: () => T, mode: 'IMMEDIATE' | 'DEFERRED' = 'IMMEDIATE'): T {
    // A read inside a transaction already open (an in-memory database's streamed load) is part of it.
    if (mode === 'DEFERRED' && this.raw.isTransaction) return work();
    try {
      this.stmt(`BEGIN ${mode}`).run();
    } catch (error) {
      throw busyAsUnavailable(error);
    }
    let result: T;
    try {
      result = work();
      this.stmt('COMMIT').run();
    } catch (error) {
      // SQLite rolls back on its own after some errors (a full disk, I/O); the first error is the one told.
      if (this.raw.isTransaction) this.stmt('ROLLBACK').run();
      throw busyAsUnavailable(error);
    }
    if (mode === 'IMMEDIATE') this.checkpointer?.committed();
    return result;
  }

  /** Every slice of a load, and its swap, on this connection: synchronous, so nothing interleaves. */
  readonly write = <T>(work: () => T): T => this.tx(work);

  /**
   * Group commit: debits and usage records that arrive in the same turn of the event loop share one
   * transaction. Each debit is still checked against its wallet on its own, in arrival order, and no
   * promise resolves before the COMMIT: an acknowledged debit is always a committed one.
   */
  enqueue<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#batch.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.#batch.length === 1) setImmediate(() => this.#flush());
    });
  }

  /** Rows a group commit's items leave pending: reset as a batch starts, written as it ends. */
  setBatchRows(rows: { reset(): void; write(): void }): void {
    this.#batchRows = rows;
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    let results: unknown[];
    try {
      results = this.tx(() => {
        // Rows a failed batch left pending were rolled back with it: never written by the next.
        this.#batchRows?.reset();
        const done = batch.map((item) => item.work());
        this.#batchRows?.write();
        return done;
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      item.resolve(results[index]);
    });
  }

  migrate(): void {
    this.tx(() => {
      this.raw.exec(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
      );
      const applied = new Set(
        (this.raw.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) =>
          Number(r.version),
        ),
      );
      for (const migration of sqliteMigrations) {
        if (applied.has(migration.version)) continue;
        this.raw.exec(migration.sql);
        this.raw
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, Date.now());
      }
    });
  }

  /** The worker's connection first, then a last checkpoint, then the connection. */
  async close(): Promise<void> {
    // What this process wrote leaves the WAL now: the last connection to close checkpoints on its own,
    // but a server may still hold the file open.
    await this.scans?.close();
    await this.checkpointer?.close();
    if (!this.raw.isOpen) return;
    try {
      if (this.checkpointer) this.checkpoint();
    } catch {
      // Best effort: the frames stay in the WAL, which the next checkpoint on the file copies.
    }
    this.raw.close();
  }
}
