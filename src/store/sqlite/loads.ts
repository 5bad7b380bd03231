/** Dataset loads and upserts on SQLite, and the watch that tells of them. */
import { csvRecord, rowTexts } from '../../catalog/csv.ts';
import type { Row } from '../../catalog/types.ts';
import { AppError } from '../../errors.ts';
import { distinctByKey, type ImportRun, type KeyedRow, type NewImportRun } from '../import-port.ts';
import type { RowSource } from '../port.ts';
import { layoutText, rowKeys } from '../row-scan.ts';
import { num, optStr, str } from '../rows.ts';
import type { DbRow, SqliteDb } from './db.ts';
import { failLoad, liveKey, newRowsKey, reapLoads, retire, sliced, startLoad, swapRun } from './row-loads.ts';
import { finishLoad, IN_PLACE_ROWS, INSERT_DATASET_ROW, rekey, Upsert, WATCH_MS } from './upsert.ts';
export class SqliteLoads {
  readonly #db: SqliteDb;
  /** The deletion of replaced and dead loads' rows under way in this process (reapLoads). */
  #reaping: Promise<void> | null = null;
  readonly #loadListeners = new Set<(dataset: string) => void>();
  /** What the watch last saw: PRAGMA data_version, and each dataset's loaded_at. */
  #watch: { timer: NodeJS.Timeout; version: number; loadedAt: Map<string, number> } | null = null;
  /** Each dataset's entity fields, the order of its key columns (syncLayouts). */
  #layouts: ReadonlyMap<string, readonly string[]> = new Map();

  constructor(db: SqliteDb) {
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
    if (source === 'import') {
      async function* whole(): AsyncGenerator<readonly Row[]> {
        yield rows;
      }
      return this.#replace(dataset, timeField, whole(), csvColumns, options);
    }
    // Sample rows: a few hundred, into an empty dataset only, in one transaction.
    return this.#db.tx(() => {
      if (this.#db.raw.prepare('SELECT 1 FROM dataset_sources WHERE dataset = ?').get(dataset)) return false;
      const insert = this.#db.stmt(INSERT_DATASET_ROW);
      const layout = this.layoutOf(dataset);
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
      finishLoad(this.#db.raw, dataset, source, rows.length, null, csvColumns, layout, null);
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
  readonly #write = <T>(work: () => T): T => this.#db.tx(work);

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
    const db = this.#db.raw;
    const key = newRowsKey(dataset);
    const layout = this.layoutOf(dataset);
    const runId = this.#db.write(() => startLoad(db, dataset, key, options.run ?? null));
    const insert = db.prepare(INSERT_DATASET_ROW);
    let count = 0;
    let firstT: string | null = null;
    let lastT: string | null = null;
    try {
      for await (const batch of batches) {
        let i = 0;
        await sliced(this.#db.write, () => {
          const row = batch[i++];
          if (row === undefined) return true;
          const t = String(row[timeField] ?? '');
          if (t !== '' && (firstT === null || t < firstT)) firstT = t;
          if (t !== '' && (lastT === null || t > lastT)) lastT = t;
          const texts = csvColumns ? rowTexts(row, csvColumns) : { json: JSON.stringify(row), csv: null };
          insert.run(key, ++count, t, texts.json, texts.csv, ...rowKeys(row, layout));
          return i >= batch.length;
        });
      }
      this.#db.write(() => {
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
      this.#db.write(() => failLoad(db, dataset, key, runId, (error as Error).message));
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
    if (this.#watch || this.#db.path === ':memory:') return;
    const version = () => num(this.#db.get('PRAGMA data_version')?.data_version);
    const loadedAt = () =>
      new Map(
        this.#db
          .all('SELECT dataset, loaded_at FROM dataset_sources')
          .map((r) => [str(r.dataset), num(r.loaded_at)]),
      );
    const timer = setInterval(() => {
      const watch = this.#watch;
      if (!watch || !this.#db.raw.isOpen) return;
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
        num(this.#db.get('SELECT loaded_at FROM dataset_sources WHERE dataset = ?', dataset)?.loaded_at),
      );
    for (const listener of this.#loadListeners) listener(dataset);
  }

  /** Deletes the rows of replaced and dead loads (row-loads.ts), one at a time per process. */
  #reap(): Promise<void> {
    this.#reaping ??= reapLoads(this.#db.raw, this.#db.write).finally(() => {
      this.#reaping = null;
    });
    return this.#reaping;
  }

  async datasetSource(
    dataset: string,
  ): Promise<{ source: RowSource; rows: number; loadedAt: number } | null> {
    const row = this.#db.get('SELECT * FROM dataset_sources WHERE dataset = ?', dataset);
    return row
      ? { source: str(row.source) as RowSource, rows: num(row.row_count), loadedAt: num(row.loaded_at) }
      : null;
  }

  layoutOf(dataset: string): readonly string[] {
    return this.#layouts.get(dataset) ?? [];
  }

  async syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }> {
    this.#layouts = new Map(layouts);
    // Rows a killed load left: deleted in slices meanwhile, not before the start.
    this.#reap().catch(() => {});
    const rekeyed: string[] = [];
    for (const row of this.#db.all('SELECT dataset, entity_fields FROM dataset_sources')) {
      const dataset = str(row.dataset);
      const layout = this.layoutOf(dataset);
      if (optStr(row.entity_fields) === layoutText(layout)) continue;
      this.#db.tx(() => rekey(this.#db.raw, dataset, layout));
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
    const upsert = new Upsert(this.#db.raw, dataset, timeField, this.layoutOf(dataset), csvColumns, options);
    if (ended) {
      const result = this.#db.write(() => {
        const runId = startLoad(this.#db.raw, dataset, upsert.key, run);
        upsert.begin(runId, true);
        for (const row of head) upsert.put(row);
        return upsert.swap(null);
      });
      this.#loaded(dataset);
      return result;
    }
    await this.#reap();
    const db = this.#db.raw;
    const key = newRowsKey(dataset);
    upsert.key = key;
    const runId = this.#db.write(() => startLoad(db, dataset, key, run));
    let done: ImportRun;
    try {
      const from = this.#db.write(() => upsert.begin(runId, false));
      await sliced(this.#db.write, () => upsert.copy());
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
        await sliced(this.#db.write, () => {
          const row = batch[i++];
          if (row !== undefined) upsert.put(row);
          return i >= batch.length;
        });
      }
      done = this.#db.write(() => upsert.swap(from));
    } catch (error) {
      this.#db.write(() => failLoad(db, dataset, key, runId, (error as Error).message));
      await this.#reap();
      throw error;
    }
    this.#loaded(dataset);
    await this.#reap();
    return done;
  }

  /** Stops the watch of other processes' loads. */
  close(): void {
    if (this.#watch) clearInterval(this.#watch.timer);
    this.#watch = null;
  }
}
