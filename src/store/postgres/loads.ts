/** Dataset loads and upserts on PostgreSQL, and the LISTEN that tells of them. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { csvColumnsKey, rowTexts } from '../../catalog/csv.ts';
import type { Row } from '../../catalog/types.ts';
import { AppError } from '../../errors.ts';
import { distinctByKey, type ImportRun, type KeyedRow, type NewImportRun } from '../import-port.ts';
import { importRunFrom, NEW_RUN_COLUMNS, newRunValues } from '../import-rows.ts';
import type { RowSource } from '../port.ts';
import { entityKey, entityKeyColumns, layoutText } from '../row-scan.ts';
import type { DbRow } from '../rows.ts';
import { num, optStr, str } from '../rows.ts';
import type { PgDb } from './db.ts';
import {
  buildIndexes,
  createPartitionTable,
  ensurePartition,
  keyIndexes,
  partitionOf,
  swapPartition,
} from './partitions.ts';
import { COPY_TIMEOUT_MS, copyText, keyExprs, LOAD_BATCH_ROWS, LOADED_CHANNEL, rekey } from './sql.ts';
import { prepareUpsert, upsertSlice } from './upsert.ts';

export class PgLoads {
  readonly #db: PgDb;
  readonly #loadListeners = new Set<(dataset: string) => void>();
  #listening = false;
  /** Resolves once the first LISTEN is in place. */
  #listeningReady: Promise<void> = Promise.resolve();
  #listener: pg.Client | null = null;
  #closed = false;
  /** Each dataset's entity fields, the order of its key columns (syncLayouts). */
  #layouts: ReadonlyMap<string, readonly string[]> = new Map();

  constructor(db: PgDb) {
    this.#db = db;
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
   * One transaction: the new rows copied into a table of their own and indexed, then swapped in for
   * the dataset's partition, the dataset's record and a NOTIFY. Readers see the old rows until COMMIT
   * and the new ones from then on, and wait only for the swap's moment at the end; ROLLBACK (the new
   * table gone with it) if a batch or the iterable fails. With `run`, the run is recorded first (`loading`,
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
      const layout = this.layoutOf(dataset).slice(0, entityKeyColumns.length);
      // The rows go into a new table, indexed once they are all in (a sort per index rather than an
      // insert into each per row), which then replaces the dataset's partition (partitions.ts).
      const old = await partitionOf(tx, dataset);
      const table = await createPartitionTable(tx, dataset);
      // COPY (pg-copy-streams) rather than INSERTs: the rows go out as text lines, the keys computed
      // here (rowKeys) rather than in SQL, where the json type parsed each row twice per entity field.
      // The dataset column is the table's default: each line carries only the row's own cells.
      const columns = ['id', 't', 'data', 'csv', ...entityKeyColumns.slice(0, layout.length)];
      let count = 0;
      async function* lines(): AsyncGenerator<string> {
        for await (const batch of batches) {
          let text = '';
          for (const row of batch) {
            text += `${++count}\t${copyText(String(row[timeField] ?? ''))}`;
            if (csvColumns) {
              const { json, csv } = rowTexts(row, csvColumns);
              text += `\t${copyText(json)}\t${copyText(csv)}`;
            } else {
              text += `\t${copyText(JSON.stringify(row))}\t\\N`;
            }
            for (const field of layout) {
              const key = entityKey(row[field]);
              text += key === null ? '\t\\N' : `\t${copyText(key)}`;
            }
            text += '\n';
          }
          yield text;
        }
      }
      // One COPY statement lasts as long as the file: the pool's statement timeout and pg's client-side
      // query_timeout are for requests (the latter read from the query's own config first).
      await tx.query('SET LOCAL statement_timeout = 0');
      // FREEZE (the table is this transaction's own): the rows need no later visibility work, and a
      // reader whose snapshot predates the swap sees them rather than an empty dataset.
      const copy = Object.assign(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN WITH (FREEZE)`), {
        query_timeout: COPY_TIMEOUT_MS,
      });
      // One batch buffered ahead of the copy stream, which sets the pace: memory stays one batch.
      await pipeline(Readable.from(lines(), { highWaterMark: 1 }), tx.query(copy));
      await buildIndexes(tx, table, layout.length);
      const span =
        runId === null ? null : await tx.query(`SELECT min(t) AS first_t, max(t) AS last_t FROM ${table}`);
      await swapPartition(tx, dataset, table, old);
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
        const firstT = optStr(span?.rows[0]?.first_t);
        const lastT = optStr(span?.rows[0]?.last_t);
        await tx.query(
          `UPDATE import_runs SET rows_read = greatest(rows_read, $2), rows_inserted = $2, first_t = $3, last_t = $4,
             outcome = 'swapped', swapped_at = $5 WHERE id = $1`,
          [runId, count, firstT, lastT, Date.now()],
        );
      }
      await tx.query('SELECT pg_notify($1, $2)', [LOADED_CHANNEL, dataset]);
      return true;
    });
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
      return await this.#db.tx((tx) => work(tx, runId), 'BEGIN', {
        pool: this.#db.pool,
        translate: (error) => this.#db.translate(error),
        before: async (client) => {
          if (start) runId = num((await client.query(start.text, start.values)).rows[0]?.id);
        },
      });
    } catch (error) {
      if (runId !== null)
        await this.#db
          .q("UPDATE import_runs SET outcome = 'failed', error = $2 WHERE id = $1 AND outcome = 'loading'", [
            runId,
            String((error as Error).message).slice(0, 500),
          ])
          .catch(() => {});
      throw error;
    }
  }

  /** Runs whose loading backend ended without a swap or a failure (the process was killed). */
  async #reapRuns(): Promise<void> {
    await this.#db.q(
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
        connectionString: this.#db.url,
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
    const row = await this.#db.one('SELECT * FROM dataset_sources WHERE dataset = $1', [dataset]);
    return row
      ? { source: str(row.source) as RowSource, rows: num(row.row_count), loadedAt: num(row.loaded_at) }
      : null;
  }

  layoutOf(dataset: string): readonly string[] {
    return this.#layouts.get(dataset) ?? [];
  }

  async syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }> {
    this.#layouts = new Map(layouts);
    await this.#reapRuns();
    const rekeyed: string[] = [];
    for (const row of await this.#db.rows('SELECT dataset, entity_fields FROM dataset_sources')) {
      const dataset = str(row.dataset);
      const layout = this.layoutOf(dataset);
      if (optStr(row.entity_fields) === layoutText(layout)) continue;
      const table = await this.#db.tx(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
        const table = await partitionOf(tx, dataset);
        await rekey(tx, dataset, table, layout);
        const slots = Math.min(layout.length, entityKeyColumns.length);
        if (table !== null) for (const statement of keyIndexes(table, slots)) await tx.query(statement);
        return table;
      });
      if (table !== null) await this.#db.q(`ANALYZE ${table}`).catch(() => {});
      rekeyed.push(dataset);
    }
    return { rekeyed };
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
    const layout = this.layoutOf(dataset);
    const slots = Math.min(layout.length, entityKeyColumns.length);
    await ensurePartition(this.#db, dataset, slots);
    let table = '';
    const recorded = await this.#recorded(this.#startRun(dataset, run), async (tx, started) => {
      const runId = started as number;
      // One loader per dataset at a time across every node, as loadRows.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${dataset}`]);
      // Into the partition itself, its own natural-key index the ON CONFLICT arbiter (partitions.ts).
      table = (await partitionOf(tx, dataset)) ?? '';
      if (table === '') throw new Error(`dataset ${dataset} has no partition to upsert into`);
      const before = await prepareUpsert(tx, { dataset, table }, layout, options.naturalKey);
      for (const statement of keyIndexes(table, slots)) await tx.query(statement);
      const top = await tx.query(`SELECT COALESCE(max(id), 0) AS id FROM ${table}`);
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
          const tally = await upsertSlice(tx, slice, {
            dataset,
            table,
            timeField,
            runId,
            base,
            csvColumns,
            keys,
            keyValues,
          });
          written += tally.written;
          replaced += tally.replaced;
          base += tally.stored;
        }
      }
      const total = await tx.query(`SELECT count(*) AS n FROM ${table}`);
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
    await this.#db.q(`ANALYZE ${table}`).catch(() => {});
    return recorded;
  }

  /** Ends the LISTEN connection; it does not reconnect after this. */
  async close(): Promise<void> {
    this.#closed = true;
    const listener = this.#listener;
    this.#listener = null;
    await listener?.end().catch(() => {});
  }
}
