/**
 * Datasets served from the operator's own PostgreSQL tables (config `external_datasets`): reads walk the
 * relation's own indexes through a read-only role; every other dataset goes to the wrapped store. Checked
 * once at start, so a misdeclared relation stops the service with a message instead of failing reads.
 */
import pg from 'pg';
import { csvColumnsKey, csvRecord } from '../../catalog/csv.ts';
import type { Row, RowQuery } from '../../catalog/types.ts';
import { AppError } from '../../errors.ts';
import type { DatasetSpan, ImportRun, ImportStore } from '../import-port.ts';
import type { Datasets, PageQuery, RowsPage, StoredPage, StoredRow } from '../port.ts';
import { SCAN_CAP } from '../row-scan.ts';
import { type DbRow, num, pageOfRows, rowLimit, str } from '../rows.ts';

/** One dataset as the configuration declares it (`external_datasets`), with its catalog fields. */
export interface ExternalDeclaration {
  dataset: string;
  /** PostgreSQL URL of a role that may only read the relation. */
  url: string;
  /** `schema.name` or `name`: a table, partitioned table, materialized view or view. */
  relation: string;
  /** A unique integer column: pages run in (time, id) order. */
  idColumn: string;
  /** Field -> column; a field left out is read from the column of its own name. */
  columns: Readonly<Record<string, string>>;
  /** What readers are told the rows are (the page's provenance). */
  provenance: string;
  /** A view's indexes cannot be looked up: the operator vouches that its columns are indexed. */
  assumeIndexed: boolean;
  /** The catalog's fields in order, its time field and its entity fields. */
  fields: readonly string[];
  timeField: string;
  entityFields: readonly string[];
}

/** The SQL of one declared dataset, fixed at start. */
interface Relation {
  decl: ExternalDeclaration;
  pool: pg.Pool;
  /** Quoted relation and columns: identifiers from config, quoted once here. */
  from: string;
  id: string;
  t: string;
  /** field -> quoted column. */
  column: ReadonlyMap<string, string>;
  /** Per field: the column as selected (its text) and how that text becomes the field's JSON. */
  select: readonly string[];
  encode: readonly ((text: string) => string)[];
  /** `"field":` per field, in order. */
  names: readonly string[];
  csvKey: string;
}

/** Stops reads that would hold a connection of the operator's database for long. */
const STATEMENT_TIMEOUT_MS = 2_000;
const CONNECT_TIMEOUT_MS = 2_000;

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function quoteRelation(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? quoteIdent(name) : `${quoteIdent(name.slice(0, dot))}.${quoteIdent(name.slice(dot + 1))}`;
}

/** The relation can be read, has every column, and walks an index for time and each entity field. */
async function check(pool: pg.Pool, decl: ExternalDeclaration): Promise<Relation> {
  const where = `external dataset ${decl.dataset} (${decl.relation})`;
  const fail = (message: string): never => {
    throw new Error(`${where}: ${message}`);
  };
  let found: DbRow | undefined;
  try {
    found = (
      await pool.query<DbRow>(
        `SELECT c.oid, c.relkind, current_user AS role,
                has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') AS writes,
                has_table_privilege(c.oid, 'SELECT') AS reads
           FROM pg_class c WHERE c.oid = to_regclass($1)`,
        [quoteRelation(decl.relation)],
      )
    ).rows[0];
  } catch (error) {
    fail(`cannot query its database: ${(error as Error).message}`);
  }
  if (!found) return fail('no such table or view');
  if (found.reads !== true) fail(`role ${str(found.role)} may not read it`);
  if (found.writes === true)
    fail(`role ${str(found.role)} may write to it: serve it through a role that may only read`);
  const attributes = (
    await pool.query<DbRow>(
      `SELECT attnum, attname, atttypid::int AS oid, format_type(atttypid, atttypmod) AS type
         FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped`,
      [found.oid],
    )
  ).rows;
  const attnum = new Map(attributes.map((a) => [str(a.attname), num(a.attnum)]));
  const typeOf = new Map(attributes.map((a) => [str(a.attname), str(a.type)]));
  const oidOf = new Map(attributes.map((a) => [str(a.attname), num(a.oid)]));
  const columnOf = (field: string) => decl.columns[field] ?? field;
  for (const field of Object.keys(decl.columns))
    if (!decl.fields.includes(field)) fail(`columns maps "${field}", which is not a field of the dataset`);
  for (const field of decl.fields)
    if (!attnum.has(columnOf(field))) fail(`no column "${columnOf(field)}" for field ${field}`);
  if (!attnum.has(decl.idColumn)) fail(`no id column "${decl.idColumn}"`);
  if (!['smallint', 'integer', 'bigint'].includes(typeOf.get(decl.idColumn) ?? ''))
    fail(`id column "${decl.idColumn}" is ${typeOf.get(decl.idColumn)}: it must be an integer column`);
  if (decl.fields.length > 50) fail('more than 50 fields');
  const indexed = ['r', 'p', 'm'].includes(str(found.relkind));
  if (!indexed && !decl.assumeIndexed)
    fail('a view has no indexes to check: declare its table, or set assume_indexed once its columns are');
  if (indexed) {
    const leading = new Set(
      (
        await pool.query<DbRow>('SELECT indkey[0] AS lead FROM pg_index WHERE indrelid = $1 AND indisvalid', [
          found.oid,
        ])
      ).rows.map((r) => num(r.lead)),
    );
    for (const field of [decl.timeField, ...decl.entityFields]) {
      const column = columnOf(field);
      if (!leading.has(attnum.get(column) as number))
        fail(
          `column "${column}" (field ${field}) leads no index: create one, e.g. CREATE INDEX ON ${decl.relation} (${column}${
            field === decl.timeField ? '' : `, ${columnOf(decl.timeField)}`
          }, ${decl.idColumn})`,
        );
    }
  }
  const column = new Map(decl.fields.map((f) => [f, quoteIdent(columnOf(f))]));
  const t = column.get(decl.timeField) as string;
  const id = quoteIdent(decl.idColumn);
  const encoded = decl.fields.map((f) => encoderOf(oidOf.get(columnOf(f)) ?? 0, column.get(f) as string));
  return {
    decl,
    pool,
    from: quoteRelation(decl.relation),
    id,
    t,
    column,
    select: encoded.map((e) => e.select),
    encode: encoded.map((e) => e.encode),
    names: decl.fields.map((f) => `${JSON.stringify(f)}:`),
    csvKey: csvColumnsKey(decl.fields),
  };
}

const NUMBER_TYPES = new Set([20, 21, 23, 26, 700, 701, 1700]);
const TEXT_TYPES = new Set([18, 19, 25, 1042, 1043]);
const JSON_TYPES = new Set([114, 3802]);
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const asIs = (text: string) => text;

/**
 * How a column of this type is selected and written as JSON, as json_build_object would write it: the
 * row's JSON is built here from the columns' text, which costs the operator's database a fraction of
 * building it there. Types without a plain text form (dates, times, arrays) are converted by to_json.
 */
function encoderOf(oid: number, column: string): { select: string; encode: (text: string) => string } {
  if (NUMBER_TYPES.has(oid))
    return { select: column, encode: (text) => (JSON_NUMBER.test(text) ? text : JSON.stringify(text)) };
  if (oid === 16) return { select: column, encode: (text) => (text === 't' ? 'true' : 'false') };
  if (TEXT_TYPES.has(oid)) return { select: column, encode: (text) => JSON.stringify(text) };
  if (JSON_TYPES.has(oid)) return { select: column, encode: asIs };
  return { select: `to_json(${column})::text`, encode: asIs };
}

/** Every column as the text PostgreSQL sends: the page's JSON is written from it. */
const RAW_TEXT = { getTypeParser: () => asIs } as unknown as pg.CustomTypesConfig;

/** A walked row's JSON: its fields' columns follow id, t, ok, tv and iv. */
function rowJson(relation: Relation, row: readonly (string | null)[]): string {
  let json = '{';
  for (let n = 0; n < relation.names.length; n++) {
    const text = row[n + 5];
    json += `${n === 0 ? '' : ','}${relation.names[n]}${text == null ? 'null' : (relation.encode[n] as (t: string) => string)(text)}`;
  }
  return `${json}}`;
}

/** Binds a value: its placeholder ($n) in `values`. */
function bindOf(values: unknown[], value: unknown): string {
  values.push(value);
  return `$${values.length}`;
}

/**
 * A connection failure, a timeout or a vanished relation: the operator's database cannot serve the read
 * now. A value the column's type refuses is the client's (400). Nothing is charged for either.
 */
function translate(decl: ExternalDeclaration, error: unknown): unknown {
  if (error instanceof AppError) return error;
  const code = String((error as { code?: unknown }).code ?? '');
  if (code.startsWith('22'))
    return new AppError(
      'invalid_request',
      `A filter or bound does not fit a column of ${decl.dataset}: ${(error as Error).message}`,
    );
  return new AppError(
    'dataset_unavailable',
    `${decl.dataset} is served from the operator's database, which cannot answer now; nothing was charged. Retry later.`,
    { retry_after: 5 },
    { 'retry-after': '5' },
  );
}

export class ExternalDatasets implements Datasets {
  readonly #inner: Datasets;
  readonly #relations: ReadonlyMap<string, Relation>;
  readonly #pools: pg.Pool[];
  readonly #closeInner: boolean;

  private constructor(
    inner: Datasets,
    relations: Map<string, Relation>,
    pools: pg.Pool[],
    closeInner: boolean,
  ) {
    this.#inner = inner;
    this.#relations = relations;
    this.#pools = pools;
    this.#closeInner = closeInner;
  }

  /**
   * Checks every declaration (throws, naming the first problem) and wraps `inner`; close() closes
   * `inner` too when `closeInner` (not when it is also the ledger's store, closed with it).
   */
  static async open(
    inner: Datasets,
    declarations: readonly ExternalDeclaration[],
    closeInner: boolean,
  ): Promise<ExternalDatasets> {
    const pools = new Map<string, pg.Pool>();
    const relations = new Map<string, Relation>();
    try {
      for (const decl of declarations) {
        let pool = pools.get(decl.url);
        if (!pool) {
          pool = new pg.Pool({
            connectionString: decl.url,
            max: 4,
            connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
            options: `-c default_transaction_read_only=on -c statement_timeout=${STATEMENT_TIMEOUT_MS}`,
            application_name: 'token-metered-data-external',
          });
          // An idle connection the server closed is dropped by the pool; the next read opens another.
          pool.on('error', () => {});
          pools.set(decl.url, pool);
        }
        relations.set(decl.dataset, await check(pool, decl));
      }
    } catch (error) {
      await Promise.all([...pools.values()].map((p) => p.end()));
      throw error;
    }
    return new ExternalDatasets(inner, relations, [...pools.values()], closeInner);
  }

  #refuseWrite(dataset: string): void {
    if (this.#relations.has(dataset))
      throw new AppError(
        'conflict',
        `${dataset} is served from the operator's own table: load rows into that table, not through the service.`,
      );
  }

  async migrate(): Promise<void> {
    await this.#inner.migrate();
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.map((p) => p.end()));
    if (this.#closeInner) await this.#inner.close();
  }

  async ping(): Promise<void> {
    await this.#inner.ping();
  }

  loadRows(...args: Parameters<Datasets['loadRows']>): ReturnType<Datasets['loadRows']> {
    // A sample load finds an external dataset already served; an import is refused.
    if (this.#relations.has(args[0]) && args[3] === 'sample') return Promise.resolve(false);
    this.#refuseWrite(args[0]);
    return this.#inner.loadRows(...args);
  }

  loadRowsStream(...args: Parameters<Datasets['loadRowsStream']>): ReturnType<Datasets['loadRowsStream']> {
    this.#refuseWrite(args[0]);
    return this.#inner.loadRowsStream(...args);
  }

  upsertRows(...args: Parameters<ImportStore['upsertRows']>): ReturnType<ImportStore['upsertRows']> {
    this.#refuseWrite(args[0]);
    return this.#inner.upsertRows(...args);
  }

  upsertRowsStream(
    ...args: Parameters<ImportStore['upsertRowsStream']>
  ): ReturnType<ImportStore['upsertRowsStream']> {
    this.#refuseWrite(args[0]);
    return this.#inner.upsertRowsStream(...args);
  }

  collectorState(source: string): ReturnType<Datasets['collectorState']> {
    return this.#inner.collectorState(source);
  }

  listCollectorStates(): ReturnType<Datasets['listCollectorStates']> {
    return this.#inner.listCollectorStates();
  }

  saveCollectorState(
    ...args: Parameters<Datasets['saveCollectorState']>
  ): ReturnType<Datasets['saveCollectorState']> {
    return this.#inner.saveCollectorState(...args);
  }

  claimCollectorSlot(source: string, slot: number): Promise<boolean> {
    return this.#inner.claimCollectorSlot(source, slot);
  }

  recordCollectionRun(
    ...args: Parameters<Datasets['recordCollectionRun']>
  ): ReturnType<Datasets['recordCollectionRun']> {
    return this.#inner.recordCollectionRun(...args);
  }

  listCollectionRuns(limit: number): ReturnType<Datasets['listCollectionRuns']> {
    return this.#inner.listCollectionRuns(limit);
  }

  listImportRuns(filter: { dataset?: string; ids?: readonly number[] }, limit: number): Promise<ImportRun[]> {
    return this.#inner.listImportRuns(filter, limit);
  }

  onLoaded(listener: (dataset: string) => void): Promise<void> {
    return this.#inner.onLoaded(listener);
  }

  syncLayouts(layouts: ReadonlyMap<string, readonly string[]>): Promise<{ rekeyed: string[] }> {
    return this.#inner.syncLayouts(layouts);
  }

  /** Query shapes seen, SQL text -> prepared statement name: planned once per connection, not per read. */
  readonly #statements = new Map<string, string>();

  #prepared(text: string, values: unknown[]): pg.QueryConfig {
    let name = this.#statements.get(text);
    if (name === undefined) {
      // Bounded: a read's SQL varies with the number of values of each filter.
      if (this.#statements.size >= 500) return { text, values };
      name = `external_${this.#statements.size}`;
      this.#statements.set(text, name);
    }
    return { name, text, values };
  }

  async datasetSource(dataset: string): ReturnType<Datasets['datasetSource']> {
    const relation = this.#relations.get(dataset);
    if (!relation) return this.#inner.datasetSource(dataset);
    return { source: 'external', rows: await this.#estimate(relation), loadedAt: 0 };
  }

  async datasetSpan(dataset: string): Promise<DatasetSpan | null> {
    const relation = this.#relations.get(dataset);
    if (!relation) return this.#inner.datasetSpan(dataset);
    const { decl, t, from } = relation;
    try {
      // Two index probes, not an aggregate over the table.
      const span = (
        await relation.pool.query<DbRow>(
          `SELECT (SELECT to_json(${t}) #>> '{}' FROM ${from} WHERE ${t} IS NOT NULL ORDER BY ${t} LIMIT 1) AS first,
                  (SELECT to_json(${t}) #>> '{}' FROM ${from} WHERE ${t} IS NOT NULL ORDER BY ${t} DESC LIMIT 1) AS last`,
        )
      ).rows[0];
      return {
        source: 'external',
        origin: decl.provenance,
        rows: await this.#estimate(relation),
        firstT: span?.first == null ? null : str(span.first),
        lastT: span?.last == null ? null : str(span.last),
        loadedAt: 0,
      };
    } catch (error) {
      throw translate(decl, error);
    }
  }

  /** The planner's row count (the table's statistics), not a count over the table. */
  async #estimate(relation: Relation): Promise<number> {
    try {
      const found = (
        await relation.pool.query<DbRow>('SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)', [
          relation.from,
        ])
      ).rows[0];
      return Math.max(0, Math.round(num(found?.reltuples ?? 0)));
    } catch (error) {
      throw translate(relation.decl, error);
    }
  }

  queryPage(q: PageQuery): Promise<StoredPage> {
    if (!this.#relations.has(q.dataset)) return this.#inner.queryPage(q);
    return pageOfRows(q, (query) => this.queryRows(query));
  }

  async queryRows(q: RowQuery): Promise<RowsPage> {
    const relation = this.#relations.get(q.dataset);
    if (!relation) return this.#inner.queryRows(q);
    rowLimit(q.limit);
    try {
      return await this.#query(relation, q);
    } catch (error) {
      throw translate(relation.decl, error);
    }
  }

  /**
   * The walk of the first filtered entity field's index (one ordered walk per value, merged), or of the
   * time index. Filters on other fields are checked on at most SCAN_CAP walked rows, as for stored data.
   */
  async #query(relation: Relation, q: RowQuery): Promise<RowsPage> {
    const { decl, column, t, id, from } = relation;
    const values: unknown[] = [];
    const walkField = decl.entityFields.find((f) => (q.filters[f]?.length ?? 0) > 0);
    const others = Object.entries(q.filters).filter(([f]) => f !== walkField);
    const capped = others.length > 0;
    const bounds: string[] = [];
    if (q.from !== undefined) bounds.push(`${t} >= ${bindOf(values, q.from)}`);
    if (q.toExclusive !== undefined) bounds.push(`${t} < ${bindOf(values, q.toExclusive)}`);
    if (q.after)
      bounds.push(
        `(${t}, ${id}) ${q.descending ? '<' : '>'} (${bindOf(values, q.after.t)}, ${bindOf(values, q.after.id)})`,
      );
    const checks = others.map(
      ([f, accepted]) =>
        `${column.get(f) ?? 'NULL'} = ANY(${bindOf(values, (accepted as (string | number)[]).map(String))})`,
    );
    const ok = checks.length > 0 ? checks.join(' AND ') : 'true';
    const limit = capped ? SCAN_CAP : q.limit + 1;
    const direction = q.descending ? 'DESC' : 'ASC';
    const order = `ORDER BY ${t} ${direction}, ${id} ${direction}`;
    const arm = (key: string | null) => {
      const where = [`${t} IS NOT NULL`, ...bounds];
      if (walkField !== undefined && key !== null)
        where.push(`${column.get(walkField)} = ${bindOf(values, key)}`);
      // The columns only for rows the checks keep: a capped walk looks at up to SCAN_CAP rows.
      const columns = relation.select.map(
        (c, n) => `${capped ? `CASE WHEN (${ok}) THEN ${c} END` : c} AS c${n}`,
      );
      return `SELECT ${id} AS id, to_json(${t}) #>> '{}' AS t, ${capped ? `(${ok})` : 'true'} AS ok,
          ${t} AS tv, ${id} AS iv, ${columns.join(', ')} FROM ${from}
        WHERE ${where.join(' AND ')} ${order} LIMIT ${limit}`;
    };
    const keys = walkField === undefined ? [null] : [...new Set((q.filters[walkField] ?? []).map(String))];
    const sql =
      keys.length === 1
        ? arm(keys[0] ?? null)
        : `SELECT * FROM (${keys.map((k) => `(${arm(k)})`).join(' UNION ALL ')}) m
            ORDER BY tv ${direction}, iv ${direction} LIMIT ${limit}`;
    const walked = (
      await relation.pool.query<unknown[]>({
        ...this.#prepared(sql, values),
        rowMode: 'array',
        types: RAW_TEXT,
      })
    ).rows as (string | null)[][];
    const hits: (string | null)[][] = [];
    let examined = 0;
    for (const row of walked) {
      examined++;
      if (row[2] === 't') hits.push(row);
      if (hits.length > q.limit) break;
    }
    let next: RowsPage['next'] = null;
    if (hits.length > q.limit) {
      hits.length = q.limit;
      const last = hits.at(-1);
      if (last) next = { t: str(last[1]), id: num(last[0]) };
    } else if (capped && walked.length >= SCAN_CAP) {
      const last = walked.at(-1) as (string | null)[];
      next = { t: str(last[1]), id: num(last[0]) };
    }
    const withCsv = q.csvColumns !== undefined && q.csvColumns === relation.csvKey;
    const rows = hits.map((r) => {
      const row: StoredRow = { id: num(r[0]), t: str(r[1]), json: rowJson(relation, r), importId: null };
      if (q.csvColumns !== undefined)
        row.csv = withCsv ? csvRecord(JSON.parse(row.json) as Row, decl.fields) : null;
      return row;
    });
    return { rows, next, examined: q.limit > 0 ? examined : 0 };
  }
}
