/**
 * The SQL of a page of dataset rows on SQLite (the plan is row-scan.ts's). Shared by the serving
 * connection and the read workers, which run the reads that check rows one by one.
 */
import type { SQLInputValue, StatementSync } from 'node:sqlite';
import type { RowQuery } from '../../catalog/types.ts';
import { SCAN_CAP, type ScanPlan } from '../row-scan.ts';
import { rowLimit } from '../rows.ts';

export interface Sql {
  sql: string;
  params: SQLInputValue[];
}

/** What a page row is read as: [id, t, data, import_id, csv]. */
export const ROW_COLUMNS = 'id, t, data, import_id, csv';

/** A checked row count written into the SQL (SQLite re-prepares a statement whose LIMIT is bound). */
const literal = (n: number) => String(rowLimit(n));

/**
 * A filter on the stored JSON. The field name is bound as a JSON path, never spliced into SQL. Text
 * values compare with the JSON text (a boolean as true/false); numbers as doubles, as PostgreSQL's
 * float8 and JavaScript read them. The cheap test comes first: the value's type is looked at only on
 * rows whose value matched, so a scan that finds nothing extracts one value per row.
 */
function jsonFilter(field: string, values: string[] | number[]): Sql {
  const marks = values.map(() => '?').join(', ');
  const path = `$."${field}"`;
  if (typeof values[0] === 'number')
    return {
      sql: `(CAST(data ->> ? AS REAL) IN (${marks}) AND json_type(data, ?) IN ('integer', 'real'))`,
      params: [path, ...values, path],
    };
  // ->> gives a JSON true as 1: booleans are told apart by their type, and only looked for when asked.
  const booleans = (values as string[]).filter((v) => v === 'true' || v === 'false');
  const text = `(CAST(data ->> ? AS TEXT) IN (${marks}) AND json_type(data, ?) NOT IN ('true', 'false'))`;
  if (booleans.length === 0) return { sql: text, params: [path, ...values, path] };
  return {
    sql: `(${text} OR json_type(data, ?) IN (${booleans.map(() => '?').join(', ')}))`,
    params: [path, ...values, path, path, ...booleans],
  };
}

/**
 * The key a dataset's live rows are stored under, inside SQL (`?` is the dataset): resolved by the
 * statement that reads the rows, so a load swapped in meanwhile is seen whole or not at all
 * (row-loads.ts).
 */
export const LIVE_KEY = '(SELECT coalesce(rows_key, dataset) FROM dataset_sources WHERE dataset = ?)';

/** The WHERE of one walk along the time index or one key of a key column's index. */
function walkWhere(q: RowQuery, column: string | null, key: string | null): Sql {
  const where = [`dataset = ${LIVE_KEY}`];
  const params: SQLInputValue[] = [q.dataset];
  if (column !== null) {
    where.push(`${column} = ?`);
    params.push(key);
  }
  if (q.from !== undefined) {
    where.push('t >= ?');
    params.push(q.from);
  }
  if (q.toExclusive !== undefined) {
    where.push('t < ?');
    params.push(q.toExclusive);
  }
  if (q.after) {
    where.push(q.descending ? '(t, id) < (?, ?)' : '(t, id) > (?, ?)');
    params.push(q.after.t, q.after.id);
  }
  return { sql: where.join(' AND '), params };
}

/**
 * `cols` of the rows the plan's index yields in the query's order, `limit` of them from `offset`. One
 * key walks its index and stops; several keys are one walk each, merged in order by a compound SELECT
 * (SQLite merges ordered arms as co-routines: each arm reads only as far as the merge takes it). `cols`
 * must name t and id, which the compound orders by.
 */
export function walk(q: RowQuery, plan: ScanPlan, cols: string, limit: number, offset = 0): Sql {
  const direction = q.descending ? 'DESC' : 'ASC';
  const order = `ORDER BY t ${direction}, id ${direction}`;
  const window = `LIMIT ${literal(limit)}${offset > 0 ? ` OFFSET ${literal(offset)}` : ''}`;
  const index = plan.index;
  if (index === null || index.keys.length === 1) {
    const where = walkWhere(q, index?.column ?? null, index?.keys[0] ?? null);
    const by = index ? ` INDEXED BY dataset_rows_${index.column}` : '';
    return {
      sql: `SELECT ${cols} FROM dataset_rows${by} WHERE ${where.sql} ${order} ${window}`,
      params: where.params,
    };
  }
  // The compound's ORDER BY is pushed into each arm, which its index serves without sorting; the
  // merge then stops at the compound's LIMIT.
  const params: SQLInputValue[] = [];
  const arms = index.keys.map((key) => {
    const where = walkWhere(q, index.column, key);
    params.push(...where.params);
    return `SELECT ${cols} FROM dataset_rows INDEXED BY dataset_rows_${index.column} WHERE ${where.sql}`;
  });
  return { sql: `${arms.join(' UNION ALL ')} ${order} ${window}`, params };
}

/** The checks of a capped scan, on the columns `walk` selected for it. */
function residual(plan: ScanPlan): Sql {
  const where: string[] = [];
  const params: SQLInputValue[] = [];
  for (const { column, keys } of plan.keyed) {
    where.push(`${column} IN (${keys.map(() => '?').join(', ')})`);
    params.push(...keys);
  }
  for (const { field, values } of plan.json) {
    const filter = jsonFilter(field, values);
    where.push(filter.sql);
    params.push(...filter.params);
  }
  return { sql: where.join(' AND '), params };
}

/**
 * A read that checks rows one by one, as statements: `hits`, the first limit + 1 matching rows among the
 * first SCAN_CAP the index yields; `upTo`, how many rows the walk examined up to a position (two more
 * parameters: t, id); `examined`, how many it yields at all (at most SCAN_CAP); `last`, the SCAN_CAP-th.
 */
export interface ScanJob {
  limit: number;
  descending: boolean;
  hits: Sql;
  upTo: Sql;
  examined: Sql;
  last: Sql;
  /** With csvColumns: the dataset whose csv_columns tells whether the stored lines count. */
  csv?: { dataset: string; columns: string };
}

export function scanJob(q: RowQuery, plan: ScanPlan): ScanJob {
  const cols = [ROW_COLUMNS, ...plan.keyed.map((f) => f.column)].join(', ');
  const source = walk(q, plan, cols, SCAN_CAP);
  const check = residual(plan);
  const keyset = walk(q, plan, 't, id', SCAN_CAP);
  const job: ScanJob = {
    limit: rowLimit(q.limit),
    descending: q.descending,
    hits: {
      sql: `SELECT ${ROW_COLUMNS} FROM (${source.sql}) WHERE ${check.sql} LIMIT ${literal(q.limit + 1)}`,
      params: [...source.params, ...check.params],
    },
    upTo: {
      sql: `SELECT count(*) FROM (${keyset.sql}) WHERE (t, id) ${q.descending ? '>=' : '<='} (?, ?)`,
      params: keyset.params,
    },
    examined: { sql: `SELECT count(*) FROM (${keyset.sql})`, params: keyset.params },
    last: walk(q, plan, 't, id', 1, SCAN_CAP - 1),
  };
  if (q.csvColumns !== undefined) job.csv = { dataset: q.dataset, columns: q.csvColumns };
  return job;
}

export interface ScanResult {
  /** Rows as [id, t, data, import_id, csv], csv null unless the stored lines count. */
  rows: unknown[][];
  next: { t: string; id: number } | null;
  examined: number;
}

/**
 * Runs a scan job; the caller holds one read transaction around it. `prepare` returns statements that
 * read rows as arrays.
 */
export function runScan(prepare: (sql: string) => StatementSync, job: ScanJob): ScanResult {
  if (job.limit === 0) return { rows: [], next: null, examined: 0 };
  let csvCounts = false;
  if (job.csv) {
    const [columns] = (prepare('SELECT csv_columns FROM dataset_sources WHERE dataset = ?').get(
      job.csv.dataset,
    ) ?? []) as unknown as unknown[];
    csvCounts = columns === job.csv.columns;
  }
  const rows = prepare(job.hits.sql).all(...job.hits.params) as unknown as unknown[][];
  for (const row of rows) if (!csvCounts) row[4] = null;
  if (rows.length > job.limit) {
    const probe = rows[job.limit] as unknown[];
    const [examined] = prepare(job.upTo.sql).get(
      ...job.upTo.params,
      probe[1] as string,
      probe[0] as number,
    ) as unknown as [number];
    rows.length = job.limit;
    const last = rows.at(-1) as unknown[];
    return { rows, next: { t: String(last[1]), id: Number(last[0]) }, examined: Number(examined) };
  }
  const [examined] = prepare(job.examined.sql).get(...job.examined.params) as unknown as [number];
  if (Number(examined) < SCAN_CAP) return { rows, next: null, examined: Number(examined) };
  // The scan stopped at its cap: the next page starts after the last row it examined.
  const [t, id] = prepare(job.last.sql).get(...job.last.params) as unknown as [string, number];
  return { rows, next: { t: String(t), id: Number(id) }, examined: SCAN_CAP };
}
