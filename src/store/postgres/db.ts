/**
 * The PostgreSQL pools and what every part of PostgresStore does with them: statements that turn lost
 * connections into 503s, transactions, named page statements and migrations.
 */
import pg from 'pg';
import { AppError, serviceUnavailable } from '../../errors.ts';
import { ScanGate } from '../row-scan.ts';
import type { DbRow } from '../rows.ts';
import { postgresMigrations } from './migrations.ts';

/** Lock ids for pg_advisory_xact_lock: migrations, and one sample load per dataset. */
export const MIGRATION_LOCK = 0x746d_6401;

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

export class PgDb {
  readonly pool: pg.Pool;
  /** Page queries: their own connections, with readTimeoutMs as the statement timeout. */
  readonly readPool: pg.Pool;
  readonly readTimeoutMs: number;
  readonly scans: ScanGate;
  readonly url: string;
  /** Page query shapes seen, SQL text -> prepared statement name. */
  readonly #pageShapes = new Map<string, string>();
  readonly #health: StoreHealth | undefined;
  /** Whether the database could not be reached, with no statement answered since. */
  #down = false;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.url = url;
    this.#health = options.health;
    const statementTimeoutMs = options.statementTimeoutMs ?? 15_000;
    this.pool = new pg.Pool({
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
    this.pool.on('error', () => {});
    this.readTimeoutMs = options.readTimeoutMs ?? 2000;
    this.scans = new ScanGate(options.maxConcurrentScans ?? 1);
    this.readPool = new pg.Pool({
      connectionString: options.readUrl ?? url,
      max: options.max ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 60_000,
      statement_timeout: this.readTimeoutMs,
      query_timeout: this.readTimeoutMs + 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'token-metered-data-reads',
    });
    this.readPool.on('error', () => {});
  }

  /** Connection-level failures become 503 service_unavailable (and are reported); anything else is a fault (500). */
  translate(error: unknown): unknown {
    if (error instanceof AppError || !isUnavailable(error)) return error;
    this.#health?.refused(error as Error);
    if (!this.#down && isUnreachable(error)) {
      this.#down = true;
      this.#health?.unreachable(error as Error);
    }
    return serviceUnavailable('The ledger database cannot be reached; nothing was served.');
  }

  /** A statement succeeded: if the database had been unreachable, it is back. */
  answered(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#health?.reachable();
  }

  /** Runs one statement, turning connection failures into 503s. */
  async q(text: string | pg.QueryConfig, values: unknown[] = []): Promise<pg.QueryResult<DbRow>> {
    let result: pg.QueryResult<DbRow>;
    try {
      result =
        typeof text === 'string'
          ? await this.pool.query<DbRow>(text, values)
          : await this.pool.query<DbRow>(text);
    } catch (error) {
      throw this.translate(error);
    }
    this.answered();
    return result;
  }

  async rows(text: string, values: unknown[] = []): Promise<DbRow[]> {
    return (await this.q(text, values)).rows;
  }

  /**
   * The name of a page query's shape (its SQL text varies only with which filters and bounds a read
   * has: a few dozen shapes in practice). Named, each pooled connection parses and plans a shape once
   * instead of on every read, which was about a quarter of PostgreSQL's CPU per page. Past
   * MAX_PAGE_SHAPES, further shapes run unnamed (parsed per call) rather than grow without bound.
   */
  pageStatement(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.#pageShapes.get(text);
    if (name === undefined && this.#pageShapes.size < MAX_PAGE_SHAPES) {
      name = `tmd_page_${this.#pageShapes.size}`;
      this.#pageShapes.set(text, name);
    }
    return name === undefined ? { text, values } : { name, text, values };
  }

  async one(text: string, values: unknown[] = []): Promise<DbRow | undefined> {
    return (await this.q(text, values)).rows[0];
  }

  /** A transaction on one pooled connection; a connection that failed is discarded, not reused. */
  async tx<T>(
    work: (client: pg.PoolClient) => Promise<T>,
    begin = 'BEGIN',
    on: {
      pool: pg.Pool;
      translate: (error: unknown) => unknown;
      /** Runs on the transaction's connection before BEGIN, committed on its own. */
      before?: (client: pg.PoolClient) => Promise<void>;
    } = {
      pool: this.pool,
      translate: (error) => this.translate(error),
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
      this.answered();
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
    await this.tx(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)',
      );
      const applied = new Set(
        (await tx.query('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)),
      );
      for (const migration of postgresMigrations) {
        if (applied.has(migration.version)) continue;
        // A migration that moves rows (17) may outlast the pool's client-side query timeout.
        await tx.query({ text: migration.sql, query_timeout: 6 * 3_600_000 } as pg.QueryConfig);
        await tx.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          Date.now(),
        ]);
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.readPool.end()]);
  }

  /** This process's pool: its connections, the idle ones, and the queries waiting for one. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async ping(): Promise<void> {
    await this.q('SELECT 1');
  }
}
