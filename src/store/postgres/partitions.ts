/**
 * Each dataset's rows in a partition of its own (`dataset_rows` is partitioned by LIST (dataset)), so a
 * large dataset's indexes never slow a small one's reads or writes. A replacing load fills a new table
 * and swaps it in for the old partition; upserts write into the dataset's partition directly.
 */
import type pg from 'pg';
import { entityKeyColumns } from '../row-scan.ts';
import { optStr, str } from '../rows.ts';
import type { PgDb } from './db.ts';
import { COPY_TIMEOUT_MS } from './sql.ts';

/** The columns of `dataset_rows` and of each partition (migration 18), as ATTACH requires them. */
const ROW_COLUMNS = `dataset text COLLATE "C" NOT NULL, id integer NOT NULL, t text COLLATE "C" NOT NULL,
  data json NOT NULL, csv text, nk text COLLATE "C", import_id bigint,
  ${entityKeyColumns.map((k) => `${k} text COLLATE "C"`).join(', ')}`;

/** How long a swap waits for readers to let go of `dataset_rows` before it steps back and tries again. */
const SWAP_LOCK_TIMEOUT = '50ms';
const SWAP_RETRY_MS = 250;
/** How long a swap keeps trying: a longer upsert of another dataset holds the parent that long. */
const SWAP_PATIENCE_MS = 10 * 60_000;

/** Memory for each index build's sort (PostgreSQL's, not this process's), and its parallel workers. */
const INDEX_BUILD_MEMORY = '1GB';
const INDEX_BUILD_WORKERS = 2;

/**
 * A new table for `dataset`'s rows, not yet a partition: no indexes (they are built after the rows are
 * in), a CHECK matching its partition bound, so that ATTACH proves the bound without a scan, and the
 * dataset as its column's default, so that a COPY need not send it on every line. Named
 * as `dataset_rows` is never touched: a lock on the parent here would be held for the whole load.
 */
export async function createPartitionTable(tx: pg.PoolClient, dataset: string): Promise<string> {
  const seq = await tx.query("SELECT nextval('dataset_partition_seq') AS n");
  const table = `dataset_rows_p${str(seq.rows[0]?.n)}`;
  const bound = tx.escapeLiteral(dataset);
  await tx.query(
    `CREATE TABLE ${table} (${ROW_COLUMNS}, CONSTRAINT ${table}_dataset CHECK (dataset = ${bound}))`,
  );
  await tx.query(`ALTER TABLE ${table} ALTER COLUMN dataset SET DEFAULT ${bound}`);
  return table;
}

/**
 * A partition's indexes: its ids, its time order, its natural keys, and one per entity key column of
 * its layout (`keySlots` of them). Within a partition the dataset is fixed, so it leads none of them.
 */
export function partitionIndexes(table: string, keySlots: number): string[] {
  return [
    `ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (id)`,
    `CREATE INDEX IF NOT EXISTS ${table}_time ON ${table} (t, id)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${table}_nk ON ${table} (nk) WHERE nk IS NOT NULL`,
    ...keyIndexes(table, keySlots),
  ];
}

/**
 * Builds a filled table's indexes in the load's transaction, each sort with memory enough to stay in one
 * pass and two parallel workers beside the backend (PostgreSQL's default; the COPY used one core).
 */
export async function buildIndexes(tx: pg.PoolClient, table: string, keySlots: number): Promise<void> {
  await tx.query(`SET LOCAL maintenance_work_mem = '${INDEX_BUILD_MEMORY}'`);
  await tx.query(`SET LOCAL max_parallel_maintenance_workers = ${INDEX_BUILD_WORKERS}`);
  // Past the pool's client-side query timeout on a large table, as the COPY (the session has none).
  for (const text of partitionIndexes(table, keySlots))
    await tx.query({ text, query_timeout: COPY_TIMEOUT_MS } as pg.QueryConfig);
  await tx.query('RESET maintenance_work_mem');
  await tx.query('RESET max_parallel_maintenance_workers');
  // Statistics before the swap: without them the planner reads a page by sorting every row of the
  // dataset (bitmap scan + top-N sort) instead of walking the time index, until autovacuum analyzes it.
  await tx.query({ text: `ANALYZE ${table}`, query_timeout: COPY_TIMEOUT_MS } as pg.QueryConfig);
}

/** The key columns' indexes for a layout of `keySlots` entity fields; existing ones are kept. */
export function keyIndexes(table: string, keySlots: number): string[] {
  return entityKeyColumns
    .slice(0, keySlots)
    .map((k) => `CREATE INDEX IF NOT EXISTS ${table}_${k} ON ${table} (${k}, t, id) WHERE ${k} IS NOT NULL`);
}

/** The table holding `dataset`'s rows, or null when it has none yet. */
export async function partitionOf(tx: pg.PoolClient, dataset: string): Promise<string | null> {
  const row = await tx.query('SELECT relname FROM dataset_partitions WHERE dataset = $1', [dataset]);
  return optStr(row.rows[0]?.relname);
}

/**
 * Makes `table` the partition of `dataset`, dropping the one it replaces, in the caller's transaction.
 * Dropping a partition locks `dataset_rows` against every reader until COMMIT, so the caller commits
 * right after; while readers hold it, the swap gives up after a moment (readers queue behind a waiting
 * lock too) and tries again, rather than stalling every dataset's reads behind one long one.
 */
export async function swapPartition(
  tx: pg.PoolClient,
  dataset: string,
  table: string,
  old: string | null,
): Promise<void> {
  const bound = tx.escapeLiteral(dataset);
  const giveUpAt = Date.now() + SWAP_PATIENCE_MS;
  for (;;) {
    await tx.query('SAVEPOINT swap');
    try {
      await tx.query(`SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
      if (old !== null) await tx.query(`DROP TABLE ${old}`);
      await tx.query(`ALTER TABLE dataset_rows ATTACH PARTITION ${table} FOR VALUES IN (${bound})`);
      await tx.query('SET LOCAL lock_timeout = 0');
      await tx.query('RELEASE SAVEPOINT swap');
      break;
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT swap');
      // 55P03: lock_not_available, the lock timeout.
      if ((error as { code?: string }).code !== '55P03' || Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, SWAP_RETRY_MS));
    }
  }
  await tx.query(
    `INSERT INTO dataset_partitions (dataset, relname) VALUES ($1, $2)
     ON CONFLICT (dataset) DO UPDATE SET relname = excluded.relname`,
    [dataset, table],
  );
}

/**
 * The partition `dataset`'s upserts write into, created empty (with the key indexes of `keySlots`
 * fields) when the dataset has none. In a short transaction of its own: ATTACH holds the parent until
 * COMMIT, which would otherwise keep every other dataset's swap waiting for the whole upsert.
 */
export async function ensurePartition(db: PgDb, dataset: string, keySlots: number): Promise<void> {
  await db.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
    if ((await partitionOf(tx, dataset)) !== null) return;
    const table = await createPartitionTable(tx, dataset);
    for (const statement of partitionIndexes(table, keySlots)) await tx.query(statement);
    await swapPartition(tx, dataset, table, null);
  });
}
