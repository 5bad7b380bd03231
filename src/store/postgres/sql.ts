/** The SQL a PostgreSQL load or page is built of: index walks, key expressions, COPY cells. */
import type pg from 'pg';
import type { RowQuery } from '../port.ts';
import { entityKeyColumns, layoutText, type ScanPlan } from '../row-scan.ts';
import { rowLimit } from '../rows.ts';

/** The most one load's COPY may take before the client gives its connection up. */
export const COPY_TIMEOUT_MS = 6 * 3_600_000;

/** The channel a load NOTIFYs with its dataset's key as it commits (onLoaded). */
export const LOADED_CHANNEL = 'tmd_dataset_loaded';

/** Rows per INSERT of a load: one statement's arrays stay a few MB. */
export const LOAD_BATCH_ROWS = 5000;

const COPY_SPECIAL = /[\\\t\n\r]/;

/** Text as a cell in COPY's text format: backslash, tab and line ends escaped (most text has none). */
export function copyText(value: string): string {
  if (!COPY_SPECIAL.test(value)) return value;
  return value.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

/** Binds a value: its placeholder ($n) in `values`. */
export function bindOf(values: unknown[], value: unknown): string {
  values.push(value);
  return `$${values.length}`;
}

/**
 * `cols` of the rows the plan's index yields in the query's order, `limit` of them from `offset` ($1 is
 * the dataset). One key walks its index and stops; several keys are one walk each under a MergeAppend,
 * which reads each only as far as the merge takes it.
 */
export function walkSql(
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
export function keyExprs(json: string, entityFields: readonly string[], values: unknown[]): string[] {
  return entityKeyColumns.map((_, slot) => {
    const field = entityFields[slot];
    if (field === undefined) return 'NULL::text';
    const name = bindOf(values, field);
    // Text as itself, numbers and booleans as their JSON text (the json type keeps it as written).
    return `CASE json_typeof(${json} -> ${name}) WHEN 'string' THEN ${json} ->> ${name}
      WHEN 'number' THEN (${json} -> ${name})::text WHEN 'boolean' THEN (${json} -> ${name})::text END`;
  });
}

/**
 * Sets a dataset's key columns for `entityFields` from its stored rows in `table` (its partition, null
 * when it has none); the caller gives the partition the key indexes of the layout (keyIndexes).
 */
export async function rekey(
  tx: pg.PoolClient,
  dataset: string,
  table: string | null,
  entityFields: readonly string[],
): Promise<void> {
  if (table !== null) {
    const values: unknown[] = [];
    const sets = keyExprs('data', entityFields, values).map(
      (expr, slot) => `${entityKeyColumns[slot]} = ${expr}`,
    );
    await tx.query(`UPDATE ${table} SET ${sets.join(', ')}`, values);
  }
  await tx.query('UPDATE dataset_sources SET entity_fields = $2 WHERE dataset = $1', [
    dataset,
    layoutText(entityFields),
  ]);
}
