/** The steps of an upsert by natural key on PostgreSQL, in the load's transaction (PgLoads.upsertRowsStream). */
import type pg from 'pg';
import { csvRecord } from '../../catalog/csv.ts';
import type { KeyedRow } from '../import-port.ts';
import { entityKeyColumns, layoutText } from '../row-scan.ts';
import { type DbRow, optNum, optStr, str } from '../rows.ts';
import { bindOf, rekey } from './sql.ts';

/**
 * Readies a dataset for an upsert: sample rows deleted, rows re-keyed to the layout, and rows a
 * replacing load wrote given their natural key. Returns the dataset's source record as it was.
 */
export async function prepareUpsert(
  tx: pg.PoolClient,
  { dataset, table }: { dataset: string; table: string },
  layout: readonly string[],
  naturalKey: readonly string[] | undefined,
): Promise<DbRow | undefined> {
  const present = await tx.query(
    'SELECT source, loaded_at, entity_fields FROM dataset_sources WHERE dataset = $1',
    [dataset],
  );
  const before = present.rows[0] as DbRow | undefined;
  if (before && str(before.source) === 'sample') await tx.query(`DELETE FROM ${table}`);
  else if (before && optStr(before.entity_fields) !== layoutText(layout))
    await rekey(tx, dataset, table, layout);
  if (before && str(before.source) === 'import' && naturalKey) {
    // Rows a replacing load wrote have no natural key yet: given one here, once (a key two of them
    // share stays on the first), so that this import replaces them rather than adding them again.
    const values: unknown[] = [dataset];
    const parts = naturalKey.map((f) => `coalesce((data -> ${bindOf(values, f)})::text, 'null')`);
    await tx.query(
      `UPDATE ${table} r SET nk = x.nk
         FROM (SELECT DISTINCT ON (k.nk) k.t, k.id, k.nk
                 FROM (SELECT t, id, 'g:[' || concat_ws(',', ${parts.join(', ')}) || ']' AS nk
                         FROM ${table} WHERE dataset = $1 AND nk IS NULL) k
                WHERE NOT EXISTS (SELECT 1 FROM ${table} e WHERE e.nk = k.nk)
                ORDER BY k.nk, k.id) x
        WHERE r.id = x.id`,
      values,
    );
  }
  return before;
}

/** Where an upsert writes: its dataset and partition, run, first new id, and the key expressions of its layout. */
export interface UpsertTarget {
  dataset: string;
  table: string;
  timeField: string;
  runId: number;
  base: number;
  csvColumns: readonly string[] | undefined;
  keys: readonly string[];
  keyValues: readonly unknown[];
}

/**
 * Writes one slice of distinct keys: `written` rows new or changed, `replaced` of them changed,
 * `stored` rows the statement wrote (new ids start at `base`).
 */
export async function upsertSlice(
  tx: pg.PoolClient,
  slice: readonly KeyedRow[],
  target: UpsertTarget,
): Promise<{ written: number; replaced: number; stored: number }> {
  const { dataset, table, timeField, runId, base, csvColumns } = target;
  let written = 0;
  let replaced = 0;
  // What the keys hold now: a key an earlier batch of this import wrote is written again, not
  // counted again; a row stored with the same values is left as it is (its provenance kept).
  const present = await tx.query(
    `SELECT nk, import_id, data::text AS d FROM ${table} WHERE nk = ANY($1::text[])`,
    [slice.map(({ key }) => key)],
  );
  const stored = new Map(present.rows.map((r) => [str(r.nk), r]));
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
  if (changing.length === 0) return { written, replaced, stored: 0 };
  // A replaced row keeps its id; new ones take ids after the dataset's last.
  await tx.query(
    `INSERT INTO ${table} (dataset, id, t, data, csv, nk, import_id, ${entityKeyColumns.join(', ')})
     SELECT $1, $2 + x.n, x.t, x.j, x.c, x.k, $3, ${target.keys.join(', ')}
       FROM (SELECT u.t, u.d::json AS j, u.c, u.k, u.n
               FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS u(t, d, c, k, n)) x
     ON CONFLICT (nk) WHERE nk IS NOT NULL
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
      ...target.keyValues.slice(7),
    ],
  );
  return { written, replaced, stored: changing.length };
}
