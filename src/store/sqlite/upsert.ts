/** Upserts by natural key on SQLite, and the statements a load ends with. */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { csvColumnsKey, csvRecord } from '../../catalog/csv.ts';
import { AppError } from '../../errors.ts';
import type { ImportRun, KeyedRow } from '../import-port.ts';
import { importRunFrom } from '../import-rows.ts';
import type { RowSource } from '../port.ts';
import { entityKeyColumns, layoutText, rowKeys } from '../row-scan.ts';
import { num, optNum, optStr, str } from '../rows.ts';
import type { DbRow } from './db.ts';
import { liveKey, retire, swapRun } from './row-loads.ts';

const KEY_LIST = entityKeyColumns.join(', ');
const KEY_MARKS = entityKeyColumns.map(() => '?').join(', ');
export const INSERT_DATASET_ROW = `INSERT INTO dataset_rows (dataset, id, t, data, csv, ${KEY_LIST}) VALUES (?, ?, ?, ?, ?, ${KEY_MARKS})`;

/**
 * Sets a dataset's key columns from its stored JSON, as rowKeys does from a row, and records the layout
 * they follow; in the caller's transaction.
 */
export function rekey(db: DatabaseSync, dataset: string, entityFields: readonly string[]): void {
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
export function finishLoad(
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
export const WATCH_MS = 250;

/** Rows an upsert takes in one transaction, in place; more are written beside the live rows. */
export const IN_PLACE_ROWS = 2_000;
/** Rows copied per statement when an upsert starts beside the live rows. */
const COPY_CHUNK = 500;

/**
 * One upsert's statements: in place on the live key (one transaction), or on a new key that the live
 * rows are first copied under (`copy`, in slices) and that `swap` makes live.
 */
export class Upsert {
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
